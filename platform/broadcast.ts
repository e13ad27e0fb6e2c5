// Broadcasts: small messages every process hears at once (cache invalidation: a revoked API key, a changed
// hook), over PostgreSQL LISTEN/NOTIFY on one channel. Unlike the outbox (platform/events.ts), which hands
// each event to ONE instance of each consuming subgraph, at least once, a broadcast reaches EVERY listening
// process, at most once and only while it listens — so a cache fed by broadcasts must also be emptied when
// its listening connection drops (`onReset`), since it may have missed messages then.
// A message published inside a transaction (`publishBroadcast(tx, ...)`) is delivered when it commits.
// Every message carries proof of origin: an HMAC under a key derived from the internal secret, which only the
// platform's processes hold; a message without a valid one is dropped (DESIGN §6: no project's SQL runs in the
// platform database, where this channel lives, and if anything ever NOTIFYs there, it cannot forge a message).
import crypto from 'node:crypto';
import pg from 'pg';
import { deriveKey } from './crypto.ts';
import type { Logger } from './logger.ts';
import type { SqlExecutor } from './events.ts';
import { createLoop } from './loop.ts';

const CHANNEL = 'tessera_broadcast';

/**
 * How old a confirmation a cache may act on (`syncSince`), and so how long a change that must apply at once is held
 * after commit before its answer goes out (`afterCommitLease`). A cache serves an entry when a round trip on its
 * listening connection was SENT at most this long before the request came in; the process that ended a credential
 * answers only this long after its commit. A request that comes in after that answer finds the change handled:
 * the round trip it relies on was sent after the commit, and the server hands pending notifications over before it
 * answers. Under load round trips run back to back and requests rarely wait for one (router/credential-cache.ts).
 */
export const SYNC_LEASE_MS = 250;

/** Waits out the lease after a commit whose broadcast must apply at once (see SYNC_LEASE_MS). */
export const afterCommitLease = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SYNC_LEASE_MS + 10)); // a timer may fire a millisecond early

/** Topics and their payloads. Add a row here when something new is announced. */
export type BroadcastTopics = {
  /** Credentials stopped being valid (or what they stand for changed): drop cached lookups. */
  'credentials.changed': {
    apiKeyHashes?: string[];
    sessionIds?: string[];
    projectId?: string;
    tenantId?: string;
    /** Operator keys revoked (by id). */
    operatorKeyIds?: string[];
    all?: boolean;
  };
  /** The database hooks of a project changed. */
  'hooks.changed': { projectId: string };
  /** A project schema's tables or columns may have changed (rawSQL, a transaction with rawSQL, project deleted). */
  'data.catalog.changed': { schema: string };
  /** OIDC clients changed (secret rotated, settings edited) or went away with their project: drop cached clients. */
  'oidc-clients.changed': { clientIds?: string[]; projectId?: string };
  /** Access tokens stopped being valid: revoked (jti), their project deleted, or a signing key retired (`keys`). */
  'access-tokens.changed': { jtis?: string[]; projectId?: string; keys?: boolean };
  /** A process counted a failed attempt against a rate limit (or forgot a key after a success); keys are SHA-256 hashes. */
  'rate-limits.changed': { origin: string; scope: string; op: 'fail' | 'reset'; key: string };
  /** A project's edge functions, webhook receivers or function secrets changed (or the project went away): drop cached receivers. */
  'functions.changed': { projectId: string };
  /** Requests a front door counted against each project's plan limit in the minute `window` since it last said. */
  'request-counts': { origin: string; window: number; counts: Record<string, number> };
  /** An operator changed a plan, a tenant's plan, or suspended/resumed a tenant or project: drop cached plan limits. */
  'plans.changed': { planId?: string; tenantId?: string; projectId?: string };
  /** A project's CORS rule changed: the front doors reload their copy. */
  'cors.changed': { projectId: string };
  /** Statement time (ms) a data process booked to each project since it last said, at `at` (fair shares, pools.ts). */
  'data.statement-time': { origin: string; at: number; ms: Record<string, number> };
  /** Realtime subscribers a data process holds per project (changed ones, open ones again every 2 s; 0: none left). */
  'data.realtime-subscribers': { origin: string; counts: Record<string, number> };
  /** The operator registered, changed or removed a project server: reload the fleet (subgraphs/data/services/fleet.ts). */
  'data.servers.changed': { serverId: string };
  /** A project's database now lives on `serverId` (a move switched it): drop its role, connections and listeners. */
  'data.project.moved': { projectId: string; serverId: string };
  /** A move holds the project's writes (for `ttlMs` unless released or renewed): they wait (subgraphs/data/services/move-hold.ts). */
  'data.project.hold': { projectId: string; moveId: string; ttlMs: number };
  /** A move's hold is over; `movedTo`: the project now lives there (the switch is committed and announced). */
  'data.project.released': { projectId: string; moveId: string; movedTo?: string };
};
export type BroadcastTopic = keyof BroadcastTopics;

type Handler<T extends BroadcastTopic> = (payload: BroadcastTopics[T]) => void;

let signingKey: crypto.KeyObject | undefined;

/** Gives this process the key that signs and checks broadcasts (from the internal secret; see ensureInternalSecret). */
export function configureBroadcasts(internalSecret: string): void {
  signingKey = crypto.createSecretKey(deriveKey(internalSecret, 'broadcast'));
}

const sign = (body: string): string => {
  if (!signingKey) throw new Error('broadcasts are not configured: the internal secret is not known to this process');
  return crypto.createHmac('sha256', signingKey).update(body).digest('base64url');
};

/** The NOTIFY payload of a message: `<signature>.<json>`. */
export function sealBroadcast(topic: string, payload: unknown): string {
  const body = JSON.stringify({ topic, payload });
  return `${sign(body)}.${body}`;
}

/** The message a NOTIFY payload holds, or undefined when it is not one signed with this installation's key. */
export function openBroadcast(raw: string): { topic: string; payload: unknown } | undefined {
  const dot = raw.indexOf('.');
  if (dot <= 0 || !signingKey) return undefined;
  const body = raw.slice(dot + 1);
  const given = Buffer.from(raw.slice(0, dot), 'base64url');
  const want = crypto.createHmac('sha256', signingKey).update(body).digest();
  if (given.length !== want.length || !crypto.timingSafeEqual(given, want)) return undefined;
  try {
    const m = JSON.parse(body) as { topic?: unknown; payload?: unknown };
    return typeof m.topic === 'string' ? { topic: m.topic, payload: m.payload } : undefined;
  } catch {
    return undefined;
  }
}

/** Announces `payload` on `topic`; inside a transaction it is delivered at commit (not at all on rollback). */
export async function publishBroadcast<T extends BroadcastTopic>(
  tx: SqlExecutor,
  topic: T,
  payload: BroadcastTopics[T],
): Promise<void> {
  await tx.execute(`select pg_notify('${CHANNEL}', ?)`, [sealBroadcast(topic, payload)]);
}

/** The listeners started in this process (see announceLocally). */
const localListeners = new Set<(topic: string, payload: unknown) => void>();

/**
 * Delivers a broadcast to the listeners of THIS process at once, without waiting for the NOTIFY. Call it
 * after the transaction that published the same message committed: the process that made a change then
 * never answers from a stale cache while the NOTIFY is in flight. Handlers hear it twice, so they must be
 * idempotent (dropping cache entries is).
 */
export function announceLocally<T extends BroadcastTopic>(topic: T, payload: BroadcastTopics[T]): void {
  for (const deliver of localListeners) deliver(topic, payload);
}

/** The same outside a transaction, on any pg client or pool. */
export async function publishBroadcastNow<T extends BroadcastTopic>(
  db: pg.Pool | pg.Client | pg.PoolClient,
  topic: T,
  payload: BroadcastTopics[T],
): Promise<void> {
  await db.query(`select pg_notify('${CHANNEL}', $1)`, [sealBroadcast(topic, payload)]);
}

export type BroadcastListener = {
  on: <T extends BroadcastTopic>(topic: T, handler: Handler<T>) => void;
  /** Called when the listening connection was lost and re-established: messages may have been missed. */
  onReset: (handler: () => void) => void;
  /** False while the connection is down (messages are being missed): caches should not trust what they hold. */
  listening: () => boolean;
  /**
   * Resolves once every broadcast committed before the call has been handed to the handlers (a round trip
   * on the listening connection: the server sends pending notifications before it answers). Concurrent
   * callers share round trips. Rejects while the connection is down. A cache that must honour a change
   * committed by ANOTHER process before the current request awaits this before trusting an entry.
   */
  sync: () => Promise<void>;
  /**
   * Resolves once a round trip SENT at or after `since` (performance.now()) has returned: at once when one has,
   * else with the next one (the one on the wire, when it was sent late enough). A confirmation older than half
   * the lease starts a round trip in the background, so steady callers keep finding a recent one. Rejects while
   * the connection is down.
   */
  syncSince: (since: number) => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * One LISTEN connection per database URL in a process, shared by every listener on it (the router's
 * credential cache, the identity and tenant caches, the data subgraph's hook cache, ... in one-process mode):
 * each listener keeps its own handlers and reset handlers; the connection closes with the last listener.
 */
type Shared = {
  handles: Set<Handle>;
  client: pg.Client | undefined;
  stopped: boolean;
  ready: Promise<void>;
  sync: () => Promise<void>;
  syncSince: (since: number) => Promise<void>;
  close: () => Promise<void>;
};
type Handle = { dispatch: (topic: string, payload: unknown) => void; reset: () => void };
const shared = new Map<string, Shared>();

function openShared(url: string, logger: Logger): Shared {
  const log = logger.child({ component: 'broadcast' });
  const state: Shared = {
    handles: new Set(),
    client: undefined,
    stopped: false,
    ready: Promise.resolve(),
    sync: () => Promise.resolve(),
    syncSince: () => Promise.resolve(),
    close: async () => {},
  };
  const resetAll = () => {
    for (const h of state.handles) h.reset();
  };
  let lastForgery = 0;
  const deliver = (msg: pg.Notification) => {
    if (msg.channel !== CHANNEL || !msg.payload) return;
    const parsed = openBroadcast(msg.payload);
    if (!parsed) {
      // At most one line a minute: a flood of forgeries must not flood the log.
      if (Date.now() - lastForgery > 60_000)
        log.warn({ from_pid: msg.processId }, 'broadcast: a message without a valid signature was dropped');
      lastForgery = Date.now();
      return;
    }
    for (const h of state.handles) h.dispatch(parsed.topic, parsed.payload);
  };

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', deliver);
    // Lost either way: an error (server terminated the session, network) or a plain end of the connection.
    let gone = false;
    const lost = (reason: string) => {
      if (gone || state.stopped) return;
      gone = true;
      log.warn({ reason }, 'broadcast connection lost; reconnecting');
      void c.end().catch(() => {});
      if (state.client === c) state.client = undefined;
      resetAll();
      setTimeout(() => reconnect.wake(), 200).unref();
    };
    c.on('error', (err) => lost(err.message));
    c.on('end', () => lost('connection ended'));
    await c.connect();
    await c.query(`listen ${CHANNEL}`);
    state.client = c;
  };
  // The connection is re-made by an in-process loop (platform/loop.ts: one attempt at a time, though a failed
  // attempt's connection may report its loss too), every second until it is back.
  const reconnect = createLoop({
    name: 'broadcast reconnect',
    logger: log,
    retryDelayMs: () => 1000,
    run: async () => {
      if (state.stopped || state.client) return;
      await connect();
      // Anything published while we were away is lost: caches start again from empty.
      resetAll();
    },
  });

  // A round trip covers the callers that asked before it was sent. Callers of one event-loop turn share one
  // (sent at the end of the turn); callers arriving while one is on the wire wait for the next, sent when it
  // returns (the one on the wire may have been read by the server before their awaited change committed).
  type Batch = { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void };
  let assembling: Batch | undefined;
  let onTheWire: { batch: Batch; sentAt: number } | undefined;
  // The send time of the latest round trip that returned, and on which connection (a new one starts with none).
  let confirmedAt = -Infinity;
  let confirmedOn: pg.Client | undefined;
  const send = () => {
    const batch = assembling;
    if (!batch || onTheWire) return;
    assembling = undefined;
    const c = state.client;
    const sentAt = performance.now();
    onTheWire = { batch, sentAt };
    const done = c ? c.query('').then(() => undefined) : Promise.reject(new Error('the broadcast connection is down'));
    done
      .then(() => {
        if (c && state.client === c) {
          confirmedAt = confirmedOn === c ? Math.max(confirmedAt, sentAt) : sentAt;
          confirmedOn = c;
        }
        batch.resolve();
      }, batch.reject)
      .finally(() => {
        onTheWire = undefined;
        if (assembling) setImmediate(send);
      });
  };
  state.sync = (): Promise<void> => {
    if (!assembling) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      assembling = { promise, resolve, reject };
      if (!onTheWire) setImmediate(send);
    }
    return assembling.promise;
  };
  const confirmed = Promise.resolve();
  state.syncSince = (since: number): Promise<void> => {
    if (!state.client) return Promise.reject(new Error('the broadcast connection is down'));
    if (confirmedOn === state.client && confirmedAt >= since) {
      if (!assembling && !onTheWire && confirmedAt < performance.now() - SYNC_LEASE_MS / 2)
        state.sync().catch(() => {}); // a loss is handled by the connection's own handlers
      return confirmed;
    }
    if (onTheWire && onTheWire.sentAt >= since) return onTheWire.batch.promise;
    return state.sync();
  };
  state.close = async () => {
    state.stopped = true;
    await reconnect.stop();
    const c = state.client;
    state.client = undefined;
    await c?.end().catch(() => {});
  };
  state.ready = connect();
  return state;
}

/** Listens for broadcasts; reconnects (and calls the reset handlers) when the connection drops. */
export async function startBroadcastListener(opts: { url: string; logger: Logger }): Promise<BroadcastListener> {
  const log = opts.logger.child({ component: 'broadcast' });
  let conn = shared.get(opts.url);
  if (!conn) {
    conn = openShared(opts.url, opts.logger);
    shared.set(opts.url, conn);
    const made = conn;
    made.ready.catch(() => {
      if (shared.get(opts.url) === made) shared.delete(opts.url);
    });
  }
  await conn.ready;
  const handlers = new Map<string, ((payload: never) => void)[]>();
  const resets: (() => void)[] = [];
  let stopped = false;
  const dispatch = (topic: string, payload: unknown) => {
    for (const h of handlers.get(topic) ?? []) {
      try {
        h(payload as never);
      } catch (err) {
        log.error({ err, topic }, 'broadcast handler failed');
      }
    }
  };
  const handle: Handle = { dispatch, reset: () => resets.forEach((r) => r()) };
  conn.handles.add(handle);
  localListeners.add(dispatch);
  const c = conn;
  return {
    on: (topic, handler) => {
      const list = handlers.get(topic) ?? [];
      list.push(handler as (payload: never) => void);
      handlers.set(topic, list);
    },
    onReset: (handler) => resets.push(handler),
    listening: () => !stopped && c.client !== undefined,
    sync: () => (stopped ? Promise.reject(new Error('the broadcast connection is down (listener stopped)')) : c.sync()),
    syncSince: (since) =>
      stopped ? Promise.reject(new Error('the broadcast connection is down (listener stopped)')) : c.syncSince(since),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      localListeners.delete(dispatch);
      c.handles.delete(handle);
      if (c.handles.size === 0 && shared.get(opts.url) === c) {
        shared.delete(opts.url);
        await c.close();
      }
    },
  };
}
