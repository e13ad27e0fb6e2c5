// A move whose process is killed (SIGKILL, issue 29 item 3): killed before the switch (during the copy, during the
// verification under the hold), the project keeps working on its source at once, and the move's job, taken over once
// its lock lapses, marks it failed and removes what it made (the copy, the subscription, the publication and slots);
// killed after the switch (waiting to drop the source), the project works on its target and the job finishes the move.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createSecretBox } from '../../../platform/crypto.ts';
import { freePort } from '../../../platform/net.ts';
import { client, type Res } from '../../support/http.ts';
import { startPgServers, type TestPgServer } from '../../support/pg-servers.ts';
import { startProcess, stopProcess, TEST_OPERATOR_KEY, TEST_SECRET, tmpDataDir } from '../../support/platform.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createProject, dataCall, signIn, type Call, type DataProject } from './data-support.ts';

let a: TestPgServer;
let b: TestPgServer;
let child: ChildProcess | undefined;
let env: Record<string, string>;
let url: string;
let dataDir: string;
let call: Call;
let platformDb: pg.Client;
let tenantToken: string;
let projects: Record<'copy' | 'verify' | 'drop', DataProject>;
/** Rows enough for the copy and the verification to last while the test kills the process. */
const ROWS = 300_000;

const operator = (method: string, p: string, body?: unknown): Promise<Res> =>
  call(method, p, { token: TEST_OPERATOR_KEY, body });

async function start(): Promise<void> {
  child = await startProcess([path.resolve('main.ts')], env, `${url}/health`);
}

async function count(server: TestPgServer, sql: string, params: unknown[] = []): Promise<number> {
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rowCount!;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  [a, b] = await startPgServers(2);
  const name = `tessera_kill_${crypto.randomBytes(4).toString('hex')}`;
  await count(a, `create database ${name}`);
  dataDir = tmpDataDir();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  env = {
    PORT: String(port),
    DATABASE_URL: a.urlOf(name),
    TESSERA_DATA_DIR: dataDir,
    TESSERA_INTERNAL_SECRET: TEST_SECRET,
    TESSERA_OPERATOR_KEY: TEST_OPERATOR_KEY,
    TESSERA_DEFAULT_PLAN: 'self-hosted',
    LOG_LEVEL: 'warn',
  };
  await start();
  call = client(url);
  platformDb = new pg.Client({ connectionString: a.urlOf(name) });
  await platformDb.connect();
  tenantToken = await signIn(call);
  // The projects are made on the default server (A), then B is registered.
  projects = {
    copy: await projectWith(ROWS),
    verify: await projectWith(ROWS),
    drop: await projectWith(1_000),
  };
  const sealed = createSecretBox(TEST_SECRET, 'data:servers').encrypt(b.url);
  await platformDb.query(`insert into data_servers (id, url_sealed) values ('b', $1)`, [sealed]);
}, 180_000);

afterAll(async () => {
  if (child) await stopProcess(child);
  await platformDb?.end();
  await Promise.all([a?.stop(), b?.stop()]);
  fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

/** A project on A with `rows` rows in `items`. */
async function projectWith(rows: number): Promise<DataProject> {
  const project = await createProject(call, tenantToken, 'killed move');
  const data = dataCall(call, project.apiKey);
  expect((await data('rawSQL', { sql: 'create table items (id bigserial primary key, n int, pad text)' })).status).toBe(
    200,
  );
  // The rows go in on the server itself: through the data API, one insert of 300,000 rows is a long statement,
  // lowered to nice 19, and on a loaded machine it ran past the statement timeout (a 408 in a CI run at load ~5).
  const { db } = await serverOf(project.id);
  const c = new pg.Client({ connectionString: a.urlOf(db) });
  await c.connect();
  try {
    const { schemaname } = (
      await c.query<{ schemaname: string }>(`select schemaname from pg_tables where tablename = 'items'`)
    ).rows[0]!;
    await c.query(
      `insert into ${pg.escapeIdentifier(schemaname)}.items (n, pad) select g, repeat('x', 200) from generate_series(1, ${rows}) g`,
    );
  } finally {
    await c.end();
  }
  return project;
}

/** Starts a move and kills the process as soon as the move reaches `phase` (read straight from the platform database). */
async function killAt(project: DataProject, phase: string): Promise<string> {
  const asked = await operator('POST', `/admin/api/v1/projects/${project.id}/move`, { server: 'b' });
  expect(asked.status).toBe(202);
  const id = asked.body.move.id as string;
  await waitFor(
    async () =>
      (await platformDb.query(`select 1 from data_moves where id = $1 and phase = $2`, [id, phase])).rowCount === 1,
    { timeoutMs: 60_000, intervalMs: 10, message: `the move's phase ${phase}` },
  );
  child!.kill('SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  await start();
  return id;
}

async function moveState(id: string): Promise<{ state: string; error_code: string | null; phase: string }> {
  return (await platformDb.query('select state, error_code, phase from data_moves where id = $1', [id])).rows[0];
}

async function serverOf(projectId: string): Promise<{ server: string; db: string }> {
  const r = (
    await platformDb.query('select server_id, database_name from data_project_roles where project_id = $1', [projectId])
  ).rows[0];
  return { server: r.server_id, db: r.database_name };
}

describe('a move whose process is killed', () => {
  it.each([['copy' as const], ['verify' as const]])(
    'killed at %s: the project keeps working on its source, and the move is undone',
    async (phase) => {
      const rows = ROWS;
      const project = projects[phase];
      const id = await killAt(project, phase);
      // At once, on the source: reads and writes.
      const data = dataCall(call, project.apiKey);
      const write = await data('insert', { table: 'items', values: { n: -1 } });
      expect(write.status).toBe(201);
      const total = await data('rawSQL', { sql: 'select count(*)::int as c from items' });
      expect(total.body.rows[0].c).toBe(rows + 1);
      const { server, db } = await serverOf(project.id);
      expect(server).toBe('default');
      // Once the job's lock lapsed, the restarted process undoes the move.
      await waitFor(async () => (await moveState(id)).state === 'failed', {
        timeoutMs: 90_000,
        intervalMs: 500,
        message: 'the killed move marked failed',
      });
      expect(await moveState(id)).toMatchObject({ state: 'failed', error_code: 'MOVE_FAILED' });
      expect(await count(b, 'select 1 from pg_database where datname = $1', [db])).toBe(0);
      expect(await count(b, 'select 1 from pg_subscription')).toBe(0);
      expect(await count(a, `select 1 from pg_replication_slots where database = $1`, [db])).toBe(0);
      expect(await count(a, 'select 1 from pg_database where datname = $1', [db])).toBe(1);
      // Still working on the source.
      expect((await data('insert', { table: 'items', values: { n: -2 } })).status).toBe(201);
      expect((await data('rawSQL', { sql: 'select count(*)::int as c from items' })).body.rows[0].c).toBe(rows + 2);
    },
    240_000,
  );

  it('killed after the switch: the project works on its target, and the move is finished', async () => {
    const project = projects.drop;
    const id = await killAt(project, 'drop');
    const data = dataCall(call, project.apiKey);
    expect((await serverOf(project.id)).server).toBe('b');
    expect((await data('insert', { table: 'items', values: { n: -1 } })).status).toBe(201);
    expect((await data('rawSQL', { sql: 'select count(*)::int as c from items' })).body.rows[0].c).toBe(1_001);
    await waitFor(async () => (await moveState(id)).state === 'done', {
      timeoutMs: 90_000,
      intervalMs: 500,
      message: 'the killed move finished',
    });
    const { db } = await serverOf(project.id);
    expect(await count(a, 'select 1 from pg_database where datname = $1', [db])).toBe(0);
    expect(await count(b, 'select 1 from pg_database where datname = $1', [db])).toBe(1);
  }, 240_000);

  it('with its target server gone mid-copy: the move fails at once and the project keeps working on its source', async () => {
    const project = projects.copy; // its earlier move was undone: it lives on A
    expect((await serverOf(project.id)).server).toBe('default');
    const asked = await operator('POST', `/admin/api/v1/projects/${project.id}/move`, { server: 'b' });
    expect(asked.status).toBe(202);
    const id = asked.body.move.id as string;
    await waitFor(
      async () =>
        (await platformDb.query(`select 1 from data_moves where id = $1 and phase = 'copy'`, [id])).rowCount === 1,
      { timeoutMs: 60_000, intervalMs: 10, message: 'the copy' },
    );
    await b.stop();
    await waitFor(async () => (await moveState(id)).state === 'failed', {
      timeoutMs: 60_000,
      intervalMs: 200,
      message: 'the move failed',
    });
    const { server, db } = await serverOf(project.id);
    expect(server).toBe('default');
    // Nothing of the move is left on the source (its publication and slots; the target's leftovers go with its next move).
    expect(await count(a, `select 1 from pg_replication_slots where database = $1`, [db])).toBe(0);
    const data = dataCall(call, project.apiKey);
    expect((await data('insert', { table: 'items', values: { n: -3 } })).status).toBe(201);
    expect((await data('rawSQL', { sql: 'select count(*)::int as c from items' })).body.rows[0].c).toBe(ROWS + 3);
  }, 120_000);
});
