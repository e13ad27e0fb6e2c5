// Where the scheduler keeps its jobs: the platform PostgreSQL (the default, @agendajs/postgres-backend, one
// `agenda_jobs` table) or MongoDB (@agendajs/mongo-backend over the official `mongodb` driver, the design card's
// production layout) when the scheduler URL is `mongodb://…` / `mongodb+srv://…` (TESSERA_SCHEDULER_URL).
// Agenda's locking keeps each job to one run across every process either way.
import { createRequire } from 'node:module';
import type { AgendaBackend } from 'agenda';
import { PostgresBackend } from '@agendajs/postgres-backend';
import type { MongoBackend } from '@agendajs/mongo-backend';
import type { Logger } from './logger.ts';
import { trackPool, untrackPool } from './metrics.ts';
import { createPgPool } from './pg-pool.ts';

export type SchedulerBackend = { kind: 'postgresql' | 'mongodb'; backend: AgendaBackend; close: () => Promise<void> };

// The MongoDB backend and its driver are loaded only for a `mongodb://` URL: the driver's BSON library alone keeps a
// 17 MB serialization buffer from the moment it is imported, and most installs schedule on PostgreSQL.
const require = createRequire(import.meta.url);
const mongoBackend = () =>
  (require('@agendajs/mongo-backend') as typeof import('@agendajs/mongo-backend')).MongoBackend;

/** Whether a scheduler URL names MongoDB. */
export function isMongoUrl(url: string): boolean {
  return /^mongodb(\+srv)?:\/\//i.test(url);
}

/** The Agenda backend for a scheduler URL; `name` labels its connection pool in the metrics. */
export function createSchedulerBackend(url: string, name: string, log: Logger): SchedulerBackend {
  if (isMongoUrl(url)) {
    // The backend opens its own MongoClient on connect (driver options belong in the URL: replicaSet, tls, w...).
    const Backend: typeof MongoBackend = mongoBackend();
    const backend = new Backend({ address: url, collection: 'agendaJobs', ensureIndex: true });
    return { kind: 'mongodb', backend, close: async () => await backend.disconnect().catch(() => {}) };
  }
  // Our own pool, so a connection dropped by the server (restart, admin command) is logged instead of crashing the
  // process as an unhandled 'error' event.
  const pool = createPgPool(
    { connectionString: url, application_name: `tessera-scheduler-${name.replaceAll(' ', '-')}` },
    log,
    'scheduler',
  );
  trackPool(`scheduler:${name}`, pool);
  const backend = new PostgresBackend({ pool });
  // The backend creates its table, indexes and trigger at connect (IF NOT EXISTS / OR REPLACE), which is not safe
  // against another process doing the same at the same moment (a duplicate pg_type row, "tuple concurrently updated"):
  // subgraphs and replicas that start side by side take turns under a session advisory lock.
  const connect = backend.connect.bind(backend);
  backend.connect = async () => {
    const lock = await pool.connect();
    try {
      await lock.query('select pg_advisory_lock(hashtext($1))', ['tessera_scheduler_ddl']);
      await connect();
    } finally {
      await lock.query('select pg_advisory_unlock(hashtext($1))', ['tessera_scheduler_ddl']).catch(() => {});
      lock.release();
    }
  };
  return {
    kind: 'postgresql',
    backend,
    close: async () => {
      untrackPool(`scheduler:${name}`);
      await backend.disconnect().catch(() => {});
      await pool.end().catch(() => {});
    },
  };
}
