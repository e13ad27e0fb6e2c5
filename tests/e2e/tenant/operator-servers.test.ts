// The operator's fleet of project servers end to end (issue 29 items 1 and 4), with a second real PostgreSQL server
// (the machine's PostgreSQL 15, tests/support/pg-servers.ts): register -> listed healthy; placement by fewest projects
// per weight among active servers (read-only, draining and weight 0 get none); a project on the second server works;
// a changed URL (checked, and the project still working over it); remove refused while it holds projects; bad URLs
// refused naming `url`; the audit log; /metrics per server; and the
// URL's password in no answer, no log line and no audit entry.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { startPgServer, type TestPgServer } from '../../support/pg-servers.ts';
import { waitFor } from '../../support/wait-for.ts';

const OPERATOR_KEY = `top_${'v'.repeat(43)}`;
const PASSWORD = 'a long password';

let p: TestPlatform;
let pg2: TestPgServer;
let call: ReturnType<typeof client>;
let tenantToken: string;
/** Every answer the operator got, as text (the password must be in none). */
const answers: string[] = [];
/** Every log line of the platform. */
const logLines: string[] = [];

const op = async (method: string, path: string, body?: unknown): Promise<Res> => {
  const res = await call(method, `/admin/api/v1${path}`, { token: OPERATOR_KEY, body });
  answers.push(JSON.stringify(res.body ?? null));
  return res;
};
const passwordOf = (url: string) => decodeURIComponent(new URL(url).password);

function expectError(res: Res, status: number, code: string, mentions?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (mentions) expect(res.body.error.message).toMatch(mentions);
}

/** A new project of the test's tenant, and the server its database was placed on. */
async function newProject(name: string): Promise<{ id: string; apiKey: string; server: string }> {
  const created = await call('POST', '/auth/api/v1/projects', { token: tenantToken, body: { name } });
  expect(created.status).toBe(201);
  const id = created.body.project.id as string;
  // Its database is made on `project.created` (placement happens then): wait for the row.
  const server = await waitFor(async () => (await op('GET', `/projects/${id}`)).body.server as string | null);
  return { id, apiKey: created.body.project.api_key, server };
}

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  [pg2, p] = await Promise.all([
    startPgServer(),
    startOneProcess(
      { TESSERA_OPERATOR_KEY: OPERATOR_KEY, TESSERA_DEFAULT_PLAN: 'self-hosted' },
      pino({ level: 'debug' }, sink),
    ),
  ]);
  call = client(p.url);
  await call('POST', '/auth/api/v1/tenants/signup', { body: { email: 'fleet@example.com', password: PASSWORD } });
  const login = await call('POST', '/auth/api/v1/tenant/login', {
    body: { email: 'fleet@example.com', password: PASSWORD },
  });
  tenantToken = login.body.access_token;
}, 120_000);

afterAll(async () => {
  await p?.close();
  await pg2?.stop();
}, 60_000);

describe('the operator registers project servers', () => {
  it('lists the default server alone, healthy, before any is registered', async () => {
    const res = await op('GET', '/servers');
    expect(res.status).toBe(200);
    expect(res.body.servers).toHaveLength(1);
    const [d] = res.body.servers;
    expect(d).toMatchObject({ id: 'default', state: 'active', weight: 1, built_in: true, projects: 0 });
    expect(d.health).toMatchObject({ reachable: true, error: null });
    expect(d.health.max_connections).toBeGreaterThan(0);
    expect(d.url).not.toMatch(/:[^/@]*@/); // no password between the user and the host
  });

  it('adds a second server: listed healthy, its URL shown without the password', async () => {
    const added = await op('POST', '/servers', { id: 'pg2', url: pg2.url, weight: 1 });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      id: 'pg2',
      state: 'active',
      weight: 1,
      built_in: false,
      projects: 0,
      host: '127.0.0.1',
      port: pg2.port,
      database: 'postgres',
      user: 'postgres',
      url: `postgres://postgres@127.0.0.1:${pg2.port}/postgres`,
    });
    expect(added.body.health).toMatchObject({ reachable: true, error: null, max_connections: 200, database_bytes: 0 });
    expect(added.body.health.version).toMatch(/^15\./);
    const list = await op('GET', '/servers');
    expect(list.body.servers.map((s: { id: string }) => s.id)).toEqual(['default', 'pg2']);
    expect((await op('GET', '/servers/pg2')).body.health.reachable).toBe(true);
  });

  it('refuses bad input with a 4xx naming the field', async () => {
    expectError(await op('POST', '/servers', { id: 'pg2', url: pg2.url }), 409, 'CONFLICT');
    expectError(await op('POST', '/servers', { id: 'Bad Id', url: pg2.url }), 400, 'VALIDATION_FAILED', /id/);
    expectError(await op('POST', '/servers', { id: 'pg9', url: 'not a url' }), 400, 'VALIDATION_FAILED', /url/);
    expectError(await op('POST', '/servers', { id: 'pg9', url: 'mysql://h/db' }), 400, 'VALIDATION_FAILED', /url/);
    expectError(
      await op('POST', '/servers', { id: 'pg9', url: pg2.url, weight: -1 }),
      400,
      'VALIDATION_FAILED',
      /weight/,
    );
    expectError(
      await op('POST', '/servers', { id: 'pg9', url: pg2.url, state: 'asleep' }),
      400,
      'VALIDATION_FAILED',
      /state/,
    );
    expectError(await op('GET', '/servers/nowhere'), 404, 'NOT_FOUND');
    expectError(await op('PATCH', '/servers/default', { url: pg2.url }), 400, 'BAD_REQUEST', /url/);
  });

  it('refuses a server it cannot reach, a wrong password and a role without CREATEDB, naming `url`', async () => {
    const unreachable = await op('POST', '/servers', { id: 'pg9', url: 'postgres://postgres:pw@127.0.0.1:1/postgres' });
    expectError(unreachable, 400, 'BAD_REQUEST', /url/);
    const wrong = new URL(pg2.url);
    wrong.password = 'wrong-password-123';
    expectError(await op('POST', '/servers', { id: 'pg9', url: wrong.toString() }), 400, 'BAD_REQUEST', /url/);
    const su = new pg.Client({ connectionString: pg2.url });
    await su.connect();
    await su.query(`create role weak login password 'weak-password-456'`);
    await su.end();
    const weak = await op('POST', '/servers', {
      id: 'pg9',
      url: pg2.urlOf('postgres', { name: 'weak', password: 'weak-password-456' }),
    });
    expectError(weak, 400, 'BAD_REQUEST', /url.*CREATEDB/);
    expect(answers.join('\n')).not.toContain('weak-password-456');
    expect(answers.join('\n')).not.toContain('wrong-password-123');
    expectError(await op('GET', '/servers/pg9'), 404, 'NOT_FOUND');
  });

  it('never echoes or logs a URL given with a wrong or unknown field', async () => {
    const url = 'postgres://someone:echo-secret-789@127.0.0.1:1/postgres';
    const unknown = await op('POST', '/servers', { id: 'pg9', url, colour: 'blue' });
    expect(unknown.status).toBe(400);
    const wrongType = await op('POST', '/servers', { id: 'pg9', url, weight: 'heavy' });
    expect(wrongType.status).toBe(400);
    const patched = await op('PATCH', '/servers/pg2', { url, colour: 'blue' });
    expect(patched.status).toBe(400);
    const gql = await call('POST', '/graphql', {
      token: OPERATOR_KEY,
      body: {
        query: 'mutation ($input: AddProjectServerInput!) { addProjectServer(input: $input) { id } }',
        variables: { input: { id: 'pg9', url, colour: 'blue' } },
      },
    });
    // (GraphQL itself quotes a variable it refuses back to its own caller, as graphql-js does everywhere: not logged.)
    expect(gql.body.errors?.length).toBeGreaterThan(0);
    expect(answers.join('\n')).not.toContain('echo-secret-789');
    expect(logLines.join('\n')).not.toContain('echo-secret-789');
  });
});

describe('placement: fewest projects per weight among active servers', () => {
  const placed: Record<string, string> = {};

  it('spreads new projects over default and pg2 by projects per weight', async () => {
    const first = await newProject('one');
    const second = await newProject('two');
    expect([first.server, second.server].sort()).toEqual(['default', 'pg2']);
    placed[first.server] = first.id;
    placed[second.server] = second.id;
    // pg2 of weight 3: 1/3 and 2/3 projects per weight stay below default's 1/1.
    expect((await op('PATCH', '/servers/pg2', { weight: 3 })).body.weight).toBe(3);
    expect((await newProject('three')).server).toBe('pg2');
    expect((await newProject('four')).server).toBe('pg2');
    const list = await op('GET', '/servers');
    expect(
      Object.fromEntries(list.body.servers.map((s: { id: string; projects: number }) => [s.id, s.projects])),
    ).toEqual({ default: 1, pg2: 3 });
  });

  it.each(['read-only', 'draining'])('a %s server gets no new project', async (state) => {
    expect((await op('PATCH', '/servers/pg2', { state, weight: 1000 })).body.state).toBe(state);
    expect((await newProject(`on ${state}`)).server).toBe('default');
  });

  it('an active server of weight 0 gets no new project', async () => {
    expect((await op('PATCH', '/servers/pg2', { state: 'active', weight: 0 })).body).toMatchObject({
      state: 'active',
      weight: 0,
    });
    expect((await newProject('weightless')).server).toBe('default');
    await op('PATCH', '/servers/pg2', { weight: 1 });
  });

  /** A project on `server`: the others are made read-only for its placement. */
  async function newProjectOn(server: string) {
    const others = (await op('GET', '/servers')).body.servers.filter((s: { id: string }) => s.id !== server);
    for (const s of others) await op('PATCH', `/servers/${s.id}`, { state: 'read-only' });
    await op('PATCH', `/servers/${server}`, { state: 'active' });
    try {
      const made = await newProject(`on ${server}`);
      expect(made.server).toBe(server);
      return made;
    } finally {
      for (const s of others) await op('PATCH', `/servers/${s.id}`, { state: s.state });
    }
  }

  let onPg2: { apiKey: string } | undefined;

  it('the data API reaches a project on pg2, and the rows are on that server', async () => {
    const made = await newProjectOn('pg2');
    onPg2 = made;
    const h = { apiKey: made.apiKey };
    expect(
      (
        await call('POST', '/v1/rawSQL', {
          ...h,
          body: { sql: 'create table notes (id serial primary key, body text)' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await call('POST', '/v1/insert', { ...h, body: { table: 'notes', values: { body: 'on pg2' } } })).status,
    ).toBe(201);
    const found = await call('POST', '/v1/find', { ...h, body: { table: 'notes' } });
    expect(found.body.rows).toEqual([{ id: 1, body: 'on pg2' }]);
    // The one row saying where it lives names pg2, and its database is there (and not on the default server).
    const platformDb = new pg.Client({ connectionString: p.databaseUrl });
    await platformDb.connect();
    const row = await platformDb
      .query<{ server_id: string; database_name: string }>(
        'select server_id, database_name from data_project_roles where project_id = $1',
        [made.id],
      )
      .finally(() => platformDb.end());
    expect(row.rows[0]?.server_id).toBe('pg2');
    const su = new pg.Client({ connectionString: pg2.url });
    await su.connect();
    try {
      const dbs = await su.query('select 1 from pg_database where datname = $1', [row.rows[0]!.database_name]);
      expect(dbs.rowCount).toBe(1);
    } finally {
      await su.end();
    }
    const health = (await op('GET', '/servers/pg2')).body.health;
    expect(health.database_bytes).toBeGreaterThan(0);
  });

  it("changes a server's URL (checked like a new one): its projects keep working over the new URL", async () => {
    const before = (await op('GET', '/servers/pg2')).body;
    const bad = await op('PATCH', '/servers/pg2', { url: 'postgres://postgres:nope@127.0.0.1:1/postgres' });
    expectError(bad, 400, 'BAD_REQUEST', /url/);
    expect((await op('GET', '/servers/pg2')).body.url).toBe(before.url);
    // The same server through its other maintenance database: a new URL, every data process reconnects with it.
    const changed = await op('PATCH', '/servers/pg2', { url: pg2.urlOf('template1') });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      database: 'template1',
      url: `postgres://postgres@127.0.0.1:${pg2.port}/template1`,
    });
    expect(changed.body.health.reachable).toBe(true);
    const found = await call('POST', '/v1/find', { apiKey: onPg2!.apiKey, body: { table: 'notes' } });
    expect(found.status).toBe(200);
    expect(found.body.rows).toEqual([{ id: 1, body: 'on pg2' }]);
    const written = await call('POST', '/v1/insert', {
      apiKey: onPg2!.apiKey,
      body: { table: 'notes', values: { body: 'after the new URL' } },
    });
    expect(written.status).toBe(201);
    const audit = (await op('GET', '/audit?action=server.update&target_id=pg2')).body.entries;
    expect(audit[0].details).toEqual({ url: `postgres://postgres@127.0.0.1:${pg2.port}/template1` });
  });

  it('removing a server that holds projects answers 409 SERVER_IN_USE; the default cannot be removed', async () => {
    expectError(await op('DELETE', '/servers/pg2'), 409, 'SERVER_IN_USE');
    expectError(await op('DELETE', '/servers/default'), 409, 'CONFLICT');
    expect((await op('GET', '/servers/pg2')).status).toBe(200);
  });

  it('removes a server holding no project', async () => {
    expect((await op('POST', '/servers', { id: 'spare', url: pg2.url, state: 'read-only' })).status).toBe(201);
    expect((await op('DELETE', '/servers/spare')).status).toBe(204);
    expectError(await op('GET', '/servers/spare'), 404, 'NOT_FOUND');
  });
});

describe('operations', () => {
  it('writes every server change to the audit log, without the password', async () => {
    const audit = await op('GET', '/audit?first=100');
    const actions = audit.body.entries
      .filter((e: { target_kind: string }) => e.target_kind === 'server')
      .map((e: { action: string; target_id: string }) => `${e.action} ${e.target_id}`);
    expect(actions).toEqual(
      expect.arrayContaining(['server.add pg2', 'server.update pg2', 'server.add spare', 'server.remove spare']),
    );
    const add = audit.body.entries.find(
      (e: { action: string; target_id: string }) => e.action === 'server.add' && e.target_id === 'pg2',
    );
    expect(add).toMatchObject({ operator: 'bootstrap' });
    expect(add.details).toEqual({
      url: `postgres://postgres@127.0.0.1:${pg2.port}/postgres`,
      weight: 1,
      state: 'active',
    });
  });

  it('reports projects, connections, database bytes and reachability per server on /metrics', async () => {
    await op('GET', '/servers'); // samples the servers now (else every 30 s)
    const text = await (await fetch(`${p.url}/metrics`)).text();
    const value = (name: string, server: string) =>
      Number(new RegExp(`^${name}\\{[^}]*server="${server}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('tessera_project_server_up', 'pg2')).toBe(1);
    expect(value('tessera_project_server_up', 'default')).toBe(1);
    expect(value('tessera_project_server_projects', 'pg2')).toBeGreaterThanOrEqual(4);
    expect(value('tessera_project_server_database_bytes', 'pg2')).toBeGreaterThan(0);
    expect(value('tessera_project_server_connections', 'pg2')).toBeGreaterThanOrEqual(0);
    expect(text).not.toMatch(/server="spare"/);
  });

  it('never shows the password of a server URL: in no answer and no log line', async () => {
    const secret = passwordOf(pg2.url);
    expect(secret.length).toBeGreaterThan(8);
    expect(answers.join('\n')).not.toContain(secret);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(secret);
    expect(logLines.some((l) => l.includes('project server registered'))).toBe(true);
  });
});
