// Tenant isolation by structure (issue 11): a hostile project runs arbitrary SQL, and the walls between it, the other
// projects and the platform must hold. Each row is an attack, the refusal it must meet (or the proof it had no
// effect), and the neighbours checked intact: project B (another tenant's), whose table, function source, comment
// and policy hold secrets, and the platform (sign-in, project creation, realtime).
//
// Two kinds of rows: through the API (the rawSQL guard, the second wall, refuses), and "guard bypassed": the same
// SQL sent on a connection logged in exactly as the data API's are (the project's own role, with its password, to
// its own database), as if an SQL-text executor had slipped past the guard. Those rows prove the first wall, the
// structure: a database per project, reached only by its own role.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { createSecretBox } from '../../platform/crypto.ts';
import { sealBroadcast } from '../../platform/broadcast.ts';
import { startOneProcess, TEST_SECRET, type TestPlatform } from '../support/platform.ts';
import { client, type Res } from '../support/http.ts';
import {
  createProject,
  dataCall,
  publish,
  signIn,
  sseText,
  twoProjects,
  type Call,
  type DataProject,
} from '../e2e/data/data-support.ts';
import { attackTable } from './attack-table.ts';
import { waitFor } from '../support/wait-for.ts';

const STATEMENT_TIMEOUT_MS = 2000;
const MAX_ROWS = 1000;
const B_SECRET = 'b-secret-4b1d';
const B_FN_SECRET = 'b-function-source-7c2e';
const B_COMMENT = 'b-comment-91fa';
const B_POLICY = 'b_policy_e3d0';

let platform: TestPlatform;
let call: Call;
let platformUrl: string;
let platformDb: pg.Client;
let a: DataProject;
let b: DataProject;
let dataA: ReturnType<typeof dataCall>;
let dataB: ReturnType<typeof dataCall>;
/** A's own database, as A's own role: the guard bypassed. */
let rawA: pg.Client;
let victim: { email: string; password: string };

type Role = { role_name: string; database_name: string; password_sealed: string; schema_name: string };
const roleOf = async (projectId: string): Promise<Role> =>
  (
    await platformDb.query<Role>(
      'select role_name, database_name, password_sealed, schema_name from data_project_roles where project_id = $1',
      [projectId],
    )
  ).rows[0]!;

/** Logs in as a project's role, as the data API does, to `database` (its own by default). */
async function loginAs(role: Role, database = role.database_name): Promise<pg.Client> {
  const url = new URL(platformUrl);
  url.username = role.role_name;
  url.password = createSecretBox(TEST_SECRET, 'data:project-roles').decrypt(role.password_sealed);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  c.on('error', () => {});
  await c.connect();
  return c;
}

/** Runs SQL on A's own connection (guard bypassed) and answers it as a response: 200 with rows, or the error's code. */
async function bypass(sql: string, params: unknown[] = []): Promise<Res> {
  try {
    const r = await rawA.query(sql, params);
    return { status: 200, body: { rows: r.rows }, headers: new Headers() };
  } catch (err) {
    const e = err as { code?: string; message: string };
    return {
      status: e.code === '42501' ? 403 : 400,
      body: { error: { code: e.code, message: e.message } },
      headers: new Headers(),
    };
  }
}

const rawSql = async (sql: string, params?: unknown[]) => await dataA('rawSQL', { sql, params });

/** B's rows, function and catalog entries are as they were, and B still answers. */
async function bIntact(): Promise<void> {
  const rows = await dataB('find', { table: 'secrets', orderBy: 'id' });
  expect(rows.status).toBe(200);
  expect(rows.body.rows).toEqual([{ id: 1, body: B_SECRET }]);
  const fn = await dataB('rawSQL', { sql: 'select b_fn() as v' });
  expect(fn.body.rows).toEqual([{ v: B_FN_SECRET }]);
}

/** The platform still signs the victim in, creates projects and answers their first data call at once. */
async function platformIntact(): Promise<void> {
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: victim });
  expect(login.status).toBe(200);
}

/** An attack row whose "refusal" is that the bypassed SQL found nothing of B's. */
const seesNothing = (name: string, sql: string, params: () => unknown[] = () => []) => ({
  name,
  attack: async () => {
    const res = await bypass(sql, params());
    // Nothing found is the refusal here: answer it as a 404 so the table reads the same.
    return res.status === 200 && res.body.rows.length === 0 ? { ...res, status: 404 } : res;
  },
  refused: {
    status: 404,
    notContaining: () => [B_SECRET, B_FN_SECRET, B_COMMENT, B_POLICY, b.id, b.id.replace(/-/g, '')],
  },
  intact: bIntact,
});

beforeAll(async () => {
  platform = await startOneProcess({
    TESSERA_DATA_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    TESSERA_DATA_MAX_ROWS: String(MAX_ROWS),
    TESSERA_DATA_POOL_SIZE: '3',
    TESSERA_DATA_POOL_WAIT_MS: '300',
    TESSERA_REALTIME_MAX_SUBSCRIBERS: '3',
  });
  platformUrl = platform.tessera!.config.databaseUrl!;
  call = client(platform.url);
  platformDb = new pg.Client({ connectionString: platformUrl });
  await platformDb.connect();
  ({ a, b, dataA, dataB } = await twoProjects(call, ['attacker', 'victim']));
  for (const sql of [
    'create table secrets (id int primary key, body text not null)',
    `comment on table secrets is '${B_COMMENT}'`,
    'alter table secrets enable row level security',
    `create policy ${B_POLICY} on secrets using (body <> '${B_SECRET}-hidden')`,
    `create function b_fn() returns text language sql as $$ select '${B_FN_SECRET}'::text $$`,
  ]) {
    const res = await dataB('rawSQL', { sql });
    expect({ sql, status: res.status, error: res.body.error }).toEqual({ sql, status: 200, error: undefined });
  }
  expect((await dataB('insert', { table: 'secrets', values: { id: 1, body: B_SECRET } })).status).toBe(201);
  expect((await rawSql('create table mine (id serial primary key, n int)')).status).toBe(200);
  rawA = await loginAs(await roleOf(a.id));
  victim = { email: `victim-${Date.now()}@example.com`, password: 'correct horse battery staple' };
  expect((await call('POST', '/auth/api/v1/tenants/signup', { body: victim })).status).toBe(201);
}, 90_000);

afterAll(async () => {
  await rawA?.end();
  await platformDb?.end();
  await platform?.close();
});

describe('SQL text executors and dynamic PL/pgSQL: refused by the guard (second wall)', () => {
  const refused = (name: string, sql: string) => ({
    name,
    attack: () => rawSql(sql),
    refused: { status: 403, code: 'FORBIDDEN' },
    intact: bIntact,
  });
  attackTable([
    refused(
      'ts_stat runs the SQL text it is given',
      `select word from ts_stat('select to_tsvector(relname) from pg_class')`,
    ),
    refused(
      "ts_rewrite's query form runs the SQL text it is given",
      `select ts_rewrite('a'::tsquery, 'select ''a''::tsquery, ''b''::tsquery')`,
    ),
    refused(
      'a language sql function wraps ts_stat',
      `create function leak() returns setof text language sql as $$ select word from ts_stat('select to_tsvector(prosrc) from pg_proc') $$`,
    ),
    refused(
      'PL/pgSQL RETURN QUERY EXECUTE',
      `create function leak() returns setof text language plpgsql as $$ begin return query execute 'select prosrc from pg_proc'; end $$`,
    ),
    refused(
      'PL/pgSQL EXECUTE',
      `create function leak() returns void language plpgsql as $$ begin execute 'select 1'; end $$`,
    ),
    refused(
      'PL/pgSQL FOR ... IN EXECUTE',
      `create function leak() returns void language plpgsql as $$ declare r record; begin for r in execute 'select 1' loop end loop; end $$`,
    ),
    refused(
      'PL/pgSQL OPEN ... FOR EXECUTE',
      `create function leak() returns void language plpgsql as $$ declare c refcursor; begin open c for execute 'select 1'; end $$`,
    ),
    refused(
      'query_to_xml runs the SQL text it is given',
      `select query_to_xml('select * from pg_proc', true, true, '')`,
    ),
    refused('pg_notify on the platform broadcast channel', `select pg_notify('tessera_broadcast', '{}')`),
    refused(
      'a session-level advisory lock on the provisioning lock',
      `select pg_advisory_lock(hashtext('tessera_data_provisioning'))`,
    ),
    refused('set_config lifts the statement timeout', `select set_config('statement_timeout', '0', false)`),
    refused('the outbox of the platform, by its schema', 'select * from tessera_hooks.outbox'),
    // Around each class: the other SQL-text executors and file readers, every way to change a setting or take a lock.
    refused('cursor_to_xml reads a cursor over any query', `select cursor_to_xml('c'::refcursor, 10, true, true, '')`),
    refused('table_to_xml reads a table named by text', `select table_to_xml('pg_proc', true, true, '')`),
    refused('database_to_xml reads the whole database', `select database_to_xml(true, true, '')`),
    refused('pg_read_file reads a server file', `select pg_read_file('/etc/passwd')`),
    refused('lo_import reads a server file into a large object', `select lo_import('/etc/passwd')`),
    refused('pg_ls_dir lists a server folder', `select pg_ls_dir('.')`),
    refused(
      'a function whose SET option changes a setting while it runs',
      `create function f() returns int language sql set work_mem = '2GB' as 'select 1'`,
    ),
    refused('ALTER FUNCTION ... SET', `alter function f() set statement_timeout = 0`),
    refused('ALTER ROLE ... SET', `alter role current_user set statement_timeout = 0`),
    refused('ALTER DATABASE ... SET', `alter database current set statement_timeout = 0`),
    refused(
      'SET in a PL/pgSQL body',
      `create function f() returns void language plpgsql as $$ begin set statement_timeout = 0; end $$`,
    ),
    refused('set_config qualified with pg_catalog', `select pg_catalog.set_config('statement_timeout', '0', false)`),
    refused('pg_try_advisory_lock', `select pg_try_advisory_lock(1)`),
    refused('pg_advisory_xact_lock_shared', `select pg_advisory_xact_lock_shared(1)`),
    refused('LOCK TABLE', 'lock table mine in access exclusive mode'),
    refused('NOTIFY on the realtime channel', `notify tessera_realtime, '{}'`),
    refused('LISTEN on the platform channel', 'listen tessera_broadcast'),
  ]);
});

describe('catalog reads with the guard out of the way: a database per project shows nothing of another (first wall)', () => {
  attackTable([
    seesNothing("reads B's table names from pg_class", `select relname from pg_class where relname = 'secrets'`),
    seesNothing(
      "reads every other project's schemas",
      `select nspname from pg_namespace where nspname like 'p\\_%' and nspname <> $1`,
      () => [`p_${a.id.replace(/-/g, '')}`],
    ),
    seesNothing(
      "reads B's function source from pg_proc",
      `select prosrc from pg_proc where prosrc like '%' || $1 || '%'`,
      () => [B_FN_SECRET],
    ),
    seesNothing(
      "reads B's comments from pg_description",
      `select description from pg_description where description = $1`,
      () => [B_COMMENT],
    ),
    seesNothing("reads B's policies from pg_policy", `select polname from pg_policy where polname = $1`, () => [
      B_POLICY,
    ]),
    seesNothing(
      "finds B's project id in the shared catalogs (database and role names)",
      `select datname as n from pg_database where datname like '%' || $1 || '%' union all select rolname from pg_roles where rolname like '%' || $1 || '%'`,
      () => [b.id.replace(/-/g, '').slice(0, 12)],
    ),
  ]);

  it("cannot size, connect to or signal B's database", async () => {
    const bRole = await roleOf(b.id);
    expect(await bypass('select pg_database_size($1)', [bRole.database_name])).toMatchObject({ status: 403 });
    await expect(loginAs(await roleOf(a.id), bRole.database_name)).rejects.toMatchObject({ code: '42501' });
    await expect(loginAs(await roleOf(a.id), new URL(platformUrl).pathname.slice(1))).rejects.toMatchObject({
      code: '42501',
    });
    const terminated = await bypass(
      `select count(*)::int as n from pg_stat_activity where usename <> current_user and pg_terminate_backend(pid)`,
    );
    expect(terminated.status).toBe(403);
    await bIntact();
    await platformIntact();
  });
});

describe('signals and locks with the guard out of the way: NOTIFY and advisory locks stay in the project database', () => {
  const accountKey = () => crypto.createHash('sha256').update(`account:${victim.email}`).digest('base64url');
  const forgedFail = () =>
    JSON.stringify({
      topic: 'rate-limits.changed',
      payload: { origin: 'forged', scope: 'tenant.signIn.account', op: 'fail', key: accountKey() },
    });

  it('forged rate-limit failures from a project database do not lock another tenant out', async () => {
    for (let i = 0; i < 20; i++)
      expect((await bypass(`select pg_notify('tessera_broadcast', $1)`, [forgedFail()])).status).toBe(200);
    await platformIntact();
  });

  it('even sent on the platform database itself, an unsigned (or wrongly signed) message is dropped', async () => {
    for (let i = 0; i < 20; i++) await platformDb.query(`select pg_notify('tessera_broadcast', $1)`, [forgedFail()]);
    const wrongKey = sealBroadcast('rate-limits.changed', {
      origin: 'forged',
      scope: 'tenant.signIn.account',
      op: 'fail',
      key: accountKey(),
    }).replace(/^[^.]+/, 'x'.repeat(43));
    for (let i = 0; i < 20; i++) await platformDb.query(`select pg_notify('tessera_broadcast', $1)`, [wrongKey]);
    await platformIntact();
  });

  it('forged resets do not lift a sign-in limit', async () => {
    const target = { email: `limited-${Date.now()}@example.com`, password: 'correct horse battery staple' };
    expect((await call('POST', '/auth/api/v1/tenants/signup', { body: target })).status).toBe(201);
    let last: Res | undefined;
    for (let i = 0; i < 11; i++)
      last = await call('POST', '/auth/api/v1/tenant/login', {
        body: { email: target.email, password: 'wrong password!' },
      });
    expect(last!.status).toBe(429);
    const key = crypto.createHash('sha256').update(`account:${target.email}`).digest('base64url');
    const reset = JSON.stringify({
      topic: 'rate-limits.changed',
      payload: { origin: 'forged', scope: 'tenant.signIn.account', op: 'reset', key },
    });
    await bypass(`select pg_notify('tessera_broadcast', $1)`, [reset]);
    await platformDb.query(`select pg_notify('tessera_broadcast', $1)`, [reset]);
    expect((await call('POST', '/auth/api/v1/tenant/login', { body: target })).status).toBe(429);
  });

  it("a forged realtime event from A's database never reaches B's subscriber", async () => {
    await publish(call, b, 'secrets');
    const sse = await sseText(
      platform.url,
      b.apiKey,
      'subscription { dataChanges(table: "secrets") { table operation row } }',
    );
    expect(sse.status).toBe(200);
    const forged = JSON.stringify({
      table: 'secrets',
      op: 'insert',
      at: new Date().toISOString(),
      row: { id: 666, body: 'forged' },
    });
    // Wait until the subscription listens (a real change arrives), then forge from A, then change B again.
    await waitFor(
      async () => {
        await dataB('update', { table: 'secrets', where: { id: 1 }, set: { body: B_SECRET } });
        return sse.text().includes(B_SECRET);
      },
      { message: 'the subscription' },
    );
    await bypass(`select pg_notify('tessera_realtime', $1)`, [forged]);
    await bypass(`notify tessera_realtime, '${forged.replace(/'/g, "''")}'`);
    expect((await dataB('insert', { table: 'secrets', values: { id: 2, body: 'after' } })).status).toBe(201);
    await waitFor(async () => sse.text().includes('"after"'), { message: 'the real insert' });
    await sse.close();
    expect(sse.text()).not.toContain('forged');
    expect((await dataB('delete', { table: 'secrets', where: { id: 2 } })).status).toBe(200);
  }, 30_000);

  it("a session-level advisory lock on the platform's provisioning lock name does not hold up anyone's project creation", async () => {
    await bypass(`select pg_advisory_lock(hashtext('tessera_data_provisioning'))`);
    await bypass(`select pg_advisory_lock(hashtext('tessera_data_template'))`);
    // Held up, the creation would wait for these locks until they are released, after it (this test's timeout).
    const fresh = await createProject(call, await signIn(call), 'while locked');
    const first = await dataCall(call, fresh.apiKey)('rawSQL', { sql: 'select 1 as one' });
    expect(first.status).toBe(200);
    await bypass('select pg_advisory_unlock_all()');
  }, 30_000);
});

describe('limits a project cannot lift', () => {
  it('a statement timeout lifted on the session (by a function the guard never saw) is restored, and a statement past it is cancelled anyway', async () => {
    expect(
      (
        await bypass(
          `create function lift() returns text language sql as $$ select set_config('statement_timeout', '0', false) $$`,
        )
      ).status,
    ).toBe(200);
    expect((await bypass('create view lifted as select lift() as t')).status).toBe(200);
    // rawSQL may call the project's own functions; its session is reset afterwards.
    expect((await rawSql('select lift()')).status).toBe(200);
    // 408 is the answer to a statement cancelled at the timeout (pg_sleep(30) left alone would answer 200).
    let slow = await rawSql('select pg_sleep(30)');
    expect(slow.status).toBe(408);
    // A find on a view calling it lifts it on a pooled connection without any rawSQL: the pool cancels past the timeout.
    for (let i = 0; i < 3; i++) expect((await dataA('find', { table: 'lifted' })).status).toBe(200);
    expect(
      (
        await bypass(
          'create function sleep30() returns int language plpgsql as $$ begin perform pg_sleep(30); return 1; end $$',
        )
      ).status,
    ).toBe(200);
    expect((await bypass('create view sleepy as select sleep30() as s')).status).toBe(200);
    slow = await dataA('find', { table: 'sleepy' });
    expect(slow.status).toBe(408);
    await bIntact();
  }, 60_000);

  it('a busy project waits a bounded time for a connection, then gets 503 with Retry-After; its neighbour is served meanwhile', async () => {
    // Each holds its connection 1.5 s (under the 2 s statement timeout), five times the 300 ms wait.
    const slow = Array.from({ length: 8 }, async () => await rawSql('select pg_sleep(1.5)'));
    await waitFor(
      async () =>
        // As A's own role: the platform role may not read another role's query text (PostgreSQL 15, no superuser).
        (
          await rawA.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where query = 'select pg_sleep(1.5)' and state = 'active'`,
          )
        ).rows[0]!.n > 0,
      { intervalMs: 10, message: 'the busy project holding its connections' },
    );
    const neighbour = await dataB('find', { table: 'secrets' });
    const answers = await Promise.all(slow);
    expect(neighbour.status).toBe(200);
    const busy = answers.filter((r) => r.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0]!.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(busy[0]!.headers.get('retry-after')).toBeTruthy();
    expect(answers.map((r) => r.status).filter((s) => s !== 200 && s !== 503)).toEqual([]);
  }, 30_000);

  it('rows returned are bounded: rawSQL past TESSERA_DATA_MAX_ROWS is rolled back with a 413 naming the limit', async () => {
    const res = await rawSql(`insert into mine (n) select g from generate_series(1, ${MAX_ROWS + 500}) g returning id`);
    expect(res.status).toBe(413);
    expect(res.body.error.details.limit).toBe('TESSERA_DATA_MAX_ROWS');
    expect((await rawSql('select count(*)::int as n from mine')).body.rows).toEqual([{ n: 0 }]); // rolled back
    // generate_series in the select list streams row by row (ProjectSet); in FROM it would first materialize all ten
    // million rows in PostgreSQL, which on a loaded machine can outlast the 2 s statement timeout (408, not 413).
    expect((await rawSql(`select generate_series(1, 10000000) as g`)).status).toBe(413);
  }, 30_000);

  it("a write's returning is bounded too: an update answering too many rows is refused and changes nothing", async () => {
    expect((await rawSql(`insert into mine (n) select 1 from generate_series(1, ${MAX_ROWS + 10})`)).status).toBe(200);
    const res = await dataA('update', { table: 'mine', where: { n: 1 }, set: { n: 2 } });
    expect(res.status).toBe(413);
    expect(res.body.error.details.limit).toBe('TESSERA_DATA_MAX_ROWS');
    expect((await rawSql('select count(*)::int as n from mine where n = 2')).body.rows).toEqual([{ n: 0 }]);
    const quiet = await dataA('update', { table: 'mine', where: { n: 1 }, set: { n: 2 }, returning: false });
    expect(quiet.body).toMatchObject({ count: MAX_ROWS + 10 });
    expect((await rawSql('delete from mine')).status).toBe(200);
  }, 30_000);

  it('temporary files are capped where the platform role may set it, and VACUUM and ANALYZE of its own tables are allowed', async () => {
    const su = await platformDb.query<{ su: boolean }>(
      'select rolsuper as su from pg_roles where rolname = current_user',
    );
    const show = await rawSql('show temp_file_limit');
    expect(show.status).toBe(200);
    if (su.rows[0]!.su) expect(show.body.rows[0].temp_file_limit).toBe('1GB');
    expect((await rawSql('vacuum mine')).status).toBe(200);
    expect((await rawSql('analyze mine')).status).toBe(200);
    expect((await rawSql('vacuum (analyze) mine')).status).toBe(200);
    expect((await rawSql(`vacuum p_${b.id.replace(/-/g, '')}.secrets`)).status).toBe(403);
  });
});

describe('realtime abuse', () => {
  const sse = async (apiKey: string) => {
    const ctrl = new AbortController();
    const res = await fetch(`${platform.url}/realtime`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': apiKey },
      body: JSON.stringify({ query: 'subscription { dataChanges { table } }' }),
      signal: ctrl.signal,
    });
    // A refused subscription answers at once; an accepted one streams until aborted.
    const body = res.headers.get('content-type')?.includes('json') ? await res.json() : undefined;
    return { res, body, close: () => ctrl.abort() };
  };

  it("holds a project to TESSERA_REALTIME_MAX_SUBSCRIBERS subscriptions, without touching another project's", async () => {
    const open = [await sse(a.apiKey), await sse(a.apiKey), await sse(a.apiKey)];
    expect(open.map((o) => o.res.status)).toEqual([200, 200, 200]);
    const fourth = await sse(a.apiKey);
    const refused = JSON.stringify(fourth.body ?? (await fourth.res.text().catch(() => '')));
    expect(refused).toMatch(/RATE_LIMITED|TESSERA_REALTIME_MAX_SUBSCRIBERS/);
    const neighbour = await sse(b.apiKey);
    expect(neighbour.res.status).toBe(200);
    for (const o of [...open, fourth, neighbour]) o.close();
  });

  it('closes a WebSocket whose message is over 1 MiB, before authentication (1009), without an error in the logs', async () => {
    // graphql-ws prints each socket error with its stack: a caller's junk must not reach it (platform/http-bridge.ts).
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const { default: WebSocket } = await import('ws');
    const ws = new WebSocket(`${platform.url.replace('http', 'ws')}/realtime`, 'graphql-transport-ws');
    const code = await new Promise<number>((resolve, reject) => {
      ws.on('open', () =>
        ws.send(JSON.stringify({ type: 'connection_init', payload: { junk: 'x'.repeat(1_500_000) } })),
      );
      ws.on('close', (c) => resolve(c));
      ws.on('error', reject);
    });
    expect(code).toBe(1009);
    await platformIntact();
    expect(printed.mock.calls.map((c) => String(c[0]))).toEqual([]);
    printed.mockRestore();
  });
});

describe('a new project', () => {
  it('answers its first data API call with 200, no waiting', async () => {
    const token = await signIn(call);
    const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'brand new' } });
    expect(created.status).toBe(201);
    const first = await dataCall(call, created.body.project.api_key)('rawSQL', { sql: 'select 1 as one' });
    expect({ status: first.status, rows: first.body.rows }).toEqual({ status: 200, rows: [{ one: 1 }] });
    const insert = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'brand new 2' } });
    const find = await dataCall(call, insert.body.project.api_key)('find', { table: 'nothing_yet' });
    expect(find.status).toBe(404); // answered by its own (empty) database, not 503
  });
});
