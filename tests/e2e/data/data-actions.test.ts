// The data API end to end over HTTP (one-process mode): every action with its happy path and its bad
// input, Postgres errors as codes, and the project lifecycle (schema and roles created and dropped).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { createProject, dataCall, dropLeftoverRoles, signIn, type Call, type DataProject } from './data-support.ts';
import { waitFor } from '../../support/wait-for.ts';

let platform: TestPlatform;
let call: Call;
let project: DataProject;
let data: ReturnType<typeof dataCall>;
let databaseUrl: string;

beforeAll(async () => {
  platform = await startOneProcess();
  databaseUrl = platform.tessera!.config.databaseUrl!;
  call = client(platform.url);
  const token = await signIn(call);
  project = await createProject(call, token);
  data = dataCall(call, project.apiKey);
  const made = await data('rawSQL', {
    sql: `create table todos (
      id serial primary key, title text not null unique, done boolean not null default false,
      priority int not null default 1 check (priority between 1 and 5), tags text[] not null default '{}', meta jsonb, created_at timestamptz not null default now())`,
  });
  expect(made.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await platform?.close();
  if (databaseUrl) await dropLeftoverRoles(databaseUrl);
});

describe('insert', () => {
  it('inserts one row and answers 201 with the row', async () => {
    const res = await data('insert', {
      table: 'todos',
      values: { title: 'write tests', priority: 3, tags: ['work'], meta: { estimate: 2 } },
    });
    expect(res.status).toBe(201);
    expect(res.body.count).toBe(1);
    expect(res.body.rows[0]).toMatchObject({
      id: 1,
      title: 'write tests',
      done: false,
      priority: 3,
      tags: ['work'],
      meta: { estimate: 2 },
    });
  });

  it('inserts several rows at once, missing columns taking their defaults, returning chosen columns', async () => {
    const res = await data('insert', {
      table: 'todos',
      values: [
        { title: 'buy milk', tags: ['home'] },
        { title: 'call mum', priority: 5, done: true },
        { title: 'fix bike', priority: 2, tags: ['home', 'bike'] },
      ],
      returning: ['title', 'priority'],
    });
    expect(res.status).toBe(201);
    expect(res.body.rows).toEqual([
      { title: 'buy milk', priority: 1 },
      { title: 'call mum', priority: 5 },
      { title: 'fix bike', priority: 2 },
    ]);
  });

  it('answers 409 on a unique violation, 400 on not-null and check violations and on wrong types', async () => {
    const dup = await data('insert', { table: 'todos', values: { title: 'buy milk' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONFLICT');
    expect(dup.body.error.details.constraint).toBe('todos_title_key');
    const nul = await data('insert', { table: 'todos', values: { title: null } });
    expect(nul.status).toBe(400);
    expect(nul.body.error.message).toMatch(/title/);
    const chk = await data('insert', { table: 'todos', values: { title: 'x', priority: 9 } });
    expect(chk.status).toBe(400);
    expect(chk.body.error.message).toMatch(/priority/);
    const type = await data('insert', { table: 'todos', values: { title: 'y', priority: 'high' } });
    expect(type.status).toBe(400);
    expect(type.body.error.message).toMatch(/integer/);
  });

  it('refuses unknown tables (404) and columns (400), and malformed values', async () => {
    const t = await data('insert', { table: 'nope', values: { a: 1 } });
    expect(t.status).toBe(404);
    expect(t.body.error.message).toMatch(/"nope"/);
    const c = await data('insert', { table: 'todos', values: { title: 'z', colour: 'red' } });
    expect(c.status).toBe(400);
    expect(c.body.error.message).toMatch(/colour/);
    for (const values of [undefined, 'row', [], [1], Array.from({ length: 1001 }, (_, i) => ({ title: `t${i}` }))]) {
      const r = await data('insert', { table: 'todos', values });
      expect(r.status).toBe(400);
    }
    expect((await data('insert', { values: { title: 'no table' } })).status).toBe(400);
    expect((await data('insert', { table: 'todos', values: { tags: 'not an array', title: 'q' } })).status).toBe(400);
  });
});

describe('find and findOne', () => {
  it('filters with equality, operators, and/or/not, sorts, pages and selects columns', async () => {
    const all = await data('find', { table: 'todos', orderBy: 'id' });
    expect(all.status).toBe(200);
    expect(all.body.rows.map((r: { title: string }) => r.title)).toEqual([
      'write tests',
      'buy milk',
      'call mum',
      'fix bike',
    ]);
    const cases: [unknown, string[]][] = [
      [{ done: true }, ['call mum']],
      [{ priority: { gte: 2, lt: 5 } }, ['write tests', 'fix bike']],
      [{ title: { in: ['buy milk', 'fix bike'] } }, ['buy milk', 'fix bike']],
      [{ title: { nin: ['buy milk', 'fix bike'] } }, ['write tests', 'call mum']],
      [{ title: { like: '%i%' } }, ['write tests', 'buy milk', 'fix bike']],
      [{ title: { ilike: 'CALL%' } }, ['call mum']],
      [{ meta: { isNull: false } }, ['write tests']],
      [{ tags: { contains: ['home'] } }, ['buy milk', 'fix bike']],
      [{ title: { contains: 'mu' } }, ['call mum']],
      [{ meta: { contains: { estimate: 2 } } }, ['write tests']],
      [{ or: [{ priority: 5 }, { title: 'buy milk' }] }, ['buy milk', 'call mum']],
      [{ not: { done: false } }, ['call mum']],
      [{ and: [{ done: false }, { priority: { ne: 1 } }] }, ['write tests', 'fix bike']],
      [{ meta: null }, ['buy milk', 'call mum', 'fix bike']],
    ];
    for (const [where, titles] of cases) {
      const res = await data('find', { table: 'todos', where, orderBy: { id: 'asc' }, select: ['title'] });
      expect({ where, status: res.status, titles: res.body.rows?.map((r: { title: string }) => r.title) }).toEqual({
        where,
        status: 200,
        titles,
      });
    }
    const page = await data('find', {
      table: 'todos',
      orderBy: ['-priority', 'title'],
      limit: 2,
      offset: 1,
      select: ['title', 'priority'],
    });
    expect(page.body.rows).toEqual([
      { title: 'write tests', priority: 3 },
      { title: 'fix bike', priority: 2 },
    ]);
  });

  it('answers the first row or null with findOne', async () => {
    const one = await data('findOne', {
      table: 'todos',
      where: { tags: { contains: ['home'] } },
      orderBy: [{ column: 'id', direction: 'desc' }],
    });
    expect(one.status).toBe(200);
    expect(one.body.row.title).toBe('fix bike');
    const none = await data('findOne', { table: 'todos', where: { title: 'nothing' } });
    expect(none.body).toEqual({ row: null });
  });

  it('refuses unknown tables and columns, bad operators, wrong types and limits out of range', async () => {
    const bad: [unknown, number, RegExp][] = [
      [{ table: 'ghosts' }, 404, /ghosts/],
      [{ table: 'todos', select: ['title', 'nope'] }, 400, /nope/],
      [{ table: 'todos', where: { nope: 1 } }, 400, /nope/],
      [{ table: 'todos', where: { title: { regex: 'x' } } }, 400, /unknown operator "regex"/],
      [{ table: 'todos', where: { priority: { gt: 'high' } } }, 400, /integer/],
      [{ table: 'todos', where: { priority: { in: 3 } } }, 400, /array/],
      [{ table: 'todos', where: { or: {} } }, 400, /where\.or/],
      [{ table: 'todos', where: 'title = 1' }, 400, /where/],
      [{ table: 'todos', orderBy: { title: 'sideways' } }, 400, /asc/],
      [{ table: 'todos', orderBy: 'nope' }, 400, /nope/],
      [{ table: 'todos', limit: 1001 }, 400, /limit/],
      [{ table: 'todos', limit: 0 }, 400, /limit/],
      [{ table: 'todos', limit: 'ten' }, 400, /limit/],
      [{ table: 'todos', offset: -1 }, 400, /offset/],
      [{ table: 42 }, 400, /table/],
    ];
    for (const [body, status, message] of bad) {
      const res = await data('find', body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.body.error.message).toMatch(message);
    }
    expect((await data('findOne', { table: 'todos', where: { title: { between: [1, 2] } } })).status).toBe(400);
    expect((await call('POST', '/v1/find', { apiKey: project.apiKey, raw: '[1,2]' })).status).toBe(400);
  });
});

describe('update and delete', () => {
  it('updates matching rows and answers the count and rows', async () => {
    const res = await data('update', {
      table: 'todos',
      where: { tags: { contains: ['home'] } },
      set: { done: true },
      returning: ['title', 'done'],
    });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.rows).toEqual(
      expect.arrayContaining([
        { title: 'buy milk', done: true },
        { title: 'fix bike', done: true },
      ]),
    );
  });

  it('refuses update and delete without a where unless all is true', async () => {
    for (const [action, body] of [
      ['update', { table: 'todos', set: { done: false } }],
      ['update', { table: 'todos', where: {}, set: { done: false } }],
      ['delete', { table: 'todos' }],
    ] as const) {
      const res = await data(action, body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/where.*all/);
    }
    const all = await data('update', { table: 'todos', set: { priority: 2 }, all: true, returning: false });
    expect(all.body).toEqual({ count: 4, rows: [] });
  });

  it('refuses bad update bodies', async () => {
    expect((await data('update', { table: 'todos', where: { id: 1 } })).status).toBe(400);
    expect((await data('update', { table: 'todos', where: { id: 1 }, set: {} })).status).toBe(400);
    expect((await data('update', { table: 'todos', where: { id: 1 }, set: { nope: 1 } })).body.error.message).toMatch(
      /nope/,
    );
    expect((await data('update', { table: 'todos', where: { id: 1 }, set: { priority: 0 } })).status).toBe(400);
    expect((await data('update', { table: 'todos', where: { id: 2 }, set: { title: 'write tests' } })).status).toBe(
      409,
    );
    expect((await data('update', { table: 'ghosts', where: { id: 1 }, set: { a: 1 } })).status).toBe(404);
    expect((await data('update', { table: 'todos', where: { id: 1 }, set: { done: true }, all: 'yes' })).status).toBe(
      400,
    );
  });

  it('deletes matching rows', async () => {
    const res = await data('delete', { table: 'todos', where: { title: 'call mum' } });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1);
    expect(res.body.rows[0].title).toBe('call mum');
    expect((await data('delete', { table: 'todos', where: { nope: 1 } })).status).toBe(400);
    expect((await data('delete', { table: 'ghosts', where: { id: 1 } })).status).toBe(404);
  });
});

describe('aggregate', () => {
  beforeAll(async () => {
    await data('rawSQL', {
      sql: 'create table sales (id serial primary key, region text not null, amount numeric(10,2) not null, units int not null)',
    });
    const rows = [
      ['north', 10, 1],
      ['north', 20, 2],
      ['south', 5, 1],
      ['south', 7.5, 3],
      ['south', 2.5, 1],
      ['east', 100, 10],
    ];
    const res = await data('insert', {
      table: 'sales',
      values: rows.map(([region, amount, units]) => ({ region, amount, units })),
    });
    expect(res.status).toBe(201);
  });

  it('computes count, sum, avg, min and max by group with having, orderBy and limit', async () => {
    const res = await data('aggregate', {
      table: 'sales',
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'amount', as: 'total' },
        { fn: 'avg', column: 'units' },
        { fn: 'min', column: 'amount' },
        { fn: 'max', column: 'amount' },
      ],
      groupBy: ['region'],
      having: { n: { gte: 2 } },
      orderBy: { total: 'desc' },
    });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([
      { region: 'north', n: 2, total: 30, avg_units: 1.5, min_amount: 10, max_amount: 20 },
      { region: 'south', n: 3, total: 15, avg_units: expect.closeTo(1.667, 2), min_amount: 2.5, max_amount: 7.5 },
    ]);
    const whole = await data('aggregate', {
      table: 'sales',
      aggregates: [{ fn: 'count' }, { fn: 'sum', column: 'units', as: 'units' }],
      where: { region: { ne: 'east' } },
    });
    expect(whole.body.rows).toEqual([{ count: 5, units: 8 }]);
    const top = await data('aggregate', {
      table: 'sales',
      aggregates: [{ fn: 'sum', column: 'amount', as: 'total' }],
      groupBy: ['region'],
      orderBy: '-total',
      limit: 1,
    });
    expect(top.body.rows).toEqual([{ region: 'east', total: 100 }]);
  });

  it('refuses unknown functions, columns and aliases, and missing aggregates', async () => {
    const bad: unknown[] = [
      { table: 'sales' },
      { table: 'sales', aggregates: [] },
      { table: 'sales', aggregates: [{ fn: 'median', column: 'amount' }] },
      { table: 'sales', aggregates: [{ fn: 'sum' }] },
      { table: 'sales', aggregates: [{ fn: 'sum', column: 'nope' }] },
      { table: 'sales', aggregates: [{ fn: 'count', as: 'bad alias;' }] },
      { table: 'sales', aggregates: [{ fn: 'count' }], groupBy: ['nope'] },
      { table: 'sales', aggregates: [{ fn: 'count' }], having: { total: { gt: 1 } } },
      { table: 'sales', aggregates: [{ fn: 'count' }], orderBy: 'amount' },
      { table: 'sales', aggregates: [{ fn: 'sum', column: 'region' }] },
      { table: 'sales', aggregates: [{ fn: 'count' }], limit: 5000 },
    ];
    for (const body of bad)
      expect({ body, status: (await data('aggregate', body)).status }).toEqual({ body, status: 400 });
    expect((await data('aggregate', { table: 'ghosts', aggregates: [{ fn: 'count' }] })).status).toBe(404);
  });
});

describe('transaction', () => {
  it('runs every operation and answers each result in order', async () => {
    const res = await data('transaction', {
      operations: [
        { action: 'insert', table: 'todos', values: { title: 'tx one' } },
        { action: 'update', table: 'todos', where: { title: 'tx one' }, set: { priority: 4 }, returning: ['priority'] },
        { action: 'findOne', table: 'todos', where: { title: 'tx one' }, select: ['title', 'priority'] },
        { action: 'aggregate', table: 'todos', aggregates: [{ fn: 'count' }], where: { title: { like: 'tx%' } } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results[0].count).toBe(1);
    expect(res.body.results[1]).toEqual({ count: 1, rows: [{ priority: 4 }] });
    expect(res.body.results[2]).toEqual({ row: { title: 'tx one', priority: 4 } });
    expect(res.body.results[3]).toEqual({ rows: [{ count: 1 }] });
  });

  it('is all or nothing, and its error names the failing operation', async () => {
    const res = await data('transaction', {
      operations: [
        { action: 'insert', table: 'todos', values: { title: 'tx two' } },
        { action: 'delete', table: 'todos', where: { title: 'tx one' } },
        { action: 'insert', table: 'todos', values: { title: 'write tests' } },
      ],
    });
    expect(res.status).toBe(409);
    expect(res.body.error.details.operation).toBe(2);
    expect(res.body.error.message).toMatch(/^operations\[2\] \(insert\)/);
    const left = await data('find', {
      table: 'todos',
      where: { title: { in: ['tx one', 'tx two'] } },
      select: ['title'],
    });
    expect(left.body.rows).toEqual([{ title: 'tx one' }]);
  });

  it('refuses bad operations before running any', async () => {
    for (const operations of [
      undefined,
      [],
      'x',
      [{ table: 'todos' }],
      [{ action: 'drop', table: 'todos' }],
      [{ action: 'find', table: 'todos' }, 3],
    ]) {
      expect({ operations, status: (await data('transaction', { operations })).status }).toEqual({
        operations,
        status: 400,
      });
    }
    const unknown = await data('transaction', {
      operations: [
        { action: 'find', table: 'todos' },
        { action: 'find', table: 'ghosts' },
      ],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details.operation).toBe(1);
  });
});

describe('vectorSearch (exact scan over real[] on this server)', () => {
  beforeAll(async () => {
    await data('rawSQL', { sql: 'create table docs (id int primary key, topic text, embedding real[] not null)' });
    await data('insert', {
      table: 'docs',
      values: [
        { id: 1, topic: 'cats', embedding: [1, 0, 0] },
        { id: 2, topic: 'dogs', embedding: [0.9, 0.1, 0] },
        { id: 3, topic: 'cars', embedding: [0, 1, 0] },
        { id: 4, topic: 'boats', embedding: [0, 0, 1] },
      ],
    });
  });

  it('answers the k nearest rows with their distance and the method', async () => {
    const res = await data('vectorSearch', { table: 'docs', column: 'embedding', vector: [1, 0.05, 0], k: 2 });
    expect(res.status).toBe(200);
    expect(res.body.method).toBe('exact');
    expect(res.body.rows.map((r: { id: number }) => r.id)).toEqual([1, 2]);
    expect(res.body.rows[0]._distance).toBeCloseTo(1 - 1 / Math.sqrt(1 + 0.0025), 4);
    const l2 = await data('vectorSearch', {
      table: 'docs',
      column: 'embedding',
      vector: [0, 0.9, 0],
      k: 1,
      metric: 'l2',
      select: ['topic'],
    });
    expect(l2.body.rows).toEqual([{ topic: 'cars', _distance: expect.closeTo(0.1, 4) }]);
    const ip = await data('vectorSearch', {
      table: 'docs',
      column: 'embedding',
      vector: [0, 0, 2],
      k: 1,
      metric: 'inner_product',
      where: { id: { ne: 1 } },
    });
    expect(ip.body.rows[0]).toMatchObject({ id: 4, _distance: -2 });
  });

  it('refuses unknown columns, non-vector columns, bad metrics, vectors and k', async () => {
    const bad: [unknown, number][] = [
      [{ table: 'docs', column: 'nope', vector: [1, 0, 0] }, 400],
      [{ table: 'docs', column: 'topic', vector: [1, 0, 0] }, 400],
      [{ table: 'docs', column: 'embedding', vector: [1, 0, 0], metric: 'manhattan' }, 400],
      [{ table: 'docs', column: 'embedding', vector: [] }, 400],
      [{ table: 'docs', column: 'embedding', vector: ['a'] }, 400],
      [{ table: 'docs', column: 'embedding', vector: [1, 0, 0], k: 5000 }, 400],
      [{ table: 'docs', column: 'embedding' }, 400],
      [{ table: 'ghosts', column: 'embedding', vector: [1] }, 404],
    ];
    for (const [body, status] of bad)
      expect({ body, status: (await data('vectorSearch', body)).status }).toEqual({ body, status });
  });
});

describe('rawSQL', () => {
  it('runs parameterized SQL and answers rows, rowCount and fields', async () => {
    const res = await data('rawSQL', {
      sql: 'select id, title from todos where priority >= $1 and title like $2 order by id',
      params: [1, 'write%'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      rows: [{ id: 1, title: 'write tests' }],
      rowCount: 1,
      fields: [
        { name: 'id', type: 'int4' },
        { name: 'title', type: 'text' },
      ],
      statements: [{ index: 0, line: 1, command: 'SELECT', rowCount: 1 }],
    });
    const upd = await data('rawSQL', { sql: 'update todos set done = $1 where id = $2', params: [false, 1] });
    expect(upd.body.rowCount).toBe(1);
  });

  it('answers syntax errors, unknown tables and statement timeouts as 4xx', async () => {
    expect((await data('rawSQL', { sql: 'selec 1' })).status).toBe(400);
    expect((await data('rawSQL', { sql: 'select * from ghosts' })).status).toBe(404);
    expect((await data('rawSQL', { sql: 'select $1::int', params: ['x'] })).status).toBe(400);
    expect((await data('rawSQL', { sql: 'select 1', params: 'x' })).status).toBe(400);
    expect((await data('rawSQL', {})).status).toBe(400);
    const slow = await data('rawSQL', { sql: 'select pg_sleep(30)' });
    expect(slow.status).toBe(408);
    expect(slow.body.error.code).toBe('QUERY_TIMEOUT');
  }, 20_000);
});

describe('credentials', () => {
  it('refuses missing, garbage and tenant credentials', async () => {
    expect((await call('POST', '/v1/find', { body: { table: 'todos' } })).status).toBe(401);
    expect((await call('POST', '/v1/find', { apiKey: 'tsk_garbage', body: { table: 'todos' } })).status).toBe(401);
    expect((await call('POST', '/v1/find', { token: project.token, body: { table: 'todos' } })).status).toBe(403);
  });

  it('serves the actions as GraphQL fields too', async () => {
    const res = await call('POST', '/graphql', {
      apiKey: project.apiKey,
      body: {
        query: 'query($w: JSON) { dataFind(table: "todos", where: $w, select: ["title"]) { rows } }',
        variables: { w: { id: 1 } },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.dataFind.rows).toEqual([{ title: 'write tests' }]);
  });
});

describe('project lifecycle', () => {
  it('creates a database and roles per project, and drops them with the project', async () => {
    const other = await createProject(call, project.token, 'short-lived');
    expect((await call('POST', '/v1/rawSQL', { apiKey: other.apiKey, body: { sql: 'select 1 as one' } })).status).toBe(
      200,
    );
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      const rows = async () =>
        (
          await admin.query(
            'select database_name, schema_name, role_name, user_role_name from data_project_roles where project_id = $1',
            [other.id],
          )
        ).rows;
      const [r] = await rows();
      // Names tell nothing of the project: a keyed digest of its id, behind the installation's prefix.
      expect(r.database_name).toMatch(/^tsp_[0-9a-f]{8}_[0-9a-f]{24}$/);
      expect(r.role_name).toMatch(/^tsr_[0-9a-f]{8}_[0-9a-f]{24}$/);
      expect(r.user_role_name).toBe(`${r.role_name}_u`);
      expect(`${r.database_name}${r.role_name}`).not.toContain(other.id.replace(/-/g, '').slice(0, 12));
      expect(r.schema_name).toBe(`p_${other.id.replace(/-/g, '')}`);
      const exists = async () =>
        (
          await admin.query(
            'select 1 from pg_database where datname = $1 union all select 1 from pg_roles where rolname = any($2)',
            [r.database_name, [r.role_name, r.user_role_name]],
          )
        ).rowCount;
      expect(await exists()).toBe(3);
      // Only the project's own role may connect to its database.
      const acl = await admin.query<{ public_connect: boolean; role_connect: boolean }>(
        `select has_database_privilege('public', $1, 'connect') as public_connect, has_database_privilege($2, $1, 'connect') as role_connect`,
        [r.database_name, r.role_name],
      );
      expect(acl.rows[0]).toEqual({ public_connect: false, role_connect: true });
      expect((await call('DELETE', `/auth/api/v1/projects/${other.id}`, { token: project.token })).status).toBe(204);
      // Dropped, then forgotten when the drop's transaction commits.
      await waitFor(async () => (await exists()) === 0 && (await rows()).length === 0, {
        message: 'database and roles dropped',
      });
      // A request that was on its way cannot provision the deleted project again.
      expect((await call('POST', '/v1/rawSQL', { apiKey: other.apiKey, body: { sql: 'select 1' } })).status).toBe(401);
    } finally {
      await admin.end();
    }
  });
});
