// Realtime: a published table gets a trigger (tessera_realtime.notify_change, from the project template) that
// NOTIFYs each row change in the project's own database. A data process listens on the databases of the projects
// that have subscribers here (one LISTEN connection per such project, as the project's own role, closed a little
// after the last subscriber leaves) and fans the changes out to them. NOTIFY is per database, so what a listener
// hears can only come from its project's own database: no other project (nor anything else) can put an event in
// a project's stream. When a listener's connection drops, it reconnects with backoff and then sends its
// subscribers a `gap` event (changes committed in between may have been missed: re-read what you show), so a
// subscriber is never silently behind. The switches come from the tenant domain's `publication.changed` events.
import pg from 'pg';
import { createPubSub } from 'graphql-yoga';
import { backoffMs } from '../../../platform/backoff.ts';
import { AppError } from '../../../platform/errors.ts';
import { planLimitReached } from '../../../platform/limit-errors.ts';
import type { PlanLimitsReader, ProjectPlan } from '../../../platform/plan-limits.ts';
import type { Logger } from '../../../platform/logger.ts';
import { createLoop, type Loop } from '../../../platform/loop.ts';
import { ident } from './names.ts';
import { CONNECT_TIMEOUT_MS, type RolePools } from './pools.ts';
import type { ProjectRole } from './provisioning.ts';

export const CHANNEL = 'tessera_realtime';
const TRIGGER = 'tessera_realtime';
/** How long a listener stays open after its last subscriber left (a page reload re-subscribes at once). */
const LINGER_MS = 5_000;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * One row change as the trigger announces it, or (`op: 'gap'`) word that the listener was away from `at` until now
 * and changes of that time may have been missed.
 */
export type Change = {
  table: string;
  op: 'insert' | 'update' | 'delete' | 'gap';
  at: string;
  row?: Record<string, unknown>;
  old?: Record<string, unknown>;
  truncated?: boolean;
};

export type Realtime = ReturnType<typeof createRealtime>;

type Listener = {
  role: ProjectRole;
  subscribers: number;
  client: pg.Client | undefined;
  ready: Promise<void>;
  linger?: NodeJS.Timeout;
  closed: boolean;
  /** When its connection was lost (subscribers are told of the gap once it is back). */
  lostAt?: string;
  /** Re-makes a lost connection (platform/loop.ts: one attempt at a time, with backoff). */
  reconnect?: Loop;
};

/** A change as read from a notification, or undefined when it is not one (the project's own code may NOTIFY anything). */
export function readChange(payload: string | undefined): Change | undefined {
  if (!payload) return undefined;
  let c: unknown;
  try {
    c = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const o = c as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || typeof o.table !== 'string' || typeof o.at !== 'string') return undefined;
  if (o.op !== 'insert' && o.op !== 'update' && o.op !== 'delete') return undefined;
  const obj = (v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  return { table: o.table, op: o.op, at: o.at, row: obj(o.row), old: obj(o.old), truncated: o.truncated === true };
}

/** Creates the realtime service: `admin` keeps the switches (platform database), `databaseUrl` is the projects' server. */
export function createRealtime(opts: {
  admin: pg.Pool;
  pools: RolePools;
  databaseUrl: string;
  /** The URL (as the platform role) of a project server of the fleet; default: `databaseUrl` for every project. */
  serverUrl?: (serverId: string) => Promise<string>;
  logger: Logger;
  maxSubscribers: number;
  /** The project's plan: max_realtime_subscribers (across every data process; see `elsewhere`). */
  planLimits?: Pick<PlanLimitsReader, 'plan'>;
  /** The project's subscribers the other data processes reported (realtime-sharing.ts); none by default. */
  elsewhere?: (projectId: string) => number;
}) {
  const { admin, pools, logger } = opts;
  const pubsub = createPubSub<{ change: [projectId: string, change: Change] }>();
  const listeners = new Map<string, Listener>();
  let stopped = false;

  const connect = async (l: Listener, gapSince?: string): Promise<void> => {
    const url = new URL(opts.serverUrl ? await opts.serverUrl(l.role.serverId) : opts.databaseUrl);
    url.username = encodeURIComponent(l.role.roleName);
    url.password = encodeURIComponent(l.role.password);
    url.pathname = `/${encodeURIComponent(l.role.databaseName)}`;
    // Bounded like the data API's logins: a server that never answers fails the subscription (503) and the
    // reconnection loop tries again, instead of every subscriber of the project waiting on one stuck login.
    const client = new pg.Client({
      connectionString: url.toString(),
      application_name: 'tessera-realtime',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANNEL) return;
      const change = readChange(msg.payload);
      if (change) pubsub.publish('change', l.role.projectId, change);
    });
    let gone = false;
    const lost = (reason: string) => {
      if (gone) return;
      gone = true;
      // A connection replaced by another (the project moved: see `relocate`) is not reconnected.
      if (l.client && l.client !== client) return void client.end().catch(() => {});
      if (l.client === client) l.client = undefined;
      void client.end().catch(() => {});
      if (l.closed || stopped) return;
      logger.warn({ project: l.role.projectId, reason }, 'realtime: listener connection lost; reconnecting');
      reconnectLater(l, new Date().toISOString());
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('connection ended'));
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    if (l.closed || stopped) {
      await client.end().catch(() => {});
      return;
    }
    l.client = client;
    l.lostAt = undefined;
    // Reconnected: what was committed while nobody listened is unknown to the subscribers.
    if (gapSince) pubsub.publish('change', l.role.projectId, { table: '*', op: 'gap', at: gapSince });
  };

  /** Reconnects the listener in the background (subscribers get a `gap` event since `since` once it is back). */
  const reconnectLater = (l: Listener, since: string): void => {
    l.lostAt ??= since;
    l.reconnect ??= createLoop({
      name: 'realtime: reconnect',
      logger: logger.child({ project: l.role.projectId }),
      run: async () => {
        if (!l.closed && !stopped && !l.client) await connect(l, l.lostAt);
      },
      retryDelayMs: (failures) => reconnectDelay(failures + 1),
    });
    // The first attempt waits too: after a PostgreSQL restart every project's listener comes back at once.
    setTimeout(() => l.reconnect?.wake(), reconnectDelay(1)).unref();
  };

  /** The wait before reconnection attempt `attempt`. */
  const reconnectDelay = (attempt: number): number =>
    backoffMs(attempt, { baseMs: RECONNECT_MIN_MS, maxMs: RECONNECT_MAX_MS, jitter: 'equal' });

  const close = (l: Listener): void => {
    l.closed = true;
    clearTimeout(l.linger);
    void l.reconnect?.stop();
    if (listeners.get(l.role.projectId) === l) listeners.delete(l.role.projectId);
    void l.client?.end().catch(() => {});
    l.client = undefined;
  };

  /**
   * PLAN_LIMIT_REACHED when the project's subscriptions, here and as the other data processes last reported them, already
   * fill its plan's max_realtime_subscribers. TESSERA_REALTIME_MAX_SUBSCRIBERS stays this process's own cap.
   */
  const planRoom = (plan: ProjectPlan | null | undefined, projectId: string): void => {
    const max = plan?.limits.maxRealtimeSubscribers ?? null;
    if (max === null) return;
    const open = (listeners.get(projectId)?.subscribers ?? 0) + (opts.elsewhere?.(projectId) ?? 0);
    if (open >= max) throw planLimitReached(plan!.planId, 'max_realtime_subscribers', max, 'realtime subscribers');
  };

  /** The project's listener with one more subscriber (opened now if needed); refuses past the subscriber caps. */
  const acquire = async (role: ProjectRole): Promise<Listener> => {
    const plan = await opts.planLimits?.plan(role.projectId);
    // From here to the count below nothing waits: two subscriptions of this process cannot both take the last slot
    // (those of other processes may, within the second before they hear of each other: realtime-sharing.ts).
    planRoom(plan, role.projectId);
    let l = listeners.get(role.projectId);
    if (l && (l.role.roleName !== role.roleName || l.role.password !== role.password)) {
      close(l); // re-provisioned
      l = undefined;
    }
    if (l && l.subscribers >= opts.maxSubscribers) {
      throw new AppError(
        'RATE_LIMITED',
        `This project has ${opts.maxSubscribers} realtime subscribers on this server already (TESSERA_REALTIME_MAX_SUBSCRIBERS)`,
        {
          retry_after: 5,
          limit: 'TESSERA_REALTIME_MAX_SUBSCRIBERS',
        },
      );
    }
    if (!l) {
      const made: Listener = { role, subscribers: 0, client: undefined, ready: Promise.resolve(), closed: false };
      made.ready = connect(made).catch((err: Error) => {
        close(made);
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `Realtime could not listen to the project's database: ${err.message}`,
          { retry_after: 1 },
        );
      });
      listeners.set(role.projectId, made);
      l = made;
    }
    l.subscribers++;
    clearTimeout(l.linger);
    try {
      await l.ready;
    } catch (err) {
      l.subscribers--;
      throw err;
    }
    return l;
  };

  const release = (l: Listener): void => {
    l.subscribers--;
    if (l.subscribers > 0 || l.closed) return;
    l.linger = setTimeout(() => {
      if (l.subscribers === 0) close(l);
    }, LINGER_MS);
    l.linger.unref();
  };

  /** Creates or drops the table's trigger, on the project's own connection (it owns its tables); a table that does not exist yet is left for `sync`. */
  const apply = async (role: ProjectRole, table: string, enabled: boolean): Promise<void> => {
    const db = pools.get(role);
    const target = `${ident(role.schemaName)}.${ident(table)}`;
    const { rows } = await db.query<{ kind: string | null }>(
      `select c.relkind as kind from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = $2`,
      [role.schemaName, table],
    );
    const kind = rows[0]?.kind;
    if (kind !== 'r' && kind !== 'p') return;
    if (enabled) {
      await db.query(
        `create or replace trigger ${TRIGGER} after insert or update or delete on ${target} for each row execute function tessera_realtime.notify_change()`,
      );
    } else {
      await db.query(`drop trigger if exists ${TRIGGER} on ${target}`);
    }
  };

  return {
    async start(): Promise<void> {
      stopped = false;
    },
    async stop(): Promise<void> {
      stopped = true;
      for (const l of [...listeners.values()]) close(l);
    },

    /**
     * Refuses (PLAN_LIMIT_REACHED) when the project's subscriptions (every data process's) fill its plan: the SSE
     * endpoint asks before its stream starts, so the refusal is the HTTP status. `subscribe` checks again, atomically.
     */
    async assertRoom(projectId: string): Promise<void> {
      planRoom(await opts.planLimits?.plan(projectId), projectId);
    },

    /**
     * Changes of one project, as they commit (and `gap` events after a lost listener came back). Resolves once the
     * project's listener is listening, so nothing committed after it resolves is missed.
     */
    async subscribe(role: ProjectRole): Promise<AsyncIterable<Change>> {
      const l = await acquire(role);
      // The pub/sub's stream (a Repeater) attaches its listener only when first pulled, and the first pull comes
      // when the answer starts streaming, after its headers: a change committed in between would be lost. So the
      // stream is pulled here, at once, and that pull is handed to the subscriber's first `next`.
      const it = pubsub.subscribe('change', role.projectId)[Symbol.asyncIterator]();
      let first: Promise<IteratorResult<Change>> | undefined = it.next();
      let released = false;
      const done = () => {
        if (released) return;
        released = true;
        release(l);
      };
      const iterator: AsyncIterator<Change> = {
        next: async () => {
          const pending = first ?? it.next();
          first = undefined;
          const r = await pending;
          if (r.done) done();
          return r;
        },
        return: async (value?: unknown) => {
          done();
          return (await it.return?.(value)) ?? { done: true as const, value: undefined };
        },
        throw: async (err?: unknown) => {
          done();
          if (it.throw) return await it.throw(err);
          throw err;
        },
      };
      return { [Symbol.asyncIterator]: () => iterator };
    },

    /** Subscribers per project in this process (told to the other data processes: realtime-sharing.ts). */
    localCounts: (): [string, number][] => [...listeners].map(([projectId, l]) => [projectId, l.subscribers]),

    /**
     * Subscribers and listening projects of this process (tests, metrics). A subscriber counts once its project's
     * LISTEN connection is up (a change committed from then on reaches it): counted from its request on, a client
     * that waited for the gauge and then wrote could commit before the LISTEN, on a busy machine where opening that
     * connection takes a while, and never see its change. The plan's caps count from the request on (localCounts).
     */
    stats: () => ({
      projects: listeners.size,
      subscribers: [...listeners.values()].reduce((n, l) => n + (l.client ? l.subscribers : 0), 0),
    }),

    /**
     * The project moved to another server: its listener listens there from now on, and its subscribers stay. They get
     * a `gap` event (changes committed between the switch and this process hearing of it may not have reached them).
     */
    async relocate(role: ProjectRole): Promise<void> {
      const l = listeners.get(role.projectId);
      if (!l || l.closed || l.role.serverId === role.serverId) return;
      const old = l.client;
      l.role = role;
      l.client = undefined;
      const since = new Date().toISOString();
      try {
        await connect(l, since);
      } catch (err) {
        logger.warn(
          { project: role.projectId, err: (err as Error).message },
          'realtime: listener not moved; reconnecting',
        );
        reconnectLater(l, since);
      } finally {
        void old?.end().catch(() => {});
      }
    },

    /** Ends the project's listener (project deleted). */
    closeProject(projectId: string): void {
      const l = listeners.get(projectId);
      if (l) close(l);
    },

    /** Records the switch and applies it (idempotent). */
    async setPublication(role: ProjectRole, table: string, enabled: boolean): Promise<void> {
      await admin.query(
        `insert into data_realtime_tables (project_id, table_name, enabled, updated_at) values ($1, $2, $3, now())
         on conflict (project_id, table_name) do update set enabled = excluded.enabled, updated_at = now()`,
        [role.projectId, table, enabled],
      );
      await apply(role, table, enabled);
    },

    /** Re-applies every switch of a project (after DDL: a published table may just have been created). */
    async sync(role: ProjectRole): Promise<void> {
      const { rows } = await admin.query<{ table_name: string; enabled: boolean }>(
        'select table_name, enabled from data_realtime_tables where project_id = $1',
        [role.projectId],
      );
      for (const r of rows) await apply(role, r.table_name, r.enabled);
    },
  };
}
