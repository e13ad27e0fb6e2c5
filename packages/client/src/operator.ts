// The operator's admin API (`/admin/api/v1`): plans and their limits, the default plan, tenants and projects (plan,
// suspension, usage), the audit of every operator action, and operator keys. It takes an operator key (`top_...`),
// which opens this API only and nothing else; a tenant's token or a project key is refused by it.
//
//   const op = createOperatorClient({ url: 'https://api.example.com', operatorKey: process.env.TESSERA_OPERATOR_KEY });
//   await op.admin.plans.update('free', { limits: { max_cron_jobs: 10, max_database_rows: null } });
import { Http } from './http.ts';
import type { ResponseOf } from './types.ts';

const BASE = '/admin/api/v1';
const seg = (s: string) => encodeURIComponent(s);

/** The limits of a plan, snake_case as in the REST API; null = no limit. */
export type OperatorPlanLimits = { [K in PlanLimitKey]: number | null };

/** How a limit is counted: a number of things, bytes, or seconds. */
export type PlanLimitUnit = 'count' | 'bytes' | 'seconds';

/** Every limit of a plan: its REST name, a label for people and its unit (one list for the CLI and the console). */
export const PLAN_LIMITS = [
  { key: 'max_projects', label: 'Projects per tenant', unit: 'count' },
  { key: 'max_requests_per_minute', label: 'Requests per minute', unit: 'count' },
  { key: 'max_storage_bytes', label: 'Storage', unit: 'bytes' },
  { key: 'max_upload_bytes', label: 'Largest upload', unit: 'bytes' },
  { key: 'max_pending_uploads', label: 'Pending uploads', unit: 'count' },
  { key: 'max_database_rows', label: 'Database rows', unit: 'count' },
  { key: 'max_database_bytes', label: 'Database size', unit: 'bytes' },
  { key: 'max_database_connections', label: 'Database connections', unit: 'count' },
  { key: 'database_cpu_seconds_per_minute', label: 'Database CPU per minute', unit: 'seconds' },
  { key: 'max_function_invocations_per_month', label: 'Function runs per month', unit: 'count' },
  { key: 'max_concurrent_function_runs', label: 'Concurrent function runs', unit: 'count' },
  { key: 'max_async_invokes_per_run', label: 'Async invokes per run', unit: 'count' },
  { key: 'max_queued_function_runs', label: 'Queued function runs', unit: 'count' },
  { key: 'max_cron_jobs', label: 'Cron jobs', unit: 'count' },
  { key: 'min_cron_interval_seconds', label: 'Shortest cron interval', unit: 'seconds' },
  { key: 'max_realtime_subscribers', label: 'Realtime subscribers', unit: 'count' },
] as const satisfies readonly { key: string; label: string; unit: PlanLimitUnit }[];

export type PlanLimitKey = (typeof PLAN_LIMITS)[number]['key'];

/** Whether `key` names a limit of a plan. */
export function isPlanLimitKey(key: string): key is PlanLimitKey {
  return PLAN_LIMITS.some((l) => l.key === key);
}

/** A plan as the operator sees it: limits, price (null: none shown), how many tenants are on it, whether it is the default. */
export type OperatorPlan = ResponseOf<'/admin/api/v1/plans', 'get'>['plans'][number];

/**
 * A new plan (a limit left out or null has no limit; no price: none shown). Written by hand: the generated body type
 * cannot say that null is allowed.
 */
export type PlanInput = {
  id: string;
  name: string;
  description?: string;
  price_cents_per_month?: number | null;
  limits?: Partial<OperatorPlanLimits>;
};

/** A change to a plan: only what is given changes; a null limit is no limit, a null price shows none. */
export type PlanChange = {
  name?: string;
  description?: string;
  price_cents_per_month?: number | null;
  sort_order?: number;
  limits?: Partial<OperatorPlanLimits>;
};

export type OperatorSettings = ResponseOf<'/admin/api/v1/settings', 'get'>;

/**
 * A tenant as the operator sees it: plan, project count, suspension, and the usage of all its projects together
 * (`storage_usage`, `database_usage`, `function_usage`; zeros without projects).
 */
export type OperatorTenant = ResponseOf<'/admin/api/v1/tenants/{id}', 'get'>;

/** A project as the operator sees it (owner, plan, suspension, storage, database and functions usage). */
export type OperatorProject = ResponseOf<'/admin/api/v1/projects/{id}', 'get'>;

/** A project's file storage: objects and bytes stored, uploads pending, the plan's quota (null: none). */
export type StorageUsage = OperatorProject['storage_usage'];

/** A tenant's file storage, all its projects together: objects and bytes stored, uploads pending. */
export type TenantStorageUsage = OperatorTenant['storage_usage'];

/** The storage a project (or a tenant, all its projects) uses (undefined when the answer has none). */
export function storageUsageOf<
  T extends Pick<OperatorProject, 'storage_usage'> | Pick<OperatorTenant, 'storage_usage'>,
>(p: T): T['storage_usage'] | undefined {
  const u = p.storage_usage as { bytes?: unknown } | null | undefined;
  return u && typeof u.bytes === 'number' ? p.storage_usage : undefined;
}

/** A project's database: live rows and bytes, and the plan's limits on them (null: none). */
export type OperatorDatabaseUsage = OperatorProject['database_usage'];

/**
 * A tenant's databases, all its projects together: live rows and bytes, and how many could not be measured now
 * (`unmeasured`: their server unreachable; left out of the sums).
 */
export type TenantDatabaseUsage = OperatorTenant['database_usage'];

/** The database a project (or a tenant, all its projects) uses (undefined when the answer has none). */
export function databaseUsageOf<
  T extends Pick<OperatorProject, 'database_usage'> | Pick<OperatorTenant, 'database_usage'>,
>(p: T): T['database_usage'] | undefined {
  const u = p.database_usage as { rows?: unknown } | null | undefined;
  return u && typeof u.rows === 'number' ? p.database_usage : undefined;
}

/** A project's (or a tenant's, all its projects together) functions: runs this month, runs executing now, cron jobs. */
export type FunctionUsage = OperatorProject['function_usage'];

/** The functions usage of a project or a tenant (undefined when the answer has none). */
export function functionUsageOf(
  p: Pick<OperatorProject, 'function_usage'> | Pick<OperatorTenant, 'function_usage'>,
): FunctionUsage | undefined {
  const u = p.function_usage as FunctionUsage | null | undefined;
  return u && typeof u.runs_this_month === 'number' ? u : undefined;
}

export type AuditEntry = ResponseOf<'/admin/api/v1/audit', 'get'>['entries'][number];

export type OperatorKey = ResponseOf<'/admin/api/v1/operator-keys', 'get'>['operator_keys'][number];

/** A new operator key: `key` is shown this once. */
export type NewOperatorKey = ResponseOf<'/admin/api/v1/operator-keys', 'post'>;

export type Page = { first?: number; after?: string };

/** An online move of a project's database to another project server (issue 29): queued, running, done or failed. */
export type ProjectMove = ResponseOf<'/admin/api/v1/moves/{id}', 'get'>['move'];

/** A project server as the operator sees it: state, weight, projects, its URL without the password, live health. */
export type ProjectServer = ResponseOf<'/admin/api/v1/servers/{id}', 'get'>;

/** A project server's state: `active` takes new projects; `draining` and `read-only` take none. */
export const SERVER_STATES = ['active', 'draining', 'read-only'] as const;
export type ServerState = (typeof SERVER_STATES)[number];

/** A server to register: `url` of a role with CREATEDB and CREATEROLE (or a superuser), its maintenance database. */
export type ServerInput = { id: string; url: string; weight?: number; state?: ServerState };

/** A change to a server: only what is given changes. */
export type ServerChange = { state?: ServerState; weight?: number; url?: string };

export class OperatorAdmin {
  readonly #http: Http;
  constructor(http: Http) {
    this.#http = http;
  }

  readonly plans = {
    /** Every plan, with its tenant count and whether it is the default. */
    list: async (): Promise<OperatorPlan[]> =>
      (await this.#http.request<{ plans: OperatorPlan[] }>('GET', `${BASE}/plans`)).plans,
    create: async (plan: PlanInput): Promise<OperatorPlan> =>
      await this.#http.request<OperatorPlan>('POST', `${BASE}/plans`, { body: plan }),
    /** Changes a plan; `limits` is partial, a null limit means no limit. Applies at once on the whole install. */
    update: async (id: string, change: PlanChange): Promise<OperatorPlan> =>
      await this.#http.request<OperatorPlan>('PATCH', `${BASE}/plans/${seg(id)}`, { body: change }),
    /** Deletes a plan no tenant is on and that is not the default (else 409 PLAN_IN_USE). */
    remove: async (id: string): Promise<void> => void (await this.#http.request('DELETE', `${BASE}/plans/${seg(id)}`)),
  };

  readonly settings = {
    get: async (): Promise<OperatorSettings> => await this.#http.request<OperatorSettings>('GET', `${BASE}/settings`),
    /** The plan new tenants start on. */
    setDefaultPlan: async (planId: string): Promise<OperatorSettings> =>
      await this.#http.request<OperatorSettings>('PUT', `${BASE}/settings/default-plan`, { body: { plan_id: planId } }),
  };

  readonly tenants = {
    /** One page of tenants (`search`: e-mail or name). */
    list: async (query: Page & { search?: string } = {}) =>
      await this.#http.request<{ tenants: OperatorTenant[]; next_cursor: string | null }>('GET', `${BASE}/tenants`, {
        query,
      }),
    get: async (id: string): Promise<OperatorTenant> =>
      await this.#http.request<OperatorTenant>('GET', `${BASE}/tenants/${seg(id)}`),
    /** Moves a tenant to another plan (projects it already has past the new plan's count are kept). */
    setPlan: async (id: string, planId: string): Promise<OperatorTenant> =>
      await this.#http.request<OperatorTenant>('PUT', `${BASE}/tenants/${seg(id)}/plan`, { body: { plan_id: planId } }),
    /** Suspends a tenant: its sign-in, its token and every call to its projects answer 403 (data kept). */
    suspend: async (id: string, reason?: string): Promise<OperatorTenant> =>
      await this.#http.request<OperatorTenant>('POST', `${BASE}/tenants/${seg(id)}/suspend`, {
        body: reason === undefined ? {} : { reason },
      }),
    resume: async (id: string): Promise<OperatorTenant> =>
      await this.#http.request<OperatorTenant>('POST', `${BASE}/tenants/${seg(id)}/resume`),
  };

  readonly projects = {
    /** One page of projects (`search`: name or id; `tenant_id`: one tenant's). */
    list: async (query: Page & { search?: string; tenant_id?: string } = {}) =>
      await this.#http.request<{ projects: OperatorProject[]; next_cursor: string | null }>('GET', `${BASE}/projects`, {
        query,
      }),
    get: async (id: string): Promise<OperatorProject> =>
      await this.#http.request<OperatorProject>('GET', `${BASE}/projects/${seg(id)}`),
    /** Suspends a project: every call for it answers 403 PROJECT_SUSPENDED, its background work stops (data kept). */
    suspend: async (id: string, reason?: string): Promise<OperatorProject> =>
      await this.#http.request<OperatorProject>('POST', `${BASE}/projects/${seg(id)}/suspend`, {
        body: reason === undefined ? {} : { reason },
      }),
    resume: async (id: string): Promise<OperatorProject> =>
      await this.#http.request<OperatorProject>('POST', `${BASE}/projects/${seg(id)}/resume`),
  };

  /** Online moves of project databases between project servers, and drains of a server. */
  readonly moves = {
    /** Queues a move of the project's database to `server` (an active project server); follow it with `get`. */
    start: async (projectId: string, server: string): Promise<ProjectMove> =>
      (
        await this.#http.request<{ move: ProjectMove }>('POST', `${BASE}/projects/${seg(projectId)}/move`, {
          body: { server },
        })
      ).move,
    get: async (id: string): Promise<ProjectMove> =>
      (await this.#http.request<{ move: ProjectMove }>('GET', `${BASE}/moves/${seg(id)}`)).move,
    /** The latest moves, newest first: all, one project's (`project_id`), or one drain's (`drain_of`). */
    list: async (query: { project_id?: string; drain_of?: string; first?: number } = {}): Promise<ProjectMove[]> =>
      (await this.#http.request<{ moves: ProjectMove[] }>('GET', `${BASE}/moves`, { query })).moves,
    /** Marks the server draining and moves every project off it, a few at a time (follow with `list({drain_of})`). */
    drain: async (serverId: string): Promise<{ server: string; state: string }> =>
      (
        await this.#http.request<{ drain: { server: string; state: string } }>(
          'POST',
          `${BASE}/servers/${seg(serverId)}/drain`,
        )
      ).drain,
  };

  readonly servers = {
    /** Every project server (the default first), with its projects and its health measured now. */
    list: async (): Promise<ProjectServer[]> =>
      (await this.#http.request<{ servers: ProjectServer[] }>('GET', `${BASE}/servers`)).servers,
    get: async (id: string): Promise<ProjectServer> =>
      await this.#http.request<ProjectServer>('GET', `${BASE}/servers/${seg(id)}`),
    /** Registers a server (400 naming `url` when it cannot be reached or its role may not create databases and roles). */
    add: async (server: ServerInput): Promise<ProjectServer> =>
      await this.#http.request<ProjectServer>('POST', `${BASE}/servers`, { body: server }),
    /** Changes a server's state, weight or URL; every process follows at once. */
    update: async (id: string, change: ServerChange): Promise<ProjectServer> =>
      await this.#http.request<ProjectServer>('PATCH', `${BASE}/servers/${seg(id)}`, { body: change }),
    /** Removes a server that holds no project (409 SERVER_IN_USE otherwise; the default server stays). */
    remove: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/servers/${seg(id)}`)),
  };

  readonly audit = {
    /** One page of the audit, newest first (`action` e.g. `plan.update`; `target_id`). */
    list: async (query: Page & { action?: string; target_id?: string } = {}) =>
      await this.#http.request<{ entries: AuditEntry[]; next_cursor: string | null }>('GET', `${BASE}/audit`, {
        query,
      }),
  };

  readonly operatorKeys = {
    list: async (): Promise<OperatorKey[]> =>
      (await this.#http.request<{ operator_keys: OperatorKey[] }>('GET', `${BASE}/operator-keys`)).operator_keys,
    /** A new operator key; the answer's `key` is shown this once. */
    create: async (name: string): Promise<NewOperatorKey> =>
      await this.#http.request<NewOperatorKey>('POST', `${BASE}/operator-keys`, { body: { name } }),
    /** Revokes a key at once in every process (revoking the key in use is allowed: the next call is refused). */
    revoke: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/operator-keys/${seg(id)}`)),
  };
}

export type OperatorClientOptions = {
  /** Tessera's public address. */
  url: string;
  /** The operator key (`top_...`), sent as the bearer token. */
  operatorKey: string;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
};

/** A client for the operator of an install: no project key, no tenant session, only the operator key. */
export class OperatorClient {
  readonly http: Http;
  readonly admin: OperatorAdmin;
  constructor(opts: OperatorClientOptions) {
    this.http = new Http({ url: opts.url, fetch: opts.fetch, headers: opts.headers });
    const key = opts.operatorKey;
    this.http.token = async () => key;
    this.admin = new OperatorAdmin(this.http);
  }
}

/** Creates a client of the operator's admin API. */
export function createOperatorClient(opts: OperatorClientOptions): OperatorClient {
  return new OperatorClient(opts);
}
