// Broadcasts: small messages every process hears at once (cache invalidation: a revoked API key, a changed
// hook), over PostgreSQL LISTEN/NOTIFY on one channel. Unlike the outbox (platform/events.ts), which hands
// each event to ONE instance of each consuming subgraph, at least once, a broadcast reaches EVERY listening
// process, at most once and only while it listens — so a cache fed by broadcasts must also be emptied when
// its listening connection drops (`onReset`), since it may have missed messages then.
// A message published inside a transaction (`publishBroadcast(tx, ...)`) is delivered when it commits.
import pg from 'pg';
import type { Logger } from './logger.ts';
import type { SqlExecutor } from './events.ts';

const CHANNEL = 'tessera_broadcast';

/** Topics and their payloads. Add a row here when something new is announced. */
export type BroadcastTopics = {
  /** Credentials stopped being valid (or what they stand for changed): drop cached lookups. */
  'credentials.changed': { apiKeyHashes?: string[]; sessionIds?: string[]; projectId?: string; tenantId?: string };
  /** The database hooks of a project changed. */
  'hooks.changed': { projectId: string };
};
export type BroadcastTopic = keyof BroadcastTopics;

type Handler<T extends BroadcastTopic> = (payload: BroadcastTopics[T]) => void;

/** Announces `payload` on `topic`; inside a transaction it is delivered at commit (not at all on rollback). */
export async function publishBroadcast<T extends BroadcastTopic>(tx: SqlExecutor, topic: T, payload: BroadcastTopics[T]): Promise<void> {
  await tx.execute(`select pg_notify('${CHANNEL}', ?)`, [JSON.stringify({ topic, payload })]);
}

/** The same outside a transaction, on any pg client or pool. */
export async function publishBroadcastNow<T extends BroadcastTopic>(db: pg.Pool | pg.Client | pg.PoolClient, topic: T, payload: BroadcastTopics[T]): Promise<void> {
  await db.query(`select pg_notify('${CHANNEL}', $1)`, [JSON.stringify({ topic, payload })]);
}

export type BroadcastListener = {
  on: <T extends BroadcastTopic>(topic: T, handler: Handler<T>) => void;
  /** Called when the listening connection was lost and re-established: messages may have been missed. */
  onReset: (handler: () => void) => void;
  stop: () => Promise<void>;
};

/** Listens for broadcasts; reconnects (and calls the reset handlers) when the connection drops. */
export async function startBroadcastListener(opts: { url: string; logger: Logger }): Promise<BroadcastListener> {
  const log = opts.logger.child({ component: 'broadcast' });
  const handlers = new Map<string, ((payload: never) => void)[]>();
  const resets: (() => void)[] = [];
  let client: pg.Client | undefined;
  let stopped = false;

  const deliver = (msg: pg.Notification) => {
    if (msg.channel !== CHANNEL || !msg.payload) return;
    let parsed: { topic: string; payload: never };
    try {
      parsed = JSON.parse(msg.payload) as { topic: string; payload: never };
    } catch {
      return;
    }
    for (const h of handlers.get(parsed.topic) ?? []) {
      try {
        h(parsed.payload);
      } catch (err) {
        log.error({ err, topic: parsed.topic }, 'broadcast handler failed');
      }
    }
  };

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: opts.url });
    c.on('notification', deliver);
    c.on('error', (err) => {
      log.warn({ err: err.message }, 'broadcast connection lost; reconnecting');
      void c.end().catch(() => {});
      if (client === c) client = undefined;
      for (const r of resets) r();
      if (!stopped) setTimeout(() => void reconnect(), 200).unref();
    });
    await c.connect();
    await c.query(`listen ${CHANNEL}`);
    client = c;
  };
  const reconnect = async (): Promise<void> => {
    while (!stopped && !client) {
      try {
        await connect();
        // Anything published while we were away is lost: caches start again from empty.
        for (const r of resets) r();
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'broadcast reconnect failed; retrying');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };

  await connect();
  return {
    on: (topic, handler) => {
      const list = handlers.get(topic) ?? [];
      list.push(handler as (payload: never) => void);
      handlers.set(topic, list);
    },
    onReset: (handler) => resets.push(handler),
    stop: async () => {
      stopped = true;
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
