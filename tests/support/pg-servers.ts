// Extra PostgreSQL servers for tests that need more than one (moves of a project between servers, the fleet): each
// is the machine's PostgreSQL 15 (/usr/lib/postgresql/15/bin, TESSERA_TEST_PG15_BIN to point elsewhere) in a folder
// of its own under the OS temp folder, on a free loopback port, with logical decoding on and password (SCRAM) logins
// on 127.0.0.1 only. `stop()` ends the server and removes its folder; every server a process started is also killed
// (immediate shutdown) and removed when the process exits, so a test file that fails halfway leaves no postgres behind.
// Running as root, initdb and postgres run as the `postgres` system user (both refuse root), like the embedded server.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedPostgresUser } from '../../platform/data-dir.ts';
import { freePort } from '../../platform/net.ts';
import { waitFor } from './wait-for.ts';

export const PG15_BIN = process.env.TESSERA_TEST_PG15_BIN || '/usr/lib/postgresql/15/bin';

export type TestPgServer = {
  /** The superuser's URL (database `postgres`). */
  url: string;
  port: number;
  /** The server's major version (15). */
  major: number;
  /** Whether pgvector was created in template1's schema `extensions` (the PostgreSQL installation has it). */
  pgvector: boolean;
  /** The URL of database `name` on this server, as `user` (default: the superuser) with `password`. */
  urlOf: (database: string, user?: { name: string; password: string }) => string;
  /** Stops the server (fast shutdown) and removes its folder. Idempotent. */
  stop: () => Promise<void>;
};

/** Whether this machine has the PostgreSQL binaries the helper needs. */
export function pg15Available(): boolean {
  return ['initdb', 'postgres'].every((b) => fs.existsSync(path.join(PG15_BIN, b)));
}

type Running = { child: ChildProcess; dir: string };
const running = new Set<Running>();
let exitHooked = false;

/** Last resort (a test file that threw past its afterAll, a worker ending): immediate shutdown and the folder gone. */
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const r of running) {
      try {
        if (r.child.pid && r.child.exitCode === null) process.kill(r.child.pid, 'SIGQUIT');
      } catch {
        // already gone
      }
      fs.rmSync(r.dir, { recursive: true, force: true });
    }
  });
}

/**
 * Starts one PostgreSQL server: initdb (UTF8, C locale, superuser `postgres` with a random password), then postgres
 * with `settings` on top of the defaults below. Resolves once it accepts the superuser's login.
 */
export async function startPgServer(settings: Record<string, string | number> = {}): Promise<TestPgServer> {
  if (!pg15Available()) throw new Error(`no PostgreSQL binaries in ${PG15_BIN}`);
  hookExit();
  const owner = embeddedPostgresUser();
  // The OS temp folder is world-traversable; the server's own folder is given to the user it runs as.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-pg-'));
  const data = path.join(dir, 'data');
  const password = crypto.randomBytes(18).toString('base64url');
  const pwfile = path.join(dir, 'pw');
  fs.writeFileSync(pwfile, password, { mode: 0o600 });
  if (owner) {
    fs.chownSync(dir, owner.uid, owner.gid);
    fs.chownSync(pwfile, owner.uid, owner.gid);
  }
  const as = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const init = spawnSync(
    path.join(PG15_BIN, 'initdb'),
    [
      '-D',
      data,
      '-U',
      'postgres',
      `--pwfile=${pwfile}`,
      '--auth-local=scram-sha-256',
      '--auth-host=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
    ],
    { ...as, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } },
  );
  fs.rmSync(pwfile, { force: true });
  if (init.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}): ${init.stderr || init.error?.message}`);
  }
  const port = await freePort();
  const conf: Record<string, string | number> = {
    port,
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    wal_level: 'logical',
    max_replication_slots: 20,
    max_wal_senders: 20,
    max_logical_replication_workers: 8,
    max_worker_processes: 16,
    max_connections: 200,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    shared_buffers: '32MB',
    ...settings,
  };
  const args = ['-D', data, ...Object.entries(conf).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const child = spawn(path.join(PG15_BIN, 'postgres'), args, { ...as, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-20_000);
  });
  const entry: Running = { child, dir };
  running.add(entry);
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const stop = async (): Promise<void> => {
    if (!running.has(entry)) return;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT'); // fast shutdown: sessions ended, no checkpoint wait beyond the shutdown one
      await exited;
    }
    running.delete(entry);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`postgres exited (${child.exitCode}): ${log}`);
        const c = new pg.Client({ connectionString: url });
        c.on('error', () => {});
        try {
          await c.connect();
          await c.end();
          return true;
        } catch {
          await c.end().catch(() => {});
          return false;
        }
      },
      { timeoutMs: 30_000, intervalMs: 100, message: `PostgreSQL 15 on port ${port}` },
    );
    let pgvector = false;
    const admin = new pg.Client({ connectionString: url.replace(/\/postgres$/, '/template1') });
    await admin.connect();
    try {
      const available = await admin.query(`select 1 from pg_available_extensions where name = 'vector'`);
      if (available.rowCount) {
        await admin.query(
          'create schema if not exists extensions; create extension if not exists vector schema extensions; grant usage on schema extensions to public',
        );
        pgvector = true;
      }
    } finally {
      await admin.end();
    }
    return {
      url,
      port,
      major: 15,
      pgvector,
      urlOf: (database, user) => {
        const u = new URL(url);
        u.pathname = `/${encodeURIComponent(database)}`;
        if (user) {
          u.username = encodeURIComponent(user.name);
          u.password = encodeURIComponent(user.password);
        }
        return u.toString();
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Starts `n` servers side by side; if one fails, the others are stopped. */
export async function startPgServers(n: number, settings?: Record<string, string | number>): Promise<TestPgServer[]> {
  const started = await Promise.allSettled(Array.from({ length: n }, () => startPgServer(settings)));
  const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(ok.map((s) => s.stop()));
    throw failed.reason;
  }
  return ok;
}
