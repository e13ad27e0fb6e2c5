// Platform events: a transactional outbox in the platform database. A subgraph publishes an event in
// the same transaction as the change it describes; other subgraphs consume events in order, at least
// once, each through its own cursor (so subgraphs never import each other, and a consumer that starts
// later catches up on everything it missed). One instance of a consumer works at a time (row lock).
//
// Events that happen very often and interest few projects (end-users signing in, storage objects) are published only
// when some domain declared an interest in that event of that project (`tessera_event_interest`, kept by the domain
// that consumes them: the functions subgraph for its outbound event subscriptions), so a project nobody listens to
// adds no row and wakes no consumer.
import pg from 'pg';
import { backoffMs } from './backoff.ts';
import type { Logger } from './logger.ts';
import { createLoop } from './loop.ts';
import { createPgPool } from './pg-pool.ts';

/** A storage object as its events describe it. */
export type StorageObjectEvent = {
  id: string;
  folder: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string | null;
  ownerId: string | null;
};

/** Events and their payloads. Add a row here when a domain announces something new. */
export type PlatformEvents = {
  'project.created': { projectId: string; tenantId: string; name: string };
  'project.deleted': { projectId: string; tenantId: string };
  'publication.changed': { projectId: string; table: string; enabled: boolean };
  /** An OIDC client was deleted: the identity provider ends its sessions, codes and client tokens. */
  'oidc-client.deleted': { projectId: string; clientId: string };
  // Published only where an interest is declared (publishEventIfWanted).
  'identity.user.registered': {
    projectId: string;
    userId: string;
    email: string;
    emailVerified: boolean;
    createdAt: string;
  };
  'identity.user.signed_in': {
    projectId: string;
    userId: string;
    email: string;
    clientId: string;
    sessionId: string;
    amr: string[];
    at: string;
  };
  'storage.object.created': { projectId: string; object: StorageObjectEvent };
  'storage.object.deleted': { projectId: string; object: StorageObjectEvent };
};
export type EventType = keyof PlatformEvents;
export type PlatformEvent<T extends EventType = EventType> = {
  id: number;
  type: T;
  payload: PlatformEvents[T];
  createdAt: Date;
};

/** Something that runs SQL with `?` placeholders inside the caller's transaction (a MikroORM EntityManager). */
export type SqlExecutor = { execute: (sql: string, params: unknown[]) => Promise<unknown> };

const CHANNEL = 'tessera_events';

/** Creates the outbox tables if they are missing (serialised by an advisory lock). */
export async function ensureEventTables(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // a lost connection fails the statement under way, which is thrown below
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`select pg_advisory_xact_lock(hashtext('tessera_events_ddl'))`);
    await client.query(`create table if not exists tessera_events (
      id bigserial primary key, type text not null, payload jsonb not null, created_at timestamptz not null default now())`);
    await client.query(
      `create table if not exists tessera_event_cursors (consumer text primary key, last_id bigint not null default 0)`,
    );
    await client.query(`create table if not exists tessera_event_interest (
      project_id text not null, type text not null, consumer text not null, primary key (project_id, type, consumer))`);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

/** Records an event in the caller's transaction; consumers are woken when it commits. */
export async function publishEvent<T extends EventType>(
  tx: SqlExecutor,
  type: T,
  payload: PlatformEvents[T],
): Promise<void> {
  await tx.execute('insert into tessera_events (type, payload) values (?, ?)', [type, JSON.stringify(payload)]);
  await tx.execute(`select pg_notify('${CHANNEL}', ?)`, [type]);
}

/**
 * Records an event in the caller's transaction only when its project's interest in this type is declared
 * (`setEventInterest`); one statement either way. Answers whether it was recorded.
 */
export async function publishEventIfWanted<T extends EventType>(
  tx: SqlExecutor,
  type: T,
  payload: PlatformEvents[T] & { projectId: string },
): Promise<boolean> {
  const rows = (await tx.execute(
    `with recorded as (
       insert into tessera_events (type, payload) select ?, ?::jsonb
       where exists (select 1 from tessera_event_interest where project_id = ? and type = ?) returning id)
     select pg_notify('${CHANNEL}', ?) from recorded`,
    [type, JSON.stringify(payload), payload.projectId, type, type],
  )) as unknown[] | { rows?: unknown[] } | undefined;
  return (Array.isArray(rows) ? rows : (rows?.rows ?? [])).length > 0;
}

/** Declares (in the caller's transaction) the event types of a project that `consumer` wants: exactly `types`. */
export async function setEventInterest(
  tx: SqlExecutor,
  consumer: string,
  projectId: string,
  types: readonly string[],
): Promise<void> {
  const list = `{${types.join(',')}}`;
  await tx.execute(
    'delete from tessera_event_interest where consumer = ? and project_id = ? and not (type = any(?::text[]))',
    [consumer, projectId, list],
  );
  if (types.length > 0) {
    await tx.execute(
      'insert into tessera_event_interest (project_id, type, consumer) select ?, t, ? from unnest(?::text[]) t on conflict do nothing',
      [projectId, consumer, list],
    );
  }
}

export type EventHandlers = { [T in EventType]?: (event: PlatformEvent<T>) => Promise<void> };

export type EventConsumer = {
  /** Handles every event waiting now. */
  drain: () => Promise<void>;
  /** Whether the LISTEN connection is up (it is re-made with backoff after a loss). */
  listening: () => boolean;
  stop: () => Promise<void>;
};

/**
 * Consumes events for `name` with `handlers`. A failing handler stops the batch at that event, which is
 * retried on the next wake-up (events are handled in order, at least once: handlers must be idempotent).
 */
export async function startEventConsumer(opts: {
  name: string;
  url: string;
  handlers: EventHandlers;
  logger: Logger;
  pollMs?: number;
}): Promise<EventConsumer> {
  const log = opts.logger.child({ consumer: opts.name });
  // A connection dropped by the server (restart, database dropped) must not crash the process.
  const pool = createPgPool(
    { connectionString: opts.url, max: 1, application_name: `tessera-events-consumer-${opts.name}` },
    log,
    'event consumer',
  );
  let stopped = false;

  /** One batch of up to 100 events in one transaction; answers whether more may be waiting. */
  const batch = async (): Promise<boolean> => {
    const client = await pool.connect();
    let handled = 0;
    try {
      await client.query('begin');
      await client.query('insert into tessera_event_cursors (consumer) values ($1) on conflict do nothing', [
        opts.name,
      ]);
      const { rows: cur } = await client.query<{ last_id: string }>(
        'select last_id from tessera_event_cursors where consumer = $1 for update',
        [opts.name],
      );
      let last = Number(cur[0]!.last_id);
      const { rows } = await client.query<{ id: string; type: EventType; payload: never; created_at: Date }>(
        'select id, type, payload, created_at from tessera_events where id > $1 order by id limit 100',
        [last],
      );
      for (const row of rows) {
        const handler = opts.handlers[row.type] as ((e: PlatformEvent) => Promise<void>) | undefined;
        try {
          if (handler)
            await handler({ id: Number(row.id), type: row.type, payload: row.payload, createdAt: row.created_at });
        } catch (err) {
          log.error({ err, event: row.id, type: row.type }, 'event handler failed; will retry');
          break;
        }
        last = Number(row.id);
        handled++;
      }
      await client.query('update tessera_event_cursors set last_id = $2 where consumer = $1', [opts.name, last]);
      await client.query('commit');
      return rows.length === 100 && handled === 100;
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  };

  // The drain (platform/loop.ts): woken by every notification, and every `pollMs` as a last resort; batches follow
  // one another while full; a batch that fails (the database away) is tried again a second later.
  const drainLoop = createLoop({
    name: 'event consumer',
    logger: log,
    run: batch,
    everyMs: opts.pollMs ?? 5000,
    retryDelayMs: () => 1000,
  });

  // The LISTEN connection, (re-)made by a loop of its own. A loss (PostgreSQL restart, pg_terminate_backend, network)
  // is logged and the connection re-made at once, then with backoff (100 ms doubling to 2 s, full jitter: every
  // process of an installation loses it at once when PostgreSQL restarts); each new connection
  // drains at once, catching up on every event committed while it was away (the cursor makes that exact).
  let listener: pg.Client | undefined;
  const listen = async (): Promise<void> => {
    if (listener || stopped) return;
    const c = new pg.Client({ connectionString: opts.url, application_name: `tessera-events-${opts.name}` });
    let lost = false;
    const onLost = (why: string) => {
      if (lost || stopped) return;
      lost = true;
      if (listener === c) listener = undefined;
      log.warn({ reason: why }, 'event listener connection lost; reconnecting');
      void c.end().catch(() => {});
      listenLoop.wake();
    };
    c.on('error', (err) => onLost(err.message));
    c.on('end', () => onLost('connection ended'));
    c.on('notification', () => drainLoop.wake());
    try {
      await c.connect();
      await c.query(`listen ${CHANNEL}`);
    } catch (err) {
      lost = true; // the loop tries again after its backoff
      void c.end().catch(() => {});
      throw err;
    }
    if (stopped) {
      await c.end().catch(() => {});
      return;
    }
    listener = c;
    drainLoop.wake();
  };
  const listenLoop = createLoop({
    name: 'event listener',
    logger: log,
    run: listen,
    retryDelayMs: (failures) => backoffMs(failures, { baseMs: 100, maxMs: 2000 }),
  });

  const stop = async (): Promise<void> => {
    stopped = true;
    await listenLoop.stop();
    await drainLoop.stop();
    await listener?.end().catch(() => {});
    await pool.end().catch(() => {});
  };
  try {
    await listenLoop.drain();
    drainLoop.start();
    await drainLoop.drain();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    drain: drainLoop.drain,
    listening: () => listener !== undefined,
    stop,
  };
}
