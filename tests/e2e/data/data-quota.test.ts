// A project's database size against its plan (issue 28): past max_database_rows or max_database_bytes every write is
// answered 413 QUOTA_EXCEEDED naming the limit, reads and deletes keep working, and once under again (or once the
// operator raises the limit) writes work again. Limits are small here (50 rows) rather than the plan's 100,000.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { setPlanLimits } from '../../support/plans.ts';
import { waitFor } from '../../support/wait-for.ts';
import { newProject, passwordGrant, registerUser } from '../identity/identity-fixtures.ts';
import { createProject, dataCall, dropLeftoverRoles, signIn, type Call, type DataProject } from './data-support.ts';

let p: TestPlatform;
let call: Call;

beforeAll(async () => {
  p = await startOneProcess();
  call = client(p.url);
  await setPlanLimits(p, 'free', { max_database_rows: 50 });
}, 60_000);

afterAll(async () => {
  await setPlanLimits(p, 'free', { max_database_rows: 100_000, max_database_bytes: 500 * 1024 * 1024 });
  await p?.close();
  if (p) await dropLeftoverRoles(p.databaseUrl);
});

/** The project's usage through GraphQL (Project.databaseUsage) with its own key. */
async function usage(project: DataProject) {
  const r = await call('POST', '/graphql', {
    apiKey: project.apiKey,
    body: { query: '{ storageProject { databaseUsage { rows bytes maxRows maxBytes measuredAt } } }' },
  });
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data.storageProject.databaseUsage as {
    rows: number;
    bytes: number;
    maxRows: number | null;
    maxBytes: number | null;
    measuredAt: string;
  };
}

/** A write that adds nothing (an update matching no row): tells whether writes are let in without changing usage. */
const probe = async (data: ReturnType<typeof dataCall>) =>
  (await data('update', { table: 'items', where: { id: -1 }, set: { n: 0 } })).status;

const rowsOf = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ n: from + i }));

describe('max_database_rows', () => {
  let a: DataProject;
  let data: ReturnType<typeof dataCall>;
  beforeAll(async () => {
    a = await createProject(call, await signIn(call), 'quota');
    data = dataCall(call, a.apiKey);
    const made = await data('rawSQL', {
      sql: `create table items (id serial primary key, n int not null);
            create table log (id serial primary key, at timestamptz default now());
            create function sneak() returns int language sql as $$ insert into log default values returning id $$;`,
    });
    expect(made.status).toBe(200);
  });

  it('lets writes in up to the limit, then refuses every kind of write with 413 QUOTA_EXCEEDED naming the limit', async () => {
    expect((await data('insert', { table: 'items', values: rowsOf(49) })).status).toBe(201);
    expect((await data('insert', { table: 'items', values: { n: 49 } })).status).toBe(201); // the 50th: at the limit
    // PostgreSQL's statistics see the committed rows about a second later; the next measurement refuses.
    await waitFor(async () => (await probe(data)) === 413, { message: 'the 50 rows to be measured' });
    const refused = await data('insert', { table: 'items', values: { n: 50 } });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { limit: 'max_database_rows', max: 50, used: 50 },
      request_id: expect.any(String),
    });
    expect(refused.body.error.message).toMatch(/free plan allows 50 database rows per project \(max_database_rows\)/);
    expect(refused.body.error.message).toMatch(/operator/);
    // Every other way to write is refused the same way.
    const writes: [string, unknown][] = [
      ['insert', { table: 'items', values: rowsOf(3) }],
      ['update', { table: 'items', where: { n: 1 }, set: { n: 100 } }],
      [
        'transaction',
        {
          operations: [
            { action: 'find', table: 'items' },
            { action: 'insert', table: 'items', values: { n: 1 } },
          ],
        },
      ],
      ['rawSQL', { sql: 'insert into items (n) values (1)' }],
      ['rawSQL', { sql: 'update items set n = n + 1' }],
      ['rawSQL', { sql: 'create table more (id int)' }],
      ['rawSQL', { sql: "copy items (n) from program 'true'" }],
      ['rawSQL', { sql: 'delete from items where id < 0; insert into items (n) values (1)' }],
      ['transaction', { operations: [{ action: 'rawSQL', sql: 'insert into items (n) values (2)' }] }],
      // Hostile: the write hidden in a read (a function, a data-modifying CTE, EXPLAIN ANALYZE) and in a delete.
      ['rawSQL', { sql: 'select sneak()' }],
      ['rawSQL', { sql: 'with w as (insert into items (n) values (3) returning id) select * from w' }],
      ['rawSQL', { sql: 'explain analyze insert into items (n) values (4)' }],
      ['rawSQL', { sql: 'with w as (insert into log default values returning id) delete from items where id < 0' }],
      ['transaction', { operations: [{ action: 'rawSQL', sql: 'select sneak()' }] }],
    ];
    for (const [action, body] of writes) {
      const r = await data(action, body);
      // `copy ... from program` is refused by the SQL guard itself (400) whatever the quota: never a success.
      if (String((body as { sql?: string }).sql).startsWith('copy')) expect(r.status).toBeGreaterThanOrEqual(400);
      else
        expect({ action, body, status: r.status, code: r.body.error?.code }).toEqual({
          action,
          body,
          status: 413,
          code: 'QUOTA_EXCEEDED',
        });
    }
    const count = await data('aggregate', { table: 'items', aggregates: [{ fn: 'count', as: 'n' }] });
    expect(Number(count.body.rows[0].n)).toBe(50);
    expect((await data('find', { table: 'log' })).body.rows).toEqual([]);
  });

  it('keeps reads and deletes working past the limit, and takes writes again once under it', async () => {
    expect((await data('find', { table: 'items', limit: 5 })).body.rows).toHaveLength(5);
    expect((await data('findOne', { table: 'items', where: { n: 0 } })).status).toBe(200);
    expect((await data('rawSQL', { sql: 'select count(*)::int as n from items' })).body.rows[0].n).toBe(50);
    expect((await data('delete', { table: 'items', where: { n: { lt: 5 } } })).body.count).toBe(5);
    expect((await data('rawSQL', { sql: 'delete from items where n between 5 and 9' })).body.rowCount).toBe(5);
    expect(
      (await data('transaction', { operations: [{ action: 'delete', table: 'items', where: { n: 10 } }] })).status,
    ).toBe(200);
    // 39 rows now: once measured, writes are let in again.
    await waitFor(async () => (await probe(data)) === 200, { message: 'the deletes to be measured' });
    expect((await data('insert', { table: 'items', values: { n: 1000 } })).status).toBe(201);
    expect((await usage(a)).rows).toBeLessThan(50);
  });

  it('takes writes again at once when the operator raises the limit, and none are refused without a limit', async () => {
    expect((await data('insert', { table: 'items', values: rowsOf(20, 2000) })).status).toBe(201);
    await waitFor(async () => (await probe(data)) === 413, { message: 'the project to be past its limit again' });
    await setPlanLimits(p, 'free', { max_database_rows: 1000 });
    expect((await data('insert', { table: 'items', values: { n: 3000 } })).status).toBe(201);
    expect(await usage(a)).toMatchObject({ maxRows: 1000 });
    await setPlanLimits(p, 'free', { max_database_rows: null });
    expect((await data('insert', { table: 'items', values: rowsOf(30) })).status).toBe(201);
    expect(await usage(a)).toMatchObject({ maxRows: null });
    await setPlanLimits(p, 'free', { max_database_rows: 50 });
  });

  it("shows a project its own usage, never another project's, and gives it no way to reset what is counted", async () => {
    const u = await usage(a);
    expect(u).toMatchObject({ rows: expect.any(Number), bytes: expect.any(Number), maxRows: 50 });
    expect(u.bytes).toBeGreaterThan(1024 * 1024);
    expect(Date.parse(u.measuredAt)).not.toBeNaN();
    // The same over REST (GET /v1/usage), the secret key only.
    const rest = await call('GET', '/v1/usage', { apiKey: a.apiKey });
    expect(rest.status).toBe(200);
    expect(rest.body.usage).toMatchObject({
      rows: expect.any(Number),
      bytes: expect.any(Number),
      max_rows: 50,
      max_bytes: expect.any(Number),
      measured_at: expect.any(String),
    });
    const anonymous = await call('GET', '/v1/usage', {});
    expect(anonymous.status).toBe(401);
    const tenantToken = await call('GET', '/v1/usage', { token: a.token });
    expect([401, 403]).toContain(tenantToken.status);
    expect(tenantToken.body.error.code).toMatch(/UNAUTHENTICATED|FORBIDDEN|INVALID_TOKEN/);
    // The neighbour's project, on the same plan, is not held by this one's quota and sees only its own usage.
    const b = await createProject(call, await signIn(call), 'neighbour');
    const dataB = dataCall(call, b.apiKey);
    expect((await dataB('rawSQL', { sql: 'create table t (id int)' })).status).toBe(200);
    expect((await dataB('insert', { table: 't', values: { id: 1 } })).status).toBe(201);
    expect((await usage(b)).rows).toBeLessThan(5);
    // A tenant reads its own project's usage; another tenant's project is NOT_FOUND.
    const own = await call('POST', '/graphql', {
      token: a.token,
      body: { query: `{ project(id: "${a.id}") { databaseUsage { rows maxRows } } }` },
    });
    expect(own.body.data.project.databaseUsage).toMatchObject({ maxRows: 50 });
    const other = await call('POST', '/graphql', {
      token: b.token,
      body: { query: `{ project(id: "${a.id}") { databaseUsage { rows } } }` },
    });
    expect(other.body.errors[0].extensions.code).toBe('NOT_FOUND');
    // The statistics and the size are the platform's to read: the project's SQL may neither reset nor read them.
    for (const sql of [
      'select pg_stat_reset()',
      'select pg_stat_reset_single_table_counters(0)',
      'select pg_database_size(current_database())',
    ]) {
      const r = await data('rawSQL', { sql });
      expect({ sql, status: r.status, code: r.body.error.code }).toEqual({ sql, status: 403, code: 'FORBIDDEN' });
    }
  });
});

describe('writes racing the measurement', () => {
  it('lets writes racing one measurement pass together (the documented slack), then refuses the next', async () => {
    const a = await createProject(call, await signIn(call), 'race');
    const data = dataCall(call, a.apiKey);
    expect((await data('rawSQL', { sql: 'create table items (id serial primary key, n int not null)' })).status).toBe(
      200,
    );
    expect((await data('insert', { table: 'items', values: rowsOf(45) })).status).toBe(201);
    await waitFor(async () => (await usage(a)).rows === 45, { message: 'the 45 rows to be measured' });
    // Ten writers of five rows each, at once, against 5 rows left: each is admitted on a measurement under the limit
    // or refused on one past it, never anything else.
    const results = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => await data('insert', { table: 'items', values: rowsOf(5, 100 * i) })),
    );
    expect(results.every((r) => r.status === 201 || r.body.error?.code === 'QUOTA_EXCEEDED')).toBe(true);
    const admitted = results.filter((r) => r.status === 201).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    await waitFor(async () => (await probe(data)) === 413, { message: 'the next write to be refused' });
    const count = await data('aggregate', { table: 'items', aggregates: [{ fn: 'count', as: 'n' }] });
    // What passed is exactly what was admitted: the slack is bounded by the writes in flight, nothing is lost.
    expect(Number(count.body.rows[0].n)).toBe(45 + 5 * admitted);
  });
});

describe('an end user past the quota', () => {
  it("counts end users' rows with the project's and refuses their writes past it; their reads and deletes go on", async () => {
    const proj = await newProject(p.url);
    const data = dataCall(call, proj.apiKey);
    for (const sql of [
      'create table notes (id serial primary key, owner text not null, body text not null)',
      'alter table notes enable row level security',
      "create policy own on notes using (owner = current_setting('request.user_id', true))",
    ])
      expect((await data('rawSQL', { sql })).status).toBe(200);
    const user = await registerUser(p.url, proj);
    const token = (await passwordGrant(p.url, proj, user)).body.access_token as string;
    const asUser = async (action: string, body: unknown) => await call('POST', `/v1/${action}`, { token, body });
    const note = (i: number) => ({ owner: user.id, body: `note ${i}` });
    expect(
      (await asUser('insert', { table: 'notes', values: Array.from({ length: 50 }, (_, i) => note(i)) })).status,
    ).toBe(201);
    await waitFor(async () => (await asUser('insert', { table: 'notes', values: note(99) })).status === 413, {
      message: "the user's 50 rows to be measured",
    });
    const refused = await asUser('insert', { table: 'notes', values: note(100) });
    expect(refused.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { limit: 'max_database_rows', max: 50 },
    });
    expect((await asUser('find', { table: 'notes', limit: 3 })).body.rows).toHaveLength(3);
    expect((await asUser('delete', { table: 'notes', where: { body: 'note 0' } })).body.count).toBe(1);
  });
});

describe('a function past the quota', () => {
  it("refuses its Database step's write with QUOTA_EXCEEDED, and runs it again once the operator raises the limit", async () => {
    const a = await createProject(call, await signIn(call), 'function quota');
    const data = dataCall(call, a.apiKey);
    expect((await data('rawSQL', { sql: 'create table items (id serial primary key, n int not null)' })).status).toBe(
      200,
    );
    const fn = await call('POST', '/edge/api/v1/functions', {
      apiKey: a.apiKey,
      body: {
        name: 'add',
        steps: [{ name: 'w', kind: 'Database', query: { action: 'insert', table: 'items', values: { n: 1 } } }],
      },
    });
    expect(fn.status).toBe(201);
    const invoke = async () => await call('POST', '/edge/api/v1/invoke/add', { apiKey: a.apiKey, body: {} });
    expect((await data('insert', { table: 'items', values: rowsOf(50) })).status).toBe(201);
    await waitFor(async () => (await probe(data)) === 413, { message: 'the 50 rows to be measured' });
    const refused = await invoke();
    // The function failed at its step, and says why (the engine's FUNCTION_FAILED carries the step's own code).
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatchObject({
      code: 'FUNCTION_FAILED',
      details: { step: 'w', reason: 'QUOTA_EXCEEDED' },
    });
    expect(refused.body.error.message).toMatch(/max_database_rows/);
    const count = await data('aggregate', { table: 'items', aggregates: [{ fn: 'count', as: 'n' }] });
    expect(Number(count.body.rows[0].n)).toBe(50);
    await setPlanLimits(p, 'free', { max_database_rows: 100 });
    expect((await invoke()).status).toBe(200);
    await setPlanLimits(p, 'free', { max_database_rows: 50 });
  });
});

describe('max_database_bytes', () => {
  it('refuses writes past the database size with QUOTA_EXCEEDED naming max_database_bytes, lets reads and deletes in, and takes writes once raised', async () => {
    const a = await createProject(call, await signIn(call), 'bytes');
    const data = dataCall(call, a.apiKey);
    expect((await data('rawSQL', { sql: 'create table items (id serial primary key, n int not null)' })).status).toBe(
      200,
    );
    expect((await data('insert', { table: 'items', values: rowsOf(3) })).status).toBe(201);
    const size = (await usage(a)).bytes;
    // Smaller than the template the database starts from: the project is past it from the start.
    await setPlanLimits(p, 'free', { max_database_bytes: Math.floor(size / 2) });
    const refused = await data('insert', { table: 'items', values: { n: 1 } });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { limit: 'max_database_bytes', max: Math.floor(size / 2), used: expect.any(Number) },
    });
    expect(refused.body.error.message).toMatch(/max_database_bytes/);
    expect((await data('find', { table: 'items' })).body.rows).toHaveLength(3);
    const del = await data('delete', { table: 'items', where: { n: 0 } });
    expect(del.body).toMatchObject({ count: 1 });
    expect((await data('rawSQL', { sql: 'truncate items' })).status).toBe(200);
    await setPlanLimits(p, 'free', { max_database_bytes: size * 4 });
    expect((await data('insert', { table: 'items', values: { n: 1 } })).status).toBe(201);
    expect(await usage(a)).toMatchObject({ maxBytes: size * 4 });
    await setPlanLimits(p, 'free', { max_database_bytes: 500 * 1024 * 1024 });
  });
});
