// The operator's plans: list (with how many tenants are on each), create, edit (every limit, null = no limit),
// delete (never one in use), and the default plan for new tenants. Every change is audited in its transaction and
// broadcast (`plans.changed`): every process's plan reader empties at once, so a limit applies from the next request.
import { NO_LIMITS } from '../../../platform/plan-limits.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import { planId as parsePlanId } from '../../../platform/config.ts';
import { announceLocally, publishBroadcast } from '../../../platform/broadcast.ts';
import type { SqlExecutor } from '../../../platform/events.ts';
import { PlanEntity, type Plan } from '../entities/index.ts';
import { DEFAULT_PLAN_SETTING, type PlanService } from './plans.ts';
import { writeAudit, type OperatorRef } from './operator-audit.ts';
import { checkName } from './validation.ts';
import type { ServiceDeps } from './context.ts';

/**
 * Every limit of a plan: its column, and the smallest value it takes (`int`: whole numbers up to 2^31-1, `bigint`:
 * whole numbers up to 2^53-1, `positive`: any number above 0). 0 is allowed where it means "none" (no projects, no
 * uploads); 1 where 0 makes no sense (an interval, a connection budget).
 */
export const PLAN_LIMIT_FIELDS = {
  maxProjects: { column: 'max_projects', kind: 'int', min: 0 },
  maxStorageBytes: { column: 'max_storage_bytes', kind: 'bigint', min: 0 },
  maxUploadBytes: { column: 'max_upload_bytes', kind: 'bigint', min: 0 },
  maxDatabaseRows: { column: 'max_database_rows', kind: 'bigint', min: 0 },
  maxDatabaseBytes: { column: 'max_database_bytes', kind: 'bigint', min: 0 },
  maxFunctionInvocationsPerMonth: { column: 'max_function_invocations_per_month', kind: 'bigint', min: 0 },
  maxRequestsPerMinute: { column: 'max_requests_per_minute', kind: 'int', min: 0 },
  minCronIntervalSeconds: { column: 'min_cron_interval_seconds', kind: 'int', min: 1 },
  maxCronJobs: { column: 'max_cron_jobs', kind: 'int', min: 0 },
  maxConcurrentFunctionRuns: { column: 'max_concurrent_function_runs', kind: 'int', min: 0 },
  maxAsyncInvokesPerRun: { column: 'max_async_invokes_per_run', kind: 'int', min: 0 },
  maxQueuedFunctionRuns: { column: 'max_queued_function_runs', kind: 'int', min: 0 },
  maxRealtimeSubscribers: { column: 'max_realtime_subscribers', kind: 'int', min: 0 },
  maxPendingUploads: { column: 'max_pending_uploads', kind: 'int', min: 0 },
  maxDatabaseConnections: { column: 'max_database_connections', kind: 'int', min: 1 },
  databaseCpuSecondsPerMinute: { column: 'database_cpu_seconds_per_minute', kind: 'positive', min: 0 },
} as const satisfies Record<string, { column: string; kind: 'int' | 'bigint' | 'positive'; min: number }>;

type LimitField = keyof typeof PLAN_LIMIT_FIELDS;

/** A plan as the operator sees it. */
export type OperatorPlanView = { plan: Plan; tenantCount: number; isDefault: boolean };

export type PlanInput = {
  id?: unknown;
  name?: unknown;
  description?: unknown;
  priceCentsPerMonth?: unknown;
  sortOrder?: unknown;
  limits?: unknown;
};

const INT_MAX = 2 ** 31 - 1;
const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The limits of an input, checked: each a whole number ≥ its minimum (CPU seconds: above 0), or null for no limit. */
export function checkLimits(value: unknown): Partial<Record<LimitField, number | null>> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw errors.validation('limits', 'must be an object');
  const out: Partial<Record<LimitField, number | null>> = {};
  for (const [key, v] of Object.entries(value)) {
    const def = (PLAN_LIMIT_FIELDS as Record<string, (typeof PLAN_LIMIT_FIELDS)[LimitField]>)[key];
    const field = `limits.${snake(key)}`;
    if (!def)
      throw errors.validation(
        field,
        `unknown limit; the limits are ${Object.keys(PLAN_LIMIT_FIELDS).map(snake).join(', ')}`,
      );
    if (v === null) {
      out[key as LimitField] = null;
      continue;
    }
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw errors.validation(field, 'must be a number, or null for no limit');
    if (def.kind === 'positive') {
      if (v <= 0 || v > 86_400)
        throw errors.validation(field, 'must be above 0 (seconds per minute), or null for no limit');
    } else {
      const max = def.kind === 'int' ? INT_MAX : Number.MAX_SAFE_INTEGER;
      if (!Number.isInteger(v) || v < def.min || v > max)
        throw errors.validation(field, `must be a whole number from ${def.min} to ${max}, or null for no limit`);
    }
    out[key as LimitField] = v;
  }
  return out;
}

function checkDescription(value: unknown): string {
  if (typeof value !== 'string' || value.length > 1000)
    throw errors.validation('description', 'must be text of at most 1,000 characters');
  return value;
}

function checkPrice(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > INT_MAX)
    throw errors.validation('price_cents_per_month', 'must be a whole number of cents ≥ 0, or null for no price shown');
  return value;
}

/** Announces a change of plans to every process (in `tx`); `changed()` after commit tells this one at once. */
export async function publishPlansChanged(
  tx: SqlExecutor,
  change: { planId?: string; tenantId?: string; projectId?: string },
): Promise<void> {
  await publishBroadcast(tx, 'plans.changed', change);
}

export type OperatorPlanService = ReturnType<typeof createOperatorPlanService>;

/** Plans and the default plan, as the operator changes them. */
export function createOperatorPlanService({ db, plans }: Pick<ServiceDeps, 'db'> & { plans: PlanService }) {
  const changed = (change: { planId?: string; tenantId?: string; projectId?: string }) => {
    plans.invalidate();
    announceLocally('plans.changed', change);
  };

  async function tenantCounts(): Promise<Map<string, number>> {
    const rows = await db
      .em()
      .execute<{ plan_id: string; n: number }[]>('select plan_id, count(*)::int as n from tenants group by plan_id');
    return new Map(rows.map((r) => [r.plan_id, Number(r.n)]));
  }

  async function viewOf(id: string): Promise<OperatorPlanView> {
    plans.invalidate();
    const plan = await plans.get(id);
    const [row] = await db
      .em()
      .execute<{ n: number }[]>('select count(*)::int as n from tenants where plan_id = ?', [id]);
    return { plan, tenantCount: Number(row?.n ?? 0), isDefault: (await plans.defaultPlanId()) === id };
  }

  async function settings(): Promise<{ defaultPlan: string; defaultPlanSource: 'operator' | 'config' }> {
    const [row] = await db
      .em()
      .execute<{ value: unknown }[]>('select value from platform_settings where key = ?', [DEFAULT_PLAN_SETTING]);
    const defaultPlan = await plans.defaultPlanId();
    return {
      defaultPlan,
      defaultPlanSource: typeof row?.value === 'string' && row.value === defaultPlan ? 'operator' : 'config',
    };
  }

  return {
    /** Every plan, in the order the public list shows them. */
    async list(): Promise<OperatorPlanView[]> {
      plans.invalidate();
      const [all, counts, defaultId] = await Promise.all([plans.list(), tenantCounts(), plans.defaultPlanId()]);
      return all.map((plan) => ({ plan, tenantCount: counts.get(plan.id) ?? 0, isDefault: plan.id === defaultId }));
    },

    get: viewOf,

    /** A new plan; its limits default to none. CONFLICT when the id is taken. */
    async create(by: OperatorRef, input: PlanInput): Promise<OperatorPlanView> {
      if (typeof input.id !== 'string') throw errors.validation('id', 'is required');
      let id: string;
      try {
        id = parsePlanId(input.id);
      } catch {
        throw errors.validation(
          'id',
          'must be 1 to 40 lower case letters, digits and dashes, starting with a letter or digit',
        );
      }
      const name = checkName('name', input.name);
      const description =
        input.description === undefined || input.description === null ? '' : checkDescription(input.description);
      const price = input.priceCentsPerMonth === undefined ? null : checkPrice(input.priceCentsPerMonth);
      const limits = checkLimits(input.limits);
      await db.em().transactional(async (em) => {
        const [taken] = await em.execute<{ id: string }[]>('select id from plans where id = ? for update', [id]);
        if (taken) throw errors.conflict(`A plan with the id "${id}" exists`, { id });
        const [order] = await em.execute<{ n: number }[]>('select coalesce(max(sort_order), 0) + 1 as n from plans');
        const now = new Date();
        const plan = em.create(PlanEntity, {
          id,
          name,
          description,
          priceCentsPerMonth: price,
          sortOrder: Number(order?.n ?? 1),
          createdAt: now,
          updatedAt: now,
          ...NO_LIMITS,
          ...limits,
        });
        em.persist(plan);
        await em.flush();
        await writeAudit(em, by, 'plan.create', 'plan', id, {
          name,
          description,
          price_cents_per_month: price,
          limits: Object.fromEntries(Object.entries(limits).map(([k, v]) => [snake(k), v])),
        });
        await publishPlansChanged(em, { planId: id });
      });
      changed({ planId: id });
      return await viewOf(id);
    },

    /** Changes a plan: the fields given (limits partially; null = no limit). Applies at once to its tenants' projects. */
    async update(by: OperatorRef, id: string, input: PlanInput): Promise<OperatorPlanView> {
      const set: Record<string, unknown> = {};
      if (input.name !== undefined) set.name = checkName('name', input.name);
      if (input.description !== undefined)
        set.description = input.description === null ? '' : checkDescription(input.description);
      if (input.priceCentsPerMonth !== undefined) set.price_cents_per_month = checkPrice(input.priceCentsPerMonth);
      if (input.sortOrder !== undefined) {
        const v = input.sortOrder;
        if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) > INT_MAX)
          throw errors.validation('sort_order', 'must be a whole number');
        set.sort_order = v;
      }
      const limits = checkLimits(input.limits);
      for (const [k, v] of Object.entries(limits)) set[PLAN_LIMIT_FIELDS[k as LimitField].column] = v;
      await db.em().transactional(async (em) => {
        const [row] = await em.execute<{ id: string }[]>('select id from plans where id = ? for update', [id]);
        if (!row) throw errors.notFound('plan', id.slice(0, 100));
        const columns = Object.keys(set);
        if (columns.length > 0)
          await em.execute(
            `update plans set ${columns.map((c) => `${c} = ?`).join(', ')}, updated_at = now() where id = ?`,
            [...columns.map((c) => set[c]), id],
          );
        await writeAudit(em, by, 'plan.update', 'plan', id, set);
        await publishPlansChanged(em, { planId: id });
      });
      changed({ planId: id });
      return await viewOf(id);
    },

    /** Deletes a plan nobody is on and that is not the default (PLAN_IN_USE otherwise). */
    async remove(by: OperatorRef, id: string): Promise<void> {
      const defaultId = await plans.defaultPlanId();
      await db.em().transactional(async (em) => {
        const [row] = await em.execute<{ id: string }[]>('select id from plans where id = ? for update', [id]);
        if (!row) throw errors.notFound('plan', id.slice(0, 100));
        if (defaultId === id)
          throw new AppError(
            'PLAN_IN_USE',
            `The plan "${id}" is the default plan for new accounts: make another plan the default first (PUT /admin/api/v1/settings/default-plan)`,
            { plan_id: id, default: true },
          );
        const [used] = await em.execute<{ n: number }[]>('select count(*)::int as n from tenants where plan_id = ?', [
          id,
        ]);
        if (Number(used?.n ?? 0) > 0)
          throw new AppError(
            'PLAN_IN_USE',
            `${used!.n} account(s) are on the plan "${id}": move them to another plan first (PUT /admin/api/v1/tenants/:id/plan)`,
            { plan_id: id, tenant_count: Number(used!.n) },
          );
        await em.execute('delete from plans where id = ?', [id]);
        await writeAudit(em, by, 'plan.delete', 'plan', id, {});
        await publishPlansChanged(em, { planId: id });
      });
      changed({ planId: id });
    },

    settings,

    /** Makes `planId` the plan new accounts start on (kept in the platform database; wins over TESSERA_DEFAULT_PLAN). */
    async setDefaultPlan(by: OperatorRef, planId: unknown) {
      if (typeof planId !== 'string' || planId === '') throw errors.validation('plan_id', 'is required');
      await db.em().transactional(async (em) => {
        const [row] = await em.execute<{ id: string }[]>('select id from plans where id = ? for share', [planId]);
        if (!row) throw errors.notFound('plan', planId.slice(0, 100));
        await em.execute(
          `insert into platform_settings (key, value, updated_at, updated_by) values (?, ?::jsonb, now(), ?)
           on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
          [DEFAULT_PLAN_SETTING, JSON.stringify(planId), by.operator],
        );
        await writeAudit(em, by, 'settings.default_plan', 'settings', DEFAULT_PLAN_SETTING, { plan_id: planId });
      });
      plans.invalidate();
      return await settings();
    },
  };
}
