// Online moves of a project's database between project servers (issue 29 item 3), end to end: a platform whose
// projects live on two real PostgreSQL 15 servers (tests/support/pg-servers.ts); the operator moves a project under a
// steady write load (no acknowledged write lost, nothing failed but documented 503s in the switch window, realtime
// subscribers keep receiving), drains a server, and nobody but the operator may do either.
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createSecretBox } from '../../../platform/crypto.ts';
import { client, type Res } from '../../support/http.ts';
import { runCli, type CliRun } from '../../support/cli.ts';
import { startPgServers, type TestPgServer } from '../../support/pg-servers.ts';
import {
  startOneProcess,
  TEST_OPERATOR_KEY,
  TEST_SECRET,
  tmpDataDir,
  type TestPlatform,
} from '../../support/platform.ts';
import { startTessera, type Tessera } from '../../../main.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createProject, dataCall, publish, signIn, sseText, type Call, type DataProject } from './data-support.ts';

let a: TestPgServer;
let b: TestPgServer;
let platform: TestPlatform;
let call: Call;
let platformDb: pg.Client;
let tenantToken: string;
/** A second instance of the install (another process would do the same): its own data services, broadcast listeners and scheduler. */
let other: Tessera;

const operator = (method: string, path: string, body?: unknown): Promise<Res> =>
  call(method, path, { token: TEST_OPERATOR_KEY, body });

/** Registers server `id` (its URL sealed as the fleet seals it); the fleet reads it when it is first named. */
async function registerServer(id: string, server: TestPgServer): Promise<void> {
  const sealed = createSecretBox(TEST_SECRET, 'data:servers').encrypt(server.url);
  await platformDb.query(`insert into data_servers (id, url_sealed) values ($1, $2)`, [id, sealed]);
}

async function serverOf(projectId: string): Promise<string> {
  const { rows } = await platformDb.query<{ server_id: string }>(
    'select server_id from data_project_roles where project_id = $1',
    [projectId],
  );
  return rows[0]!.server_id;
}

async function databaseOn(server: TestPgServer, projectId: string): Promise<boolean> {
  const { rows } = await platformDb.query<{ database_name: string }>(
    'select database_name from data_project_roles where project_id = $1',
    [projectId],
  );
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  try {
    return (await c.query('select 1 from pg_database where datname = $1', [rows[0]!.database_name])).rowCount === 1;
  } finally {
    await c.end();
  }
}

/** Runs `tessera args...` as the operator runs it (a child process; TESSERA_OPERATOR_KEY unless `env` says otherwise). */
function tessera(
  args: string[],
  env: Record<string, string> = { TESSERA_OPERATOR_KEY: TEST_OPERATOR_KEY },
): Promise<CliRun> {
  return runCli(args, {
    url: platform.url,
    home: os.tmpdir(),
    configDir: path.join(os.tmpdir(), 'tessera-move-cli'),
    env,
  });
}

/** Waits for the move to end; answers it. */
async function moveEnds(id: string): Promise<Record<string, unknown>> {
  return await waitFor(
    async () => {
      const res = await operator('GET', `/admin/api/v1/moves/${id}`);
      expect(res.status).toBe(200);
      return ['done', 'failed'].includes(res.body.move.state) ? res.body.move : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200, message: `move ${id} to end` },
  );
}

/**
 * The values the write loads stored (n > 0), as one array in one row: the loads of every test add up, and a fast
 * machine acknowledges more than TESSERA_DATA_MAX_ROWS (10,000) rows a rawSQL may answer (413).
 */
async function storedValues(data: ReturnType<typeof dataCall>): Promise<Set<number>> {
  const res = await data('rawSQL', { sql: "select coalesce(array_agg(n), '{}') as ns from items where n > 0" });
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 200, error: undefined });
  return new Set(res.body.rows[0].ns as number[]);
}

/** Inserts through the data API until stopped: the acknowledged values, the 503s (with Retry-After) and anything else. */
function writeLoad(project: DataProject, via: Call = call) {
  const data = dataCall(via, project.apiKey);
  const acked: number[] = [];
  const held: number[] = [];
  const failed: string[] = [];
  let next = 0;
  let stopped = false;
  const writer = async (): Promise<void> => {
    while (!stopped) {
      const n = ++next;
      const res = await data('insert', { table: 'items', values: { n } });
      if (res.status === 201) acked.push(n);
      else if (res.status === 503 && res.headers.get('retry-after')) held.push(n);
      else failed.push(`${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  const reader = async (): Promise<void> => {
    while (!stopped) {
      const res = await data('find', { table: 'items', limit: 1 });
      if (res.status !== 200 && !(res.status === 503 && res.headers.get('retry-after')))
        failed.push(`read: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  const running = Promise.all([writer(), writer(), reader()]);
  return {
    acked,
    held,
    failed,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

beforeAll(async () => {
  [a, b] = await startPgServers(2);
  // The platform database on server A too: projects go to the configured server (`default`, A) until B is registered.
  const name = `tessera_move_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: a.url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  // No plan caps: the write load is the point, not the request rate limit.
  platform = await startOneProcess({ DATABASE_URL: a.urlOf(name), TESSERA_DEFAULT_PLAN: 'self-hosted' });
  other = await startTessera({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: a.urlOf(name),
    TESSERA_DATA_DIR: tmpDataDir(),
    TESSERA_INTERNAL_SECRET: TEST_SECRET,
    TESSERA_DEFAULT_PLAN: 'self-hosted',
    TESSERA_OPERATOR_KEY: TEST_OPERATOR_KEY,
  });
  call = client(platform.url);
  platformDb = new pg.Client({ connectionString: a.urlOf(name) });
  await platformDb.connect();
  tenantToken = await signIn(call);
}, 120_000);

afterAll(async () => {
  await other?.close();
  await platformDb?.end();
  await platform?.close();
  await Promise.all([a?.stop(), b?.stop()]);
}, 60_000);

describe('moving a project database to another server', () => {
  let project: DataProject;

  it('moves a project under a steady write load: no acknowledged write lost, only 503s with Retry-After, realtime goes on', async () => {
    project = await createProject(call, tenantToken, 'moving');
    const data = dataCall(call, project.apiKey);
    expect(
      (await data('rawSQL', { sql: 'create table items (id bigserial primary key, n int not null)' })).status,
    ).toBe(200);
    expect(
      (await data('rawSQL', { sql: 'insert into items (n) select -g from generate_series(1, 20000) g' })).status,
    ).toBe(200);
    await publish(call, project, 'items');
    expect(await serverOf(project.id)).toBe('default');
    await registerServer('b', b);

    const sse = await sseText(
      platform.url,
      project.apiKey,
      'subscription { dataChanges(table: "items") { operation row } }',
    );
    try {
      const load = writeLoad(project);
      let move: Record<string, unknown>;
      try {
        await waitFor(() => load.acked.length > 20, { message: 'writes before the move' });
        const asked = await operator('POST', `/admin/api/v1/projects/${project.id}/move`, { server: 'b' });
        expect(asked.status).toBe(202);
        expect(asked.body.move).toMatchObject({
          project_id: project.id,
          from_server: 'default',
          to_server: 'b',
          state: 'queued',
        });
        move = await moveEnds(asked.body.move.id);
        // Writes go on after the move, on the new server.
        const after = load.acked.length;
        await waitFor(() => load.acked.length > after + 20, { message: 'writes after the move' });
      } finally {
        await load.stop();
      }

      expect(move).toMatchObject({ state: 'done', phase: 'done', mode: 'logical', error: null });
      // The operator's action is in the audit log (written with the move's row).
      const audited = await operator('GET', `/admin/api/v1/audit?action=project.move&target_id=${project.id}`);
      expect(audited.body.entries[0]).toMatchObject({
        action: 'project.move',
        target_id: project.id,
        details: { move: move.id, from: 'default', to: 'b' },
      });
      expect(move.tables).toEqual(
        expect.arrayContaining([{ table: `p_${project.id.replace(/-/g, '')}.items`, rows: expect.any(Number) }]),
      );
      expect(load.failed).toEqual([]);
      expect(await serverOf(project.id)).toBe('b');
      // Every acknowledged write is there, read through the data API (on B now).
      const stored = await storedValues(data);
      expect(load.acked.filter((n) => !stored.has(n))).toEqual([]);
      expect((await data('rawSQL', { sql: 'select count(*)::int as c from items where n < 0' })).body.rows[0].c).toBe(
        20000,
      );
      // The subscriber heard changes made after the switch (the listener followed the project to B).
      const last = load.acked.at(-1)!;
      await waitFor(() => sse.text().includes(`"n":${last}`), { message: 'a change made on the new server' });
    } finally {
      await sse.close();
    }
    // The source is dropped once the switch is confirmed; the copy lives on B.
    expect(await databaseOn(b, project.id)).toBe(true);
    expect(await databaseOn(a, project.id)).toBe(false);
    // Nothing of the replication is left on either server.
    const slots = await new pg.Client({ connectionString: a.url });
    await slots.connect();
    expect(
      (await slots.query(`select 1 from pg_replication_slots where slot_name like 'tessera_move_%'`)).rowCount,
    ).toBe(0);
    await slots.end();
  }, 180_000);

  it.each([
    ['an anonymous caller', {}, 401],
    ['a tenant token (even the owner)', { token: () => tenantToken }, 403],
    ["the project's own secret key", { apiKey: () => project.apiKey }, 403],
  ])('refuses %s', async (_, who, status) => {
    const creds = {
      ...('token' in who ? { token: (who.token as () => string)() } : {}),
      ...('apiKey' in who ? { apiKey: (who.apiKey as () => string)() } : {}),
    };
    const move = await call('POST', `/admin/api/v1/projects/${project.id}/move`, {
      ...creds,
      body: { server: 'default' },
    });
    expect(move.status).toBe(status);
    expect(move.body.error.code).toBe(status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN');
    const drain = await call('POST', '/admin/api/v1/servers/b/drain', creds);
    expect(drain.status).toBe(status);
    const list = await call('GET', '/admin/api/v1/moves', creds);
    expect(list.status).toBe(status);
    // The neighbour is intact: the project stays where it was.
    expect(await serverOf(project.id)).toBe('b');
  });

  it('answers bad moves with clear 4xx in the documented shape', async () => {
    const cases: [string, unknown, number, string][] = [
      [`/admin/api/v1/projects/${project.id}/move`, { server: 'nope' }, 400, 'VALIDATION_FAILED'],
      [`/admin/api/v1/projects/${project.id}/move`, {}, 400, 'BAD_USER_INPUT'],
      [`/admin/api/v1/projects/${project.id}/move`, { server: 'b' }, 409, 'CONFLICT'],
      [`/admin/api/v1/projects/${crypto.randomUUID()}/move`, { server: 'default' }, 404, 'NOT_FOUND'],
      ['/admin/api/v1/projects/not-a-uuid/move', { server: 'default' }, 404, 'NOT_FOUND'],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await operator('POST', path, body);
      expect({ path, body, status: res.status, code: res.body.error?.code }).toEqual({ path, body, status, code });
      expect(typeof res.body.error.message).toBe('string');
    }
    expect((await operator('GET', `/admin/api/v1/moves/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await operator('GET', '/admin/api/v1/moves/x')).status).toBe(404);
    expect((await operator('POST', '/admin/api/v1/servers/nope/drain')).status).toBe(404);
  });

  it('holds the writes arriving through another instance too, which then follow the move', async () => {
    // The load and a realtime subscriber on the second instance; the move asked of the first (its job runs on either).
    const via = client(other.url);
    const sse = await sseText(
      other.url,
      project.apiKey,
      'subscription { dataChanges(table: "items") { operation row } }',
    );
    try {
      const load = writeLoad(project, via);
      let move: Record<string, unknown>;
      try {
        await waitFor(() => load.acked.length > 20, { message: 'writes before the move' });
        const asked = await operator('POST', `/admin/api/v1/projects/${project.id}/move`, { server: 'default' });
        expect(asked.status).toBe(202);
        move = await moveEnds(asked.body.move.id);
        const after = load.acked.length;
        await waitFor(() => load.acked.length > after + 20, { message: 'writes after the move' });
      } finally {
        await load.stop();
      }
      expect(move).toMatchObject({
        error: null,
        state: 'done',
        from_server: 'b',
        to_server: 'default',
        mode: 'logical',
      });
      expect(load.failed).toEqual([]);
      expect(await serverOf(project.id)).toBe('default');
      const stored = await storedValues(dataCall(via, project.apiKey));
      expect(load.acked.filter((n) => !stored.has(n))).toEqual([]);
      const last = load.acked.at(-1)!;
      await waitFor(() => sse.text().includes(`"n":${last}`), {
        message: 'a change made after the move, on the other instance',
      });
    } finally {
      await sse.close();
    }
  }, 180_000);

  it('moves a project with the command line: tessera admin projects move ID --to SERVER --wait', async () => {
    const run = await tessera(['admin', 'projects', 'move', project.id, '--to', 'b', '--wait', '--yes', '--json']);
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ project_id: project.id, from_server: 'default', to_server: 'b', state: 'done' });
    expect(await serverOf(project.id)).toBe('b');
    expect(
      (await dataCall(call, project.apiKey)('find', { table: 'items', select: ['n'], where: { n: -7 } })).body.rows,
    ).toEqual([{ n: -7 }]);
    const listed = await tessera(['admin', 'moves', 'list', '--project', project.id, '--json']);
    expect(listed.code).toBe(0);
    expect(listed.json().map((m: { state: string }) => m.state)).toEqual(['done', 'done', 'done']);
    // Usage errors and refusals have their exit codes: no --to (2), an unknown project (5), no operator key (3).
    expect((await tessera(['admin', 'projects', 'move', project.id, '--yes'])).code).toBe(2);
    expect((await tessera(['admin', 'projects', 'move', crypto.randomUUID(), '--to', 'default', '--yes'])).code).toBe(
      5,
    );
    expect((await tessera(['admin', 'moves', 'list'], {})).code).toBe(3);
  }, 120_000);

  it('drains a server: every project on it moves to an active server, a few at a time', async () => {
    // Two more projects placed on B: the default server takes no new project while they are made (read-only).
    await platformDb.query(`update data_servers set state = 'read-only' where id = 'default'`);
    const more = [await createProject(call, tenantToken, 'drain 1'), await createProject(call, tenantToken, 'drain 2')];
    for (const p of more) {
      const d = dataCall(call, p.apiKey);
      expect((await d('rawSQL', { sql: 'create table t (id serial primary key, v text)' })).status).toBe(200);
      expect((await d('insert', { table: 't', values: [{ v: 'x' }, { v: 'y' }] })).status).toBe(201);
    }
    await platformDb.query(`update data_servers set state = 'active' where id = 'default'`);
    const onB = async () =>
      (await platformDb.query(`select project_id from data_project_roles where server_id = 'b'`)).rows.map(
        (r) => r.project_id,
      );
    const before = await onB();
    expect(before.sort()).toEqual([project, ...more].map((p) => p.id).sort());
    const res = await operator('POST', '/admin/api/v1/servers/b/drain');
    expect(res.status).toBe(202);
    expect(res.body.drain).toEqual({ server: 'b', state: 'draining' });
    const drainAudit = await operator('GET', '/admin/api/v1/audit?action=server.drain&target_id=b');
    expect(drainAudit.body.entries[0]).toMatchObject({ action: 'server.drain', target_id: 'b' });
    await waitFor(async () => (await onB()).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
      message: 'B drained',
    });
    const moves = await operator('GET', '/admin/api/v1/moves?drain_of=b');
    expect(moves.status).toBe(200);
    expect(moves.body.moves.map((m: { project_id: string }) => m.project_id).sort()).toEqual([...before].sort());
    await waitFor(
      async () =>
        (await operator('GET', '/admin/api/v1/moves?drain_of=b')).body.moves.every(
          (m: { state: string }) => m.state === 'done',
        ),
      { timeoutMs: 30_000, message: 'every drain move done' },
    );
    // Their data came along and they keep working on the default server.
    for (const p of [project, ...more]) {
      expect(await serverOf(p.id)).toBe('default');
      const d = dataCall(call, p.apiKey);
      expect(
        (await d('insert', { table: p === project ? 'items' : 't', values: p === project ? { n: 0 } : { v: 'z' } }))
          .status,
      ).toBe(201);
    }
    expect(
      (await dataCall(call, more[0]!.apiKey)('find', { table: 't', orderBy: 'id' })).body.rows.map(
        (r: { v: string }) => r.v,
      ),
    ).toEqual(['x', 'y', 'z']);
    // A draining server takes no move.
    const refused = await operator('POST', `/admin/api/v1/projects/${project.id}/move`, { server: 'b' });
    expect(refused.status).toBe(409);
  }, 240_000);
});
