// Test databases: every test file gets a fresh database on a real PostgreSQL server.
// The server is DATABASE_URL when set (CI's second target), otherwise one embedded PostgreSQL
// started by the global setup (TESSERA_TEST_PG_URL), or, failing that, by this file itself.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { startDatabase, type RunningDatabase } from '../../platform/database.ts';
import { createLogger } from '../../platform/logger.ts';
import { installationDigest } from '../../subgraphs/data/services/names.ts';
import { waitFor } from './wait-for.ts';

let own: RunningDatabase | undefined;

/** URL of the server tests create their databases on. */
export async function serverUrl(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  if (process.env.TESSERA_TEST_PG_URL) return process.env.TESSERA_TEST_PG_URL;
  if (!own) {
    const dir = path.resolve('.tessera', 'test-pg', `w${process.env.JEST_WORKER_ID ?? '0'}-${process.pid}`);
    fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
    fs.chmodSync(path.dirname(dir), 0o755);
    own = await startDatabase({ dataDir: dir, logger: createLogger('silent') });
  }
  return own.url;
}

/**
 * `client` behind the `execute(sql, params)` of a MikroORM connection (`?` placeholders), the shape platform code that
 * writes inside the caller's transaction takes.
 */
export function asExecutor(client: pg.Client): {
  execute: (sql: string, params: unknown[]) => Promise<pg.QueryResult>;
} {
  return {
    execute: (sql, params) => {
      let i = 0;
      return client.query(
        sql.replace(/\?/g, () => `$${++i}`),
        params,
      );
    },
  };
}

/** Creates an empty database and returns its URL and a drop function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = await serverUrl();
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        await dropDatabase(c, name);
        await dropInstallation(c, name);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Drops database `name`, ending its sessions. Where the platform role is not a superuser (CI's PostgreSQL 15) it may
 * end only its own roles' sessions: a session it may not end (an autovacuum worker, which has no role) makes `with
 * (force)` fail with 42501, so the drop is tried again until those have left.
 */
async function dropDatabase(c: pg.Client, name: string): Promise<void> {
  let last: unknown;
  await waitFor(
    async () => {
      try {
        await c.query(`drop database if exists ${name} with (force)`);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code !== '42501') throw err;
        const { rows } = await c.query<{ who: string }>(
          `select coalesce(usename, backend_type) || ' (' || coalesce(state, '') || ')' as who from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
          [name],
        );
        last = `${(err as Error).message}; still connected: ${rows.map((r) => r.who).join(', ') || 'nobody'}`;
        return false;
      }
    },
    { timeoutMs: 20_000, intervalMs: 200, message: `database ${name} to be dropped` },
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${String(last)}`);
  });
}

/**
 * Drops what a platform on database `name` left on the server beside it: its projects' databases, its project
 * template and its projects' roles (all named `<kind>_<digest of name>_…`, see subgraphs/data/services/names.ts).
 */
export async function dropInstallation(c: pg.Client, name: string): Promise<void> {
  const d = installationDigest(name);
  const { rows: dbs } = await c.query<{ datname: string }>(
    `select datname from pg_database where starts_with(datname, $1) or starts_with(datname, $2)`,
    [`tsp_${d}_`, `tst_${d}_`],
  );
  for (const r of dbs) await c.query(`drop database if exists "${r.datname}" with (force)`).catch(() => {});
  const { rows: roles } = await c.query<{ rolname: string }>(
    'select rolname from pg_roles where starts_with(rolname, $1) order by rolname desc',
    [`tsr_${d}_`],
  );
  for (const r of roles) await c.query(`drop role if exists "${r.rolname}"`).catch(() => {});
}

/** Stops the server this file started itself, if any. */
export async function stopOwnServer(): Promise<void> {
  await own?.stop();
  own = undefined;
}
