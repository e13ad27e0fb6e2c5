// rawSQL as teams write it (issue 27, 1): ordinary SQL of every family a project's role may run passes the guard
// (date/time, strings, maths, JSON, arrays, full text, CTEs, window functions, `extract`, casts, generate_series,
// pg_catalog-qualified built-ins), while what crosses the project's wall stays refused, qualified or not; a script of
// several statements runs as one transaction with each statement's command tag and row count, a failing statement
// rolls the whole script back and is named with its line, and a refused statement inside a script is refused as it
// would be alone. Against a live Tessera, through REST and GraphQL.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { createProject, dataCall, signIn, type DataProject } from './data-support.ts';

let platform: TestPlatform;
let project: DataProject;
let data: (action: string, body: unknown) => Promise<Res>;

beforeAll(async () => {
  platform = await startOneProcess();
  const call = client(platform.url);
  project = await createProject(call, await signIn(call), 'scripts');
  data = dataCall(call, project.apiKey);
  const made = await data('rawSQL', {
    sql: `create table docs (id serial primary key, title text not null, body text, tags text[], meta jsonb, at timestamptz default now());
      insert into docs (title, body, tags, meta) values
        ('Alpha', 'the quick brown fox', '{a,b}', '{"n": 1, "k": {"x": "y"}}'),
        ('Beta', 'jumps over the lazy dog', '{b}', '{"n": 2}'),
        ('Gamma', 'lorem ipsum', '{}', '{"n": 3}');`,
  });
  expect(made.status).toBe(200);
}, 90_000);
afterAll(async () => {
  await platform?.close();
});

const ORDINARY: [string, string][] = [
  ['extract', 'select extract(epoch from now()) > 0 as ok'],
  ['extract from a column', 'select extract(year from at) as y from docs limit 1'],
  ['date_trunc and intervals', "select date_trunc('day', now()) <= now() + interval '1 day' as ok"],
  ['to_char and make_date', "select to_char(make_date(2026, 11, 27), 'YYYY-MM-DD') as d"],
  ['age and justify', "select justify_interval(age(timestamp '2026-01-01', timestamp '2025-01-01')) as a"],
  [
    'overlay, position, substring',
    "select overlay('Tessera' placing 'x' from 2 for 3) as o, position('s' in 'Tessera') as p, substring('Tessera' from 2 for 3) as s",
  ],
  [
    'trim, normalize, format',
    "select trim(both 'x' from 'xaxx') as t, normalize('é') as n, format('%s-%s', 1, 2) as f",
  ],
  [
    'string functions',
    "select upper(title), lower(title), length(body), left(title, 2), replace(title, 'a', 'o'), split_part('a,b', ',', 2) from docs",
  ],
  ['regexp', "select regexp_replace(body, '\\s+', ' ', 'g'), regexp_match(body, 'q(u)') from docs"],
  [
    'maths',
    'select abs(-2), round(2.567, 2), ceil(1.2), floor(1.8), power(2, 10), sqrt(16), mod(7, 3), greatest(1, 5), least(1, 5)',
  ],
  ['random and width_bucket', 'select random() < 2 as ok, width_bucket(5, 0, 10, 5) as b'],
  [
    'JSON operators',
    "select meta->>'n' as n, meta->'k'->>'x' as x, meta #>> '{k,x}' as p, meta ? 'k' as has, meta @> '{\"n\": 1}' as c from docs",
  ],
  [
    'JSON functions',
    "select jsonb_build_object('a', 1), jsonb_agg(title), json_typeof('[1]'::json), jsonb_set(meta, '{n}', '9') from docs group by meta",
  ],
  ['jsonb_path_query', "select jsonb_path_query(meta, '$.n') as n from docs"],
  [
    'arrays',
    "select array_length(tags, 1), array_append(tags, 'c'), 'a' = any(tags) as has_a, tags && '{b}' as overlaps, unnest(tags) from docs",
  ],
  ['array_agg and string_agg', "select array_agg(id order by id), string_agg(title, ', ') from docs"],
  [
    'full text',
    "select to_tsvector('english', body) @@ to_tsquery('english', 'fox') as hit, ts_rank(to_tsvector(body), plainto_tsquery('fox')) from docs",
  ],
  ['websearch_to_tsquery and ts_headline', "select ts_headline(body, websearch_to_tsquery('quick fox')) from docs"],
  ['CTE', 'with t as (select id, title from docs where id < 3) select count(*) from t'],
  ['recursive CTE', 'with recursive n(i) as (select 1 union all select i + 1 from n where i < 5) select sum(i) from n'],
  [
    'window functions',
    'select title, row_number() over (order by id), lag(title) over (order by id), sum(id) over () from docs',
  ],
  [
    'casts',
    "select '42'::int + 1 as n, cast('2026-11-27' as date) as d, 3.5::numeric(4,1), '1 day'::interval, 't'::boolean",
  ],
  ['generate_series', 'select g from generate_series(1, 3) g'],
  [
    'generate_series of dates',
    "select count(*) from generate_series(date '2026-01-01', date '2026-01-31', interval '1 day')",
  ],
  [
    'coalesce, nullif, case',
    "select coalesce(null, 1), nullif(1, 1), case when id > 1 then 'big' else 'small' end from docs",
  ],
  ['gen_random_uuid and md5', 'select gen_random_uuid() is not null as ok, md5(title) from docs'],
  [
    'pg_catalog-qualified built-ins',
    "select pg_catalog.upper('a'), pg_catalog.now() is not null as ok, pg_catalog.length('abc')",
  ],
  [
    'current_user and version-free info',
    'select current_user is not null as ok, current_date, current_timestamp, localtimestamp',
  ],
  [
    'information_schema of the project',
    "select column_name from information_schema.columns where table_name = 'docs' order by ordinal_position",
  ],
  ['lateral join', 'select d.title, x.n from docs d cross join lateral (select d.id * 2 as n) x'],
  ['distinct on and filter', 'select distinct on (tags) tags, count(*) filter (where id > 1) over () from docs'],
  [
    'upsert',
    "insert into docs (id, title) values (1, 'Alpha') on conflict (id) do update set title = excluded.title returning id",
  ],
];

const REFUSED: [string, string][] = [
  ['a server file', "select pg_read_file('/etc/passwd')"],
  ['a server file, pg_catalog-qualified', "select pg_catalog.pg_read_file('/etc/passwd')"],
  ['set_config, pg_catalog-qualified', "select pg_catalog.set_config('statement_timeout', '0', false)"],
  ['another schema', 'select * from public.whatever'],
  ['a system catalog', 'select * from pg_authid'],
  ['a catalog lookup type', "select 'docs'::regclass"],
  ['a function of another schema', 'select other_schema.f()'],
  ['SQL text run by a function', "select query_to_xml('select 1', true, true, '')"],
  ['SET', 'set role postgres'],
  ['COPY to a file', "copy docs to '/tmp/x'"],
];

describe('the SQL guard: ordinary SQL passes, the wall holds', () => {
  it.each(ORDINARY)('runs %s', async (_name, sql) => {
    const res = await data('rawSQL', { sql });
    expect({ status: res.status, error: res.body?.error?.message }).toEqual({ status: 200, error: undefined });
    expect(res.body.statements).toHaveLength(1);
  });

  it.each(REFUSED)('refuses %s', async (_name, sql) => {
    const res = await data('rawSQL', { sql });
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
  });
});

describe('scripts of several statements', () => {
  it('runs a script as one transaction and answers each statement', async () => {
    const res = await data('rawSQL', {
      sql: `-- a schema file
create table items (id int primary key, name text);
insert into items values (1, 'one'), (2, 'two');
update items set name = upper(name) where id = 2;
select * from items order by id;`,
    });
    expect(res.status).toBe(200);
    expect(res.body.statements).toEqual([
      { index: 0, line: 2, command: 'CREATE', rowCount: null },
      { index: 1, line: 3, command: 'INSERT', rowCount: 2 },
      { index: 2, line: 4, command: 'UPDATE', rowCount: 1 },
      { index: 3, line: 5, command: 'SELECT', rowCount: 2 },
    ]);
    expect(res.body.rows).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'TWO' },
    ]);
    // The table is known to the other actions at once.
    expect((await data('find', { table: 'items', orderBy: { id: 'asc' } })).body.rows).toHaveLength(2);
  });

  it('rolls the whole script back when a statement fails, naming it and its line', async () => {
    const res = await data('rawSQL', {
      sql: `create table partial (id int primary key);
insert into partial values (1);
insert into partial values (1);
insert into partial values (2);`,
    });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/^statement 3 \(line 3\): /);
    expect(res.body.error.details).toMatchObject({ statement: 2, line: 3, position: expect.any(Number) });
    const gone = await data('rawSQL', { sql: "select to_regclass('partial') is null as gone" });
    expect(gone.status).toBe(403); // to_reg* stays refused; ask information_schema instead
    const tables = await data('rawSQL', {
      sql: "select count(*)::int as n from information_schema.tables where table_name = 'partial'",
    });
    expect(tables.body.rows).toEqual([{ n: 0 }]);
  });

  it('refuses a script when any statement is refused, before anything runs, naming it', async () => {
    const res = await data('rawSQL', {
      sql: `create table never (id int);
select pg_read_file('/etc/passwd');`,
    });
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(res.body.error.message).toMatch(/^statement 2 \(line 2\): rawSQL refused: function pg_read_file/);
    expect(res.body.error.details).toMatchObject({ statement: 1, line: 2 });
    const tables = await data('rawSQL', {
      sql: "select count(*)::int as n from information_schema.tables where table_name = 'never'",
    });
    expect(tables.body.rows).toEqual([{ n: 0 }]);
  });

  it('takes parameters only for a single statement, and refuses what cannot run in a transaction', async () => {
    const withParams = await data('rawSQL', { sql: 'select $1::int; select 2', params: [1] });
    expect({ status: withParams.status, code: withParams.body.error.code }).toEqual({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect(withParams.body.error.message).toMatch(/^params: /);
    const vacuum = await data('rawSQL', { sql: 'select 1; vacuum docs' });
    expect(vacuum.status).toBe(400);
    expect(vacuum.body.error.message).toMatch(/statement 2 \(line 1\) cannot run inside a transaction/);
    expect((await data('rawSQL', { sql: 'select $1::int + 1 as n', params: [41] })).body.rows).toEqual([{ n: 42 }]);
  });

  it('answers the statements through GraphQL too', async () => {
    const res = await client(platform.url)('POST', '/graphql', {
      apiKey: project.apiKey,
      body: {
        query:
          'mutation($sql: String!) { dataRawSql(sql: $sql) { rowCount statements { index line command rowCount } } }',
        variables: { sql: 'select 1; select 2 union select 3' },
      },
    });
    expect(res.body.data.dataRawSql).toEqual({
      rowCount: 2,
      statements: [
        { index: 0, line: 1, command: 'SELECT', rowCount: 1 },
        { index: 1, line: 1, command: 'SELECT', rowCount: 2 },
      ],
    });
  });

  it('runs a script inside the transaction action, all or nothing with the other operations', async () => {
    const res = await data('transaction', {
      operations: [
        { action: 'rawSQL', sql: 'create table tx_a (id int); insert into tx_a values (1)' },
        { action: 'insert', table: 'docs', values: { title: 'x' } },
        { action: 'rawSQL', sql: 'select 1/0' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^operations\[2\]/);
    const tables = await data('rawSQL', {
      sql: "select count(*)::int as n from information_schema.tables where table_name = 'tx_a'",
    });
    expect(tables.body.rows).toEqual([{ n: 0 }]);
  });
});
