// Deliveries of outbound events (subscriptions: event-subscriptions.ts). Each event becomes one delivery per
// subscription that wants it: a row holding the exact JSON body `{"type", "timestamp", "data"}` and a message id,
// then scheduler jobs (Agenda, so deliveries survive a restart) that POST it to the subscription's URL, signed the
// Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`). A 2xx
// answer ends it; anything else (another status, a time-out, a refused address) is retried with exponential backoff
// and jitter (TESSERA_EVENT_RETRY_BASE_MS doubling, at most 4 h, ±25%) until the retry window
// (TESSERA_EVENT_RETRY_WINDOW, a day) would close: then the delivery is `dead` (dead-lettered) until redelivered by
// hand, which opens a new window. Every attempt is logged (status, latency, an excerpt of the answer, the error).
// Outbound requests go through the HTTP step's guard (outbound.ts): no loopback, private or link-local address unless
// the operator allows it, the checked address pinned, no redirects followed. At least once: an event may be delivered
// twice (a receiver dedupes by `webhook-id`, which stays the same across a delivery's attempts).
import crypto from 'node:crypto';
import { backoffMs } from '../../../platform/backoff.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import { errors } from '../../../platform/errors.ts';
import type { PlatformEvent } from '../../../platform/events.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Scheduler } from '../../../platform/scheduler.ts';
import { createBatcher } from './batching.ts';
import type { EventSubscriptionService } from './event-subscriptions.ts';
import { PLATFORM_EVENT_OF, ROW_EVENT_OF, TEST_EVENT } from './event-subscriptions.ts';
import type { HookEvent } from './hooks.ts';
import { guardedRequest, OutboundRefused, type OutboundResponse } from './outbound.ts';
import { signStandardWebhook } from './signatures.ts';
import type { Sql } from './sql.ts';
import { checkPageSize } from './validation.ts';
import { decodeTimeCursor, timePage } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';

export const DELIVERY_JOB = 'functions.event.deliver';
export type DeliveryJob = { deliveryIds: string[] };
export const DELIVERY_STATUSES = ['pending', 'delivering', 'succeeded', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** The longest wait between two attempts. */
export const RETRY_CAP_MS = 4 * 3600_000;
/** First attempts queued together under one job; attempts one job makes side by side. */
const JOB_BATCH = 25;
const PARALLEL = 10;
const EXCERPT_MAX = 1024;
/** Finished deliveries (succeeded, dead) are kept this long in the log. */
const KEEP_DAYS = 30;
const USER_AGENT = 'Tessera-Webhooks/1';

/** The wait after a delivery's `attempt`-th failed attempt (of its window): base × 2^(attempt-1), at most 4 h, ±25%. */
export function retryDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  return backoffMs(attempt, { baseMs, maxMs: RETRY_CAP_MS, jitter: 0.25, random });
}

export type DeliveryAttempt = {
  attempt: number;
  at: Date;
  statusCode: number | null;
  latencyMs: number | null;
  responseExcerpt: string | null;
  error: string | null;
};

export type EventDelivery = {
  id: string;
  subscriptionId: string;
  projectId: string;
  messageId: string;
  event: string;
  payload: unknown;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  lastResponse: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  /** Every attempt, oldest first (read when asked for). */
  attemptLog?: DeliveryAttempt[];
};

type Row = Record<string, unknown>;
const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const toDelivery = (r: Row): EventDelivery => ({
  id: r.id as string,
  subscriptionId: r.subscription_id as string,
  projectId: r.project_id as string,
  messageId: r.message_id as string,
  event: r.event_type as string,
  payload: JSON.parse(r.payload as string) as unknown,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: r.status === 'pending' ? date(r.next_attempt_at) : null,
  lastAttemptAt: date(r.last_attempt_at),
  lastStatusCode: num(r.last_status_code),
  lastLatencyMs: num(r.last_latency_ms),
  lastError: (r.last_error as string | null) ?? null,
  lastResponse: (r.last_response as string | null) ?? null,
  createdAt: new Date(r.created_at as string),
  deliveredAt: date(r.delivered_at),
});

/** One event to deliver: its type, its data (snake_case, `project_id` included), when it happened. */
export type NewEvent = {
  projectId: string;
  type: string;
  data: Record<string, unknown>;
  at?: Date;
  dedupeKey?: string | null;
};

/** A short, printable excerpt of an answer's body. */
function excerptOf(body: unknown): string | null {
  if (body === undefined || body === null || body === '') return null;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text.length > EXCERPT_MAX ? `${text.slice(0, EXCERPT_MAX)}…` : text;
}

export type EventDeliveryService = ReturnType<typeof createEventDeliveryService>;

/** Creates the delivery service. */
export function createEventDeliveryService(deps: {
  sql: Sql;
  box: SecretBox;
  scheduler: Scheduler;
  logger: Logger;
  subscriptions: EventSubscriptionService;
  allowPrivate: boolean;
  retryBaseMs: number;
  retryWindowMs: number;
  timeoutMs: number;
  /** The outbound request (tests may replace it); default: the HTTP step's guarded request. */
  request?: typeof guardedRequest;
}) {
  const { sql, box, scheduler, logger, subscriptions } = deps;
  const request = deps.request ?? guardedRequest;

  /** Queues jobs for new (or due) deliveries; a failure is logged: the sweep queues them again. */
  const schedule = async (ids: string[]): Promise<void> => {
    for (let i = 0; i < ids.length; i += JOB_BATCH) {
      try {
        await scheduler.enqueue<DeliveryJob>(DELIVERY_JOB, { deliveryIds: ids.slice(i, i + JOB_BATCH) });
      } catch (err) {
        logger.warn(
          { err: (err as Error).message, deliveries: ids.length },
          'event deliveries could not be queued now; the sweep will queue them',
        );
      }
    }
  };

  type NewRow = {
    id: string;
    subscription_id: string;
    project_id: string;
    message_id: string;
    event_type: string;
    payload: string;
    dedupe_key: string | null;
  };
  // Concurrent events (single-row writes arriving together) share one insert and one job: under load, one job per
  // delivery would spend the scheduler on bookkeeping. Each caller learns whether its own row was recorded (a
  // repeated dedupe key is not).
  const insertBatch = createBatcher<NewRow, boolean>(
    async (rows) => {
      const inserted = await sql.rows<{ id: string }>(
        `insert into event_deliveries (id, subscription_id, project_id, message_id, event_type, payload, dedupe_key, status, next_attempt_at, window_started_at, created_at)
         select r.id, r.subscription_id, r.project_id, r.message_id, r.event_type, r.payload, r.dedupe_key, 'pending', now(), now(), now()
         from jsonb_to_recordset(?::jsonb) as r(id uuid, subscription_id uuid, project_id uuid, message_id text, event_type text, payload text, dedupe_key text)
         on conflict (subscription_id, dedupe_key) where dedupe_key is not null do nothing
         returning id`,
        [JSON.stringify(rows)],
      );
      const ids = new Set(inserted.map((r) => r.id));
      await schedule(rows.filter((r) => ids.has(r.id)).map((r) => r.id));
      return rows.map((r) => ids.has(r.id));
    },
    { max: 200, inFlight: 2, retryAlone: true, weigh: (r) => r.payload.length, maxWeight: 4 * 1024 * 1024 },
  );

  /** Records one delivery per (event, subscription) and queues them; answers the ids (a repeated dedupe key adds none). */
  const record = async (items: { subscriptionId: string; event: NewEvent }[]): Promise<string[]> => {
    const rows: NewRow[] = items.map(({ subscriptionId, event }) => ({
      id: crypto.randomUUID(),
      subscription_id: subscriptionId,
      project_id: event.projectId,
      message_id: `msg_${crypto.randomUUID().replace(/-/g, '')}`,
      event_type: event.type,
      payload: JSON.stringify({
        type: event.type,
        timestamp: (event.at ?? new Date()).toISOString(),
        data: event.data,
      }),
      dedupe_key: event.dedupeKey ?? null,
    }));
    const recorded = await Promise.all(rows.map((r) => insertBatch(r)));
    return rows.filter((_, i) => recorded[i]).map((r) => r.id);
  };

  /** Finishes an attempt: its log line and the delivery's new state in one statement; queues the next attempt. */
  const finish = async (
    c: { id: string; attempts: number; window_attempts: number; window_started_at: string },
    o: {
      statusCode: number | null;
      latencyMs: number | null;
      excerpt: string | null;
      error: string | null;
      ok: boolean;
      final?: boolean;
    },
  ) => {
    let status: DeliveryStatus = 'succeeded';
    let next: Date | null = null;
    if (!o.ok) {
      next = new Date(Date.now() + retryDelayMs(c.window_attempts, deps.retryBaseMs));
      const closes = new Date(c.window_started_at).getTime() + deps.retryWindowMs;
      status = o.final || next.getTime() > closes ? 'dead' : 'pending';
      if (status === 'dead') next = null;
    }
    await sql.run(
      `with attempt as (
         insert into event_delivery_attempts (delivery_id, attempt, at, status_code, latency_ms, response_excerpt, error) values (?, ?, now(), ?, ?, ?, ?)
       )
       update event_deliveries set status = ?, next_attempt_at = ?, last_status_code = ?, last_latency_ms = ?, last_error = ?, last_response = ?,
         delivered_at = case when ? then now() else delivered_at end
       where id = ?`,
      [
        c.id,
        c.attempts,
        o.statusCode,
        o.latencyMs,
        o.excerpt,
        o.error,
        status,
        next,
        o.statusCode,
        o.latencyMs,
        o.error,
        o.excerpt,
        status === 'succeeded',
        c.id,
      ],
    );
    if (status === 'pending' && next) {
      try {
        await scheduler.agenda.schedule(next, DELIVERY_JOB, { deliveryIds: [c.id] } satisfies DeliveryJob);
      } catch (err) {
        logger.warn(
          { err: (err as Error).message, delivery: c.id },
          'the next attempt of an event delivery could not be scheduled now; the sweep will',
        );
      }
    }
  };

  type Claimed = {
    id: string;
    message_id: string;
    payload: string;
    attempts: number;
    window_attempts: number;
    window_started_at: string;
    url: string;
    secret_sealed: string;
    enabled: boolean;
  };

  /** One attempt of a claimed delivery. */
  const attempt = async (c: Claimed): Promise<void> => {
    if (!c.enabled) {
      await finish(c, {
        statusCode: null,
        latencyMs: null,
        excerpt: null,
        error: 'the subscription is disabled (redeliver once it is enabled again)',
        ok: false,
        final: true,
      });
      return;
    }
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': c.message_id,
      'webhook-timestamp': String(ts),
      'webhook-signature': signStandardWebhook(box.decrypt(c.secret_sealed), c.message_id, ts, c.payload),
    };
    const t0 = performance.now();
    let res: OutboundResponse | undefined;
    let error: string | null = null;
    try {
      res = await request({
        method: 'POST',
        url: new URL(c.url),
        headers,
        body: c.payload,
        timeoutMs: deps.timeoutMs,
        allowPrivate: deps.allowPrivate,
      });
    } catch (err) {
      error = err instanceof OutboundRefused ? `refused: ${err.message}` : (err as Error).message;
    }
    const latencyMs = Math.round((performance.now() - t0) * 1000) / 1000;
    const ok = res !== undefined && res.status >= 200 && res.status < 300;
    if (res && !ok) error = `answered ${res.status}`;
    await finish(c, {
      statusCode: res?.status ?? null,
      latencyMs,
      excerpt: res ? excerptOf(res.body) : null,
      error,
      ok,
    });
  };

  const service = {
    /** Delivers `event` to the given subscriptions, or to every enabled one of its project that wants its type. */
    async emit(event: NewEvent, subscriptionIds?: string[]): Promise<string[]> {
      const ids = subscriptionIds ?? (await subscriptions.matching(event.projectId, event.type));
      return await record(ids.map((subscriptionId) => ({ subscriptionId, event })));
    },

    /** Committed rows of a data API write (with the after-hooks' rows): one delivery per row and subscription. */
    async emitRows(a: {
      projectId: string;
      table: string;
      event: HookEvent;
      rows: unknown[];
      userId: string | null;
    }): Promise<number> {
      const type = ROW_EVENT_OF[a.event];
      const ids = await subscriptions.matching(a.projectId, type, a.table);
      if (ids.length === 0 || a.rows.length === 0) return 0;
      const at = new Date();
      const items = a.rows.flatMap((row) =>
        ids.map((subscriptionId) => ({
          subscriptionId,
          event: {
            projectId: a.projectId,
            type,
            at,
            data: { project_id: a.projectId, table: a.table, row, user_id: a.userId },
          },
        })),
      );
      return (await record(items)).length;
    },

    /** An event another domain published on the platform outbox (at least once: its id dedupes). */
    async emitPlatform(e: PlatformEvent): Promise<void> {
      const type = PLATFORM_EVENT_OF[e.type];
      if (!type) return;
      const p = e.payload as Record<string, unknown> & { projectId: string };
      let data: Record<string, unknown>;
      switch (e.type) {
        case 'identity.user.registered': {
          const u = e.payload as PlatformEvent<'identity.user.registered'>['payload'];
          data = { user: { id: u.userId, email: u.email, email_verified: u.emailVerified, created_at: u.createdAt } };
          break;
        }
        case 'identity.user.signed_in': {
          const u = e.payload as PlatformEvent<'identity.user.signed_in'>['payload'];
          data = {
            user: { id: u.userId, email: u.email },
            client_id: u.clientId,
            session_id: u.sessionId,
            amr: u.amr,
            signed_in_at: u.at,
          };
          break;
        }
        default: {
          const o = (e.payload as PlatformEvent<'storage.object.created'>['payload']).object;
          data = {
            object: {
              id: o.id,
              folder: o.folder,
              name: o.name,
              content_type: o.contentType,
              size: o.size,
              sha256: o.sha256,
              owner_id: o.ownerId,
            },
          };
        }
      }
      await service.emit({
        projectId: p.projectId,
        type,
        at: e.createdAt,
        dedupeKey: `event:${e.id}`,
        data: { project_id: p.projectId, ...data },
      });
    },

    /** The job: one attempt of each due delivery it names, a few side by side. */
    async deliver(job: DeliveryJob): Promise<void> {
      const ids = (job.deliveryIds ?? []).filter(isUuid);
      if (ids.length === 0) return;
      // Claimed once: a second job naming a delivery (a redelivery, the sweep) finds it taken or not yet due.
      const claimed = await sql.rows<Claimed>(
        `update event_deliveries d set status = 'delivering', attempts = d.attempts + 1, window_attempts = d.window_attempts + 1, last_attempt_at = now()
         from event_subscriptions s
         where d.id in (select (jsonb_array_elements_text(?::jsonb))::uuid) and d.status = 'pending' and d.next_attempt_at <= now() + interval '1 second' and s.id = d.subscription_id
         returning d.id, d.message_id, d.payload, d.attempts, d.window_attempts, d.window_started_at, s.url, s.secret_sealed, s.enabled`,
        [JSON.stringify(ids)],
      );
      for (let i = 0; i < claimed.length; i += PARALLEL) {
        const results = await Promise.allSettled(claimed.slice(i, i + PARALLEL).map(attempt));
        for (const r of results)
          if (r.status === 'rejected')
            logger.warn(
              { err: (r.reason as Error)?.message },
              'an event delivery attempt could not be recorded; the sweep tries it again',
            );
      }
    },

    /** The delivery log of a subscription of the project, newest first, one page at a time. */
    async list(
      projectId: string,
      subscriptionId: string,
      f: { status?: unknown; event?: unknown; first?: unknown; after?: unknown },
    ) {
      const sub = await subscriptions.get(projectId, subscriptionId);
      const first = checkPageSize('first', f.first, 20, 100);
      const after = decodeTimeCursor('after', f.after);
      const where = ['subscription_id = ?'];
      const params: unknown[] = [sub.id];
      if (f.status !== undefined && f.status !== null) {
        if (!DELIVERY_STATUSES.includes(f.status as DeliveryStatus))
          throw errors.validation('status', `must be one of ${DELIVERY_STATUSES.join(', ')}`);
        where.push('status = ?');
        params.push(f.status);
      }
      if (f.event !== undefined && f.event !== null) {
        where.push('event_type = ?');
        params.push(String(f.event));
      }
      if (after) {
        where.push('(created_at < ? or (created_at = ? and id < ?))');
        params.push(after.createdAt, after.createdAt, after.id);
      }
      const rows = await sql.rows(
        `select * from event_deliveries where ${where.join(' and ')} order by created_at desc, id desc limit ${first + 1}`,
        params,
      );
      return timePage(rows, first, toDelivery);
    },

    /** One delivery of a subscription of the project, with every attempt. */
    async get(projectId: string, subscriptionId: string, id: unknown): Promise<EventDelivery> {
      const sub = await subscriptions.get(projectId, subscriptionId);
      if (!isUuid(id)) throw errors.notFound('event delivery', String(id).slice(0, 100));
      const [r] = await sql.rows('select * from event_deliveries where id = ? and subscription_id = ?', [id, sub.id]);
      if (!r) throw errors.notFound('event delivery', id);
      return { ...toDelivery(r), attemptLog: await service.attemptsOf(id) };
    },

    /** A delivery's attempts, oldest first. */
    async attemptsOf(deliveryId: string): Promise<DeliveryAttempt[]> {
      const rows = await sql.rows('select * from event_delivery_attempts where delivery_id = ? order by attempt', [
        deliveryId,
      ]);
      return rows.map((r) => ({
        attempt: Number(r.attempt),
        at: new Date(r.at as string),
        statusCode: num(r.status_code),
        latencyMs: num(r.latency_ms),
        responseExcerpt: (r.response_excerpt as string | null) ?? null,
        error: (r.error as string | null) ?? null,
      }));
    },

    /** Delivers again (a dead, succeeded or pending delivery) now, with a new retry window; 409 during an attempt. */
    async redeliver(projectId: string, subscriptionId: string, id: unknown): Promise<EventDelivery> {
      const current = await service.get(projectId, subscriptionId, id);
      const n = await sql.run(
        `update event_deliveries set status = 'pending', next_attempt_at = now(), window_started_at = now(), window_attempts = 0, delivered_at = null
         where id = ? and status <> 'delivering'`,
        [current.id],
      );
      if (n === 0)
        throw errors.conflict('The delivery is being attempted right now: redeliver it once this attempt has ended', {
          delivery_id: current.id,
        });
      await schedule([current.id]);
      return await service.get(projectId, subscriptionId, current.id);
    },

    /** Sends a `subscription.test` event to one subscription (not to the others); answers its delivery. */
    async sendTest(projectId: string, subscriptionId: string): Promise<EventDelivery> {
      const sub = await subscriptions.get(projectId, subscriptionId);
      if (!sub.enabled)
        throw errors.conflict('The subscription is disabled: enable it to send it a test event', {
          subscription_id: sub.id,
        });
      const [id] = await service.emit(
        {
          projectId,
          type: TEST_EVENT,
          data: { project_id: projectId, subscription_id: sub.id, message: 'A test event from Tessera' },
        },
        [sub.id],
      );
      return await service.get(projectId, sub.id, id);
    },

    /**
     * The minute sweep: queues again deliveries whose job was lost (due for over a minute), tries again attempts cut
     * short by a process that stopped (delivering past the time-out plus a minute, logged as such), and forgets
     * finished deliveries older than 30 days.
     */
    async sweep(): Promise<{ requeued: number; cutShort: number; pruned: number }> {
      const stranded = await sql.rows<{ id: string }>(
        `select id from event_deliveries where status = 'pending' and next_attempt_at < now() - interval '60 seconds' order by next_attempt_at limit 1000`,
      );
      const cut = await sql.rows<{ id: string }>(
        `with cut as (
           update event_deliveries set status = 'pending', next_attempt_at = now(), last_error = 'the attempt was cut short (the process making it stopped); tried again'
           where status = 'delivering' and last_attempt_at < now() - make_interval(secs => ? / 1000.0)
           returning id, attempts, last_attempt_at
         ), logged as (
           insert into event_delivery_attempts (delivery_id, attempt, at, error)
           select id, attempts, last_attempt_at, 'cut short: the process making the attempt stopped' from cut on conflict do nothing
         )
         select id from cut`,
        [deps.timeoutMs + 60_000],
      );
      const ids = [...stranded, ...cut].map((r) => r.id);
      await schedule(ids);
      const pruned = await sql.run(
        `delete from event_deliveries where status in ('succeeded', 'dead') and created_at < now() - interval '${KEEP_DAYS} days'`,
      );
      return { requeued: stranded.length, cutShort: cut.length, pruned };
    },
  };
  return service;
}
