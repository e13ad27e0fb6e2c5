// Edge functions: invoke (sync, async, dry run) with any project key or end-user token (the publishable key and
// end-users only functions marked public), and, with the secret key, definitions, secrets, executions, hooks,
// webhook receivers, cron jobs, e-mail templates and SMTP settings.
import type { Http } from './http.ts';
import type {
  BodyOf,
  CronJob,
  EdgeFunction,
  EmailConfig,
  EmailTemplate,
  Execution,
  ExecutionEvent,
  FunctionSecret,
  Hook,
  QueryOf,
  ResponseOf,
  WebhookReceiver,
} from './types.ts';

const BASE = '/edge/api/v1';

/** The answer of an invoke: the function's output with the status it chose, and the execution's id. */
export type InvokeResult<T = unknown> = { status: number; data: T; executionId: string | undefined };

export type FunctionInput = BodyOf<'/edge/api/v1/functions', 'post'>;

export class Functions {
  readonly #http: Http;
  constructor(http: Http) {
    this.#http = http;
  }

  /**
   * Runs a function with `input` as its `input.body`. `async`: queued, answers 202 with `{execution_id}`; `dryRun`:
   * no side effects, answers the step trace. A function's own `{"error", "status"}` answer is a TesseraError with that status.
   */
  async invoke<T = unknown>(
    name: string,
    input?: unknown,
    opts: { async?: boolean; dryRun?: boolean; signal?: AbortSignal } = {},
  ): Promise<InvokeResult<T>> {
    const res = await this.#http.call<T>('POST', `${BASE}/invoke/${encodeURIComponent(name)}`, {
      body: input === undefined ? null : input,
      query: { async: opts.async || undefined, dry_run: opts.dryRun || undefined },
      signal: opts.signal,
    });
    return {
      status: res.status,
      data: res.data,
      executionId:
        res.headers.get('x-execution-id') ||
        (res.data as { execution_id?: string } | undefined)?.execution_id ||
        undefined,
    };
  }

  async list(query: { first?: number; after?: string } = {}) {
    return await this.#http.request<ResponseOf<'/edge/api/v1/functions', 'get'>>('GET', `${BASE}/functions`, { query });
  }
  async get(id: string): Promise<EdgeFunction> {
    return (await this.#http.request<{ function: EdgeFunction }>('GET', `${BASE}/functions/${encodeURIComponent(id)}`))
      .function;
  }
  async create(def: FunctionInput): Promise<EdgeFunction> {
    return (await this.#http.request<{ function: EdgeFunction }>('POST', `${BASE}/functions`, { body: def })).function;
  }
  async update(id: string, def: FunctionInput): Promise<EdgeFunction> {
    return (
      await this.#http.request<{ function: EdgeFunction }>('PUT', `${BASE}/functions/${encodeURIComponent(id)}`, {
        body: def,
      })
    ).function;
  }
  async remove(id: string): Promise<void> {
    await this.#http.request('DELETE', `${BASE}/functions/${encodeURIComponent(id)}`);
  }
  /** Creates the function, or replaces the one of the same name (deploys). */
  async deploy(def: FunctionInput): Promise<{ function: EdgeFunction; created: boolean }> {
    const existing = await this.findByName(def.name);
    if (existing) return { function: await this.update(existing.id, def), created: false };
    return { function: await this.create(def), created: true };
  }
  /** A function by name, or undefined. */
  async findByName(name: string): Promise<EdgeFunction | undefined> {
    let after: string | undefined;
    for (;;) {
      const page = await this.list({ first: 100, after });
      const found = page.functions.find((f) => f.name === name);
      if (found) return found;
      if (!page.next_cursor) return undefined;
      after = page.next_cursor;
    }
  }

  /** Secrets (values are never answered). */
  readonly secrets = {
    list: async (): Promise<FunctionSecret[]> =>
      (await this.#http.request<{ secrets: FunctionSecret[] }>('GET', `${BASE}/secrets`)).secrets,
    set: async (name: string, value: string): Promise<FunctionSecret> =>
      (await this.#http.request<{ secret: FunctionSecret }>('POST', `${BASE}/secrets`, { body: { name, value } }))
        .secret,
    unset: async (name: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/secrets`, { query: { name } })),
  };

  /** Executions, newest first, with their step logs. */
  readonly executions = {
    list: async (query: QueryOf<'/edge/api/v1/executions', 'get'> = {}) =>
      await this.#http.request<ResponseOf<'/edge/api/v1/executions', 'get'>>('GET', `${BASE}/executions`, { query }),
    get: async (id: string): Promise<Execution> =>
      (await this.#http.request<{ execution: Execution }>('GET', `${BASE}/executions/${encodeURIComponent(id)}`))
        .execution,
    events: async (id: string): Promise<ExecutionEvent[]> =>
      (
        await this.#http.request<{ events: ExecutionEvent[] }>(
          'GET',
          `${BASE}/executions/${encodeURIComponent(id)}/events`,
        )
      ).events,
    stats: async (query: { since?: string; until?: string } = {}) =>
      await this.#http.request<ResponseOf<'/edge/api/v1/stats', 'get'>>('GET', `${BASE}/stats`, { query }),
  };

  /** Database hooks: a function run before or after writes to a table. */
  readonly hooks = {
    list: async (): Promise<Hook[]> => (await this.#http.request<{ hooks: Hook[] }>('GET', `${BASE}/hooks`)).hooks,
    create: async (hook: BodyOf<'/edge/api/v1/hooks', 'post'>): Promise<Hook> =>
      (await this.#http.request<{ hook: Hook }>('POST', `${BASE}/hooks`, { body: hook })).hook,
    remove: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/hooks`, { query: { id } })),
  };

  /** Webhook receivers: public URLs (`url`) that run a function. */
  readonly webhooks = {
    list: async (): Promise<WebhookReceiver[]> =>
      (await this.#http.request<{ webhooks: WebhookReceiver[] }>('GET', `${BASE}/webhooks`)).webhooks,
    create: async (receiver: BodyOf<'/edge/api/v1/webhooks', 'post'>): Promise<WebhookReceiver> =>
      (await this.#http.request<{ webhook: WebhookReceiver }>('POST', `${BASE}/webhooks`, { body: receiver })).webhook,
    remove: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/webhooks`, { query: { id } })),
  };

  /** Cron jobs, each with its `next_runs` in its own time zone. */
  readonly cron = {
    list: async (): Promise<CronJob[]> =>
      (await this.#http.request<{ cron_jobs: CronJob[] }>('GET', `${BASE}/cron`)).cron_jobs,
    create: async (job: BodyOf<'/edge/api/v1/cron', 'post'>): Promise<CronJob> =>
      (await this.#http.request<{ cron_job: CronJob }>('POST', `${BASE}/cron`, { body: job })).cron_job,
    update: async (id: string, change: BodyOf<'/edge/api/v1/cron/{id}', 'put'>): Promise<CronJob> =>
      (
        await this.#http.request<{ cron_job: CronJob }>('PUT', `${BASE}/cron/${encodeURIComponent(id)}`, {
          body: change,
        })
      ).cron_job,
    remove: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/cron`, { query: { id } })),
  };

  /** E-mail templates (used by Email steps) and their preview. */
  readonly emailTemplates = {
    list: async (): Promise<EmailTemplate[]> =>
      (await this.#http.request<{ email_templates: EmailTemplate[] }>('GET', `${BASE}/email-templates`))
        .email_templates,
    create: async (t: BodyOf<'/edge/api/v1/email-templates', 'post'>): Promise<EmailTemplate> =>
      (await this.#http.request<{ email_template: EmailTemplate }>('POST', `${BASE}/email-templates`, { body: t }))
        .email_template,
    update: async (id: string, change: BodyOf<'/edge/api/v1/email-templates', 'put'>): Promise<EmailTemplate> =>
      (
        await this.#http.request<{ email_template: EmailTemplate }>('PUT', `${BASE}/email-templates`, {
          query: { id },
          body: change,
        })
      ).email_template,
    remove: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/email-templates`, { query: { id } })),
    /** Renders a template with variables, sending nothing. */
    preview: async (id: string, variables: unknown = {}) =>
      (
        await this.#http.request<ResponseOf<'/edge/api/v1/email-templates/{id}/preview', 'post'>>(
          'POST',
          `${BASE}/email-templates/${encodeURIComponent(id)}/preview`,
          { body: { variables } },
        )
      ).preview,
  };

  /** The project's SMTP settings (the password is stored encrypted and never answered). */
  readonly emailConfig = {
    get: async (): Promise<EmailConfig | null> =>
      (await this.#http.request<{ email_config: EmailConfig | null }>('GET', `${BASE}/email-config`)).email_config,
    set: async (config: BodyOf<'/edge/api/v1/email-config', 'post'>): Promise<EmailConfig> =>
      (await this.#http.request<{ email_config: EmailConfig }>('POST', `${BASE}/email-config`, { body: config }))
        .email_config,
    remove: async (): Promise<void> => void (await this.#http.request('DELETE', `${BASE}/email-config`)),
    /** Sends a test mail now through the settings. */
    test: async (to: string) =>
      await this.#http.request<ResponseOf<'/edge/api/v1/email-config/test', 'post'>>(
        'POST',
        `${BASE}/email-config/test`,
        { body: { to } },
      ),
  };
}
