// Platform events: a transactional outbox in the platform database. A subgraph publishes an event in
// the same transaction as the change it describes; other subgraphs consume events in order, at least
// once, each through its own cursor (so subgraphs never import each other, and a consumer that starts
// later catches up on everything it missed). One instance of a consumer works at a time (row lock).
import pg from 'pg';
import type { Logger } from './logger.ts';

/** Events and their payloads. Add a row here when a domain announces something new. */
export type PlatformEvents = {
  'project.created': { projectId: string; tenantId: string; name: string };
  'project.deleted': { projectId: string; tenantId: string };
  'publication.changed': { projectId: string; table: string; enabled: boolean };
};
export type EventType = keyof PlatformEvents;
export type PlatformEvent<T extends EventType = EventType> = { id: number; type: T; payload: PlatformEvents[T]; createdAt: Date };

/** Something that runs SQL with `?` placeholders inside the caller's transaction (a MikroORM EntityManager). */
export type SqlExecutor = { execute: (sql: string, params: unknown[]) => Promise<unknown> };

const CHANNEL = 'tessera_events';

/** Creates the outbox tables if they are missing (serialised by an advisory lock). */
export async function ensureEventTables(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`select pg_advisory_xact_lock(hashtext('tessera_events_ddl'))`);
    await client.query(`create table if not exists tessera_events (
      id bigserial primary key, type text not null, payload jsonb not null, created_at timestamptz not null default now())`);
    await client.query(`create table if not exists tessera_event_cursors (consumer text primary key, last_id bigint not null default 0)`);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}

/** Records an event in the caller's transaction; consumers are woken when it commits. */
export async function publishEvent<T extends EventType>(tx: SqlExecutor, type: T, payload: PlatformEvents[T]): Promise<void> {
  await tx.execute('insert into tessera_events (type, payload) values (?, ?)', [type, JSON.stringify(payload)]);
  await tx.execute(`select pg_notify('${CHANNEL}', ?)`, [type]);
}

export type EventHandlers = { [T in EventType]?: (event: PlatformEvent<T>) => Promise<void> };

export type EventConsumer = { drain: () => Promise<number>; stop: () => Promise<void> };

/**
 * Consumes events for `name` with `handlers`. A failing handler stops the batch at that event, which is
 * retried on the next wake-up (events are handled in order, at least once: handlers must be idempotent).
 */
export async function startEventConsumer(opts: { name: string; url: string; handlers: EventHandlers; logger: Logger; pollMs?: number }): Promise<EventConsumer> {
  const log = opts.logger.child({ consumer: opts.name });
  const pool = new pg.Pool({ connectionString: opts.url, max: 1 });
  // An idle connection dropped by the server (restart, database dropped) must not crash the process.
  pool.on('error', (err) => log.warn({ err: err.message }, 'event consumer connection lost'));
  const listener = new pg.Client({ connectionString: opts.url });
  await listener.connect();
  await listener.query(`listen ${CHANNEL}`);
  let running: Promise<number> | undefined;
  let again = false;
  let stopped = false;

  const batch = async (): Promise<number> => {
    const client = await pool.connect();
    let handled = 0;
    try {
      await client.query('begin');
      await client.query('insert into tessera_event_cursors (consumer) values ($1) on conflict do nothing', [opts.name]);
      const { rows: cur } = await client.query<{ last_id: string }>('select last_id from tessera_event_cursors where consumer = $1 for update', [opts.name]);
      let last = Number(cur[0]!.last_id);
      const { rows } = await client.query<{ id: string; type: EventType; payload: never; created_at: Date }>(
        'select id, type, payload, created_at from tessera_events where id > $1 order by id limit 100',
        [last],
      );
      for (const row of rows) {
        const handler = opts.handlers[row.type] as ((e: PlatformEvent) => Promise<void>) | undefined;
        try {
          if (handler) await handler({ id: Number(row.id), type: row.type, payload: row.payload, createdAt: row.created_at });
        } catch (err) {
          log.error({ err, event: row.id, type: row.type }, 'event handler failed; will retry');
          break;
        }
        last = Number(row.id);
        handled++;
      }
      await client.query('update tessera_event_cursors set last_id = $2 where consumer = $1', [opts.name, last]);
      await client.query('commit');
      if (rows.length === 100 && handled === 100) again = true;
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
    return handled;
  };

  /** Runs batches until nothing is left; concurrent calls share the run in progress. */
  const drain = (): Promise<number> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      do {
        again = false;
        total += await batch();
      } while (again && !stopped);
      return total;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const wake = () => {
    if (!stopped) drain().catch((err: unknown) => log.error({ err }, 'event consumer failed'));
  };
  listener.on('notification', wake);
  listener.on('error', (err) => log.error({ err }, 'event listener connection failed'));
  const timer = setInterval(wake, opts.pollMs ?? 5000);
  timer.unref();
  await drain();
  return {
    drain,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => {});
      await listener.end().catch(() => {});
      await pool.end();
    },
  };
}
