// Realtime: a published table gets a trigger (tessera_realtime.notify_change) that NOTIFYs each row
// change on one channel; one LISTEN connection per data process fans the changes out to subscribers,
// by project schema. The switches come from the tenant domain's `publication.changed` events.
import pg from 'pg';
import { createPubSub } from 'graphql-yoga';
import type { Logger } from '../../../platform/logger.ts';
import { ident } from './names.ts';

export const CHANNEL = 'tessera_realtime';
const TRIGGER = 'tessera_realtime';

/** One row change as the trigger announces it. */
export type Change = { schema: string; table: string; op: 'insert' | 'update' | 'delete'; at: string; row?: Record<string, unknown>; old?: Record<string, unknown>; truncated?: boolean };

export type Realtime = ReturnType<typeof createRealtime>;

/** Creates the realtime service over the platform role's pool. */
export function createRealtime(opts: { admin: pg.Pool; databaseUrl: string; logger: Logger }) {
  const { admin, logger } = opts;
  const pubsub = createPubSub<{ change: [schema: string, change: Change] }>();
  let listener: pg.Client | undefined;
  let stopped = false;

  const connect = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: opts.databaseUrl, application_name: 'tessera-realtime' });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANNEL || !msg.payload) return;
      try {
        const change = JSON.parse(msg.payload) as Change;
        if (typeof change.schema === 'string') pubsub.publish('change', change.schema, change);
      } catch (err) {
        logger.warn({ err }, 'realtime: unreadable notification');
      }
    });
    client.on('error', (err) => {
      logger.warn({ err: err.message }, 'realtime: listener connection lost; reconnecting');
      listener = undefined;
      client.end().catch(() => {});
      if (!stopped) setTimeout(() => void connect().catch((e: Error) => logger.error({ err: e.message }, 'realtime: reconnect failed')), 1000).unref();
    });
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    listener = client;
  };

  /** Creates or drops the table's trigger; a table that does not exist yet is left for `sync`. */
  const apply = async (schema: string, table: string, enabled: boolean): Promise<void> => {
    const target = `${ident(schema)}.${ident(table)}`;
    const { rows } = await admin.query<{ kind: string | null }>(
      `select c.relkind as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = $2`,
      [schema, table],
    );
    const kind = rows[0]?.kind;
    if (kind !== 'r' && kind !== 'p') return;
    if (enabled) {
      await admin.query(`create or replace trigger ${TRIGGER} after insert or update or delete on ${target} for each row execute function tessera_realtime.notify_change()`);
    } else {
      await admin.query(`drop trigger if exists ${TRIGGER} on ${target}`);
    }
  };

  return {
    async start(): Promise<void> {
      await connect();
    },
    async stop(): Promise<void> {
      stopped = true;
      await listener?.end().catch(() => {});
      listener = undefined;
    },

    /** Changes of one project schema, as they commit. */
    subscribe: (schema: string): AsyncIterable<Change> => pubsub.subscribe('change', schema),

    /** Records the switch and applies it (idempotent). */
    async setPublication(projectId: string, schema: string, table: string, enabled: boolean): Promise<void> {
      await admin.query(
        `insert into data_realtime_tables (project_id, table_name, enabled, updated_at) values ($1, $2, $3, now())
         on conflict (project_id, table_name) do update set enabled = excluded.enabled, updated_at = now()`,
        [projectId, table, enabled],
      );
      await apply(schema, table, enabled);
    },

    /** Re-applies every switch of a project (after DDL: a published table may just have been created). */
    async sync(projectId: string, schema: string): Promise<void> {
      const { rows } = await admin.query<{ table_name: string; enabled: boolean }>('select table_name, enabled from data_realtime_tables where project_id = $1', [projectId]);
      for (const r of rows) await apply(schema, r.table_name, r.enabled);
    },
  };
}
