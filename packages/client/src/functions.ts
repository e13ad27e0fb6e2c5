// Edge functions: invoke (sync, async, dry run) with any project key or end-user token (the publishable key and
// end-users only functions marked public), and, with the secret key, definitions, secrets, executions, hooks,
// webhook receivers, cron jobs, e-mail templates and SMTP settings, replay and diff of executions, and outbound
// event subscriptions with their delivery logs.
import type { Http } from './http.ts';
import type {
  BodyOf,
  CronJob,
  EdgeFunction,
  EmailConfig,
  EmailTemplate,
  EventDelivery,
  EventDeliveryDetail,
  EventSubscription,
  Execution,
  ExecutionDiff,
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
    /**
     * Re-runs a finished execution from `from_step` (default: where it failed, else the first step), reusing the
     * results it recorded for the earlier steps; answers the new execution (`trigger: "replay"`, `replay_of`).
     */
    replay: async (id: string, opts: BodyOf<'/edge/api/v1/executions/{id}/replay', 'post'> = {}): Promise<Execution> =>
      (
        await this.#http.request<{ execution: Execution }>(
          'POST',
          `${BASE}/executions/${encodeURIComponent(id)}/replay`,
          { body: opts ?? {} },
        )
      ).execution,
    /** What changed from execution `id` to `other`: input, output, status, error, duration, and step by step. */
    diff: async (id: string, other: string): Promise<ExecutionDiff> =>
      (
        await this.#http.request<{ diff: ExecutionDiff }>(
          'GET',
          `${BASE}/executions/${encodeURIComponent(id)}/diff/${encodeURIComponent(other)}`,
        )
      ).diff,
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

  /**
   * Outbound event subscriptions: URLs that get the project's events signed the Standard Webhooks way, with their
   * delivery logs. The signing `secret` is answered only by `create` and `rotateSecret`.
   */
  readonly eventSubscriptions = {
    list: async (): Promise<EventSubscription[]> =>
      (await this.#http.request<{ event_subscriptions: EventSubscription[] }>('GET', `${BASE}/event-subscriptions`))
        .event_subscriptions,
    get: async (id: string): Promise<EventSubscription> =>
      (
        await this.#http.request<{ event_subscription: EventSubscription }>(
          'GET',
          `${BASE}/event-subscriptions/${encodeURIComponent(id)}`,
        )
      ).event_subscription,
    create: async (sub: BodyOf<'/edge/api/v1/event-subscriptions', 'post'>): Promise<EventSubscription> =>
      (
        await this.#http.request<{ event_subscription: EventSubscription }>('POST', `${BASE}/event-subscriptions`, {
          body: sub,
        })
      ).event_subscription,
    update: async (
      id: string,
      change: BodyOf<'/edge/api/v1/event-subscriptions/{id}', 'put'>,
    ): Promise<EventSubscription> =>
      (
        await this.#http.request<{ event_subscription: EventSubscription }>(
          'PUT',
          `${BASE}/event-subscriptions/${encodeURIComponent(id)}`,
          { body: change },
        )
      ).event_subscription,
    remove: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/event-subscriptions/${encodeURIComponent(id)}`)),
    /** A new signing secret (yours, or a random one), answered once. */
    rotateSecret: async (id: string, secret?: string): Promise<EventSubscription> =>
      (
        await this.#http.request<{ event_subscription: EventSubscription }>(
          'POST',
          `${BASE}/event-subscriptions/${encodeURIComponent(id)}/rotate-secret`,
          { body: secret === undefined ? {} : { secret } },
        )
      ).event_subscription,
    /** Queues a `subscription.test` event to this subscription only; answers its delivery. */
    test: async (id: string): Promise<EventDelivery> =>
      (
        await this.#http.request<{ delivery: EventDelivery }>(
          'POST',
          `${BASE}/event-subscriptions/${encodeURIComponent(id)}/test`,
        )
      ).delivery,
    /** The delivery log, newest first. */
    deliveries: async (id: string, query: QueryOf<'/edge/api/v1/event-subscriptions/{id}/deliveries', 'get'> = {}) =>
      await this.#http.request<ResponseOf<'/edge/api/v1/event-subscriptions/{id}/deliveries', 'get'>>(
        'GET',
        `${BASE}/event-subscriptions/${encodeURIComponent(id)}/deliveries`,
        { query },
      ),
    /** One delivery with every attempt. */
    delivery: async (id: string, deliveryId: string): Promise<EventDeliveryDetail> =>
      (
        await this.#http.request<{ delivery: EventDeliveryDetail }>(
          'GET',
          `${BASE}/event-subscriptions/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}`,
        )
      ).delivery,
    /** Attempts a delivery again now (same `webhook-id`). */
    redeliver: async (id: string, deliveryId: string): Promise<EventDelivery> =>
      (
        await this.#http.request<{ delivery: EventDelivery }>(
          'POST',
          `${BASE}/event-subscriptions/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
        )
      ).delivery,
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
