// Isolation of project databases: project A's key cannot see or change project B's tables through any
// action; a corpus of rawSQL escape attempts is refused with a 4xx each, and B's data is intact after.
// End users: row level security with the user's id from the session, and no rawSQL.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RequestContext } from '../../../platform/auth.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { dataCall, dropLeftoverRoles, twoProjects, type Call, type DataProject } from './data-support.ts';

let platform: TestPlatform;
let call: Call;
let a: DataProject;
let b: DataProject;
let dataA: ReturnType<typeof dataCall>;
let dataB: ReturnType<typeof dataCall>;
let B: string;
let databaseUrl: string;

const SECRETS = [
  { id: 1, body: 'b secret one' },
  { id: 2, body: 'b secret two' },
];

beforeAll(async () => {
  platform = await startOneProcess();
  databaseUrl = platform.tessera!.config.databaseUrl!;
  call = client(platform.url);
  ({ a, b, dataA, dataB } = await twoProjects(call, ['project a', 'project b']));
  B = `p_${b.id.replace(/-/g, '')}`;
  expect((await dataB('rawSQL', { sql: 'create table secrets (id int primary key, body text not null)' })).status).toBe(
    200,
  );
  expect((await dataB('insert', { table: 'secrets', values: SECRETS })).status).toBe(201);
  expect((await dataA('rawSQL', { sql: 'create table todos (id serial primary key, title text)' })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await platform?.close();
  if (databaseUrl) await dropLeftoverRoles(databaseUrl);
});

async function bIntact(): Promise<void> {
  const res = await dataB('find', { table: 'secrets', orderBy: 'id' });
  expect(res.status).toBe(200);
  expect(res.body.rows).toEqual(SECRETS);
}

describe("project A's key and project B's tables", () => {
  it('cannot reach them through any action, by plain or qualified name', async () => {
    for (const table of ['secrets', `${B}.secrets`, `"${B}"."secrets"`]) {
      const bodies: [string, Record<string, unknown>][] = [
        ['find', { table }],
        ['findOne', { table }],
        ['insert', { table, values: { id: 3, body: 'x' } }],
        ['update', { table, where: { id: 1 }, set: { body: 'x' } }],
        ['delete', { table, all: true }],
        ['aggregate', { table, aggregates: [{ fn: 'count' }] }],
        ['vectorSearch', { table, column: 'v', vector: [1] }],
        ['transaction', { operations: [{ action: 'delete', table, all: true }] }],
      ];
      for (const [action, body] of bodies) {
        const res = await dataA(action, body);
        expect({ action, table, status: res.status }).toEqual({ action, table, status: 404 });
      }
    }
    await bIntact();
  });

  it('a table of the same name in A is a different table', async () => {
    expect(
      (await dataA('rawSQL', { sql: 'create table secrets (id int primary key, body text not null)' })).status,
    ).toBe(200);
    expect((await dataA('insert', { table: 'secrets', values: { id: 1, body: 'a own' } })).status).toBe(201);
    expect((await dataA('find', { table: 'secrets' })).body.rows).toEqual([{ id: 1, body: 'a own' }]);
    expect((await dataA('delete', { table: 'secrets', all: true })).body.count).toBe(1);
    expect((await dataA('rawSQL', { sql: 'drop table secrets' })).status).toBe(200);
    await bIntact();
  });

  it('information_schema shows A nothing of B', async () => {
    const res = await dataA('rawSQL', {
      sql: 'select table_schema, table_name from information_schema.tables where table_schema not in ($1, $2) order by 1, 2',
      params: ['pg_catalog', 'information_schema'],
    });
    expect(res.status).toBe(200);
    // Its own database holds its tables, and the platform's after-hook outbox of this project alone.
    expect(res.body.rows).toEqual([
      { table_schema: `p_${a.id.replace(/-/g, '')}`, table_name: 'todos' },
      { table_schema: 'tessera_hooks', table_name: 'outbox' },
    ]);
    const schemata = await dataA('rawSQL', {
      sql: 'select schema_name from information_schema.schemata where schema_name like $1',
      params: ['p\\_%'],
    });
    expect(schemata.body.rows).toEqual([{ schema_name: `p_${a.id.replace(/-/g, '')}` }]);
  });

  it("searches its own schema, then the shared extensions schema (pgvector's home), and may not create there", async () => {
    const res = await dataA('rawSQL', { sql: "select array_to_string(current_schemas(false), ',') as path" });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([{ path: `p_${a.id.replace(/-/g, '')},extensions` }]);
    expect((await dataA('rawSQL', { sql: 'create table extensions.intruder (id int)' })).status).toBe(403);
  });
});

describe('rawSQL escape attempts', () => {
  const corpus = (): string[] => [
    `select * from ${B}.secrets`,
    `select * from "${B}"."secrets"`,
    `select (select count(*) from ${B}.secrets)`,
    `with x as (delete from ${B}.secrets returning *) select * from x`,
    `insert into ${B}.secrets (id, body) values (9, 'x')`,
    `update ${B}.secrets set body = 'x'`,
    `delete from ${B}.secrets`,
    `truncate ${B}.secrets`,
    `drop table ${B}.secrets`,
    `drop schema ${B} cascade`,
    `alter table ${B}.secrets add column x int`,
    `create table ${B}.evil (a int)`,
    `explain analyze select * from ${B}.secrets`,
    `select * from secrets`,
    `set role postgres`,
    `set role tessera`,
    `reset role`,
    `set session authorization postgres`,
    `set search_path = ${B}`,
    `set search_path to ${B}, public`,
    `set local statement_timeout = 0`,
    `select set_config('search_path', '${B}', false)`,
    `alter role current_user set search_path = ${B}`,
    // A script is checked statement by statement: a harmless first statement does not carry a second across.
    `select 1; select * from ${B}.secrets`,
    `create table fine (id int); copy ${B}.secrets to stdout`,
    `copy ${B}.secrets to stdout`,
    // What the server knows of other databases and roles (issue 28's small leaks).
    `select * from pg_lock_status()`,
    `select * from pg_catalog.pg_lock_status()`,
    `select pg_blocking_pids(1)`,
    `select pg_input_is_valid('postgres', 'regrole')`,
    `select * from pg_input_error_info('tessera', 'regrole')`,
    `select pg_database_size('postgres')`,
    `select pg_current_snapshot()`,
    `copy (select 1) to program 'id'`,
    `copy todos from '/etc/passwd'`,
    `select pg_read_file('/etc/passwd')`,
    `select pg_read_binary_file('/etc/passwd')`,
    `select pg_ls_dir('.')`,
    `select lo_import('/etc/passwd')`,
    `select lo_export(1, '/tmp/tessera-escape')`,
    `select * from dblink('dbname=postgres', 'select 1') as t(a int)`,
    `create extension dblink`,
    `create extension if not exists plpython3u`,
    `alter system set log_statement = 'all'`,
    `do $$ begin perform 1; end $$`,
    `create function evil() returns int language c as '/lib/x.so', 'f'`,
    `create function evil() returns void language plpgsql as $$ begin execute 'drop table ${B}.secrets'; end $$`,
    `create function evil() returns setof text language sql as $$ select body from ${B}.secrets $$`,
    `create function evil() returns void language plpgsql as $$ begin perform set_config('role', 'postgres', false); end $$`,
    `create function evil() returns int language sql set search_path = ${B} as 'select 1'`,
    `select * from pg_catalog.pg_authid`,
    `select * from pg_shadow`,
    `select rolname from pg_roles`,
    `select * from pg_stat_activity`,
    `select '${B}.secrets'::regclass`,
    `select to_regclass('${B}.secrets')`,
    `select query_to_xml('select * from ${B}.secrets', true, true, '')`,
    `create role evil login password 'x'`,
    `grant select on todos to public`,
    `listen tessera_realtime`,
    `notify tessera_realtime, '{}'`,
    `select pg_notify('tessera_realtime', '{}')`,
    `select pg_advisory_lock(1)`,
    `select pg_terminate_backend(pg_backend_pid())`,
    `create temp table t (a int)`,
    `select * from public.tessera_events`,
    `select * from tessera_events`,
    `select * from data_project_roles`,
    `create table evil (a int) tablespace pg_global`,
    `begin`,
    `vacuum ${B}.secrets`,
    `analyze pg_authid`,
    `load 'auto_explain'`,
    `prepare p as select 1`,
    `select current_setting('data_directory')`,
    `create or replace function tessera_realtime.notify_change() returns trigger language plpgsql as $$ begin return null; end $$`,
    `create trigger t after insert on todos for each row execute function tessera_realtime.notify_change()`,
    `alter table todos owner to postgres`,
    `create schema evil`,
    `create database evil`,
    `reassign owned by current_user to postgres`,
    `select pg_sleep(60)`,
  ];

  it('refuses every attempt with a 4xx and leaves B intact', async () => {
    const list = corpus();
    expect(list.length).toBeGreaterThanOrEqual(40);
    const outcomes: { sql: string; status: number; code: string }[] = [];
    for (const sql of list) {
      const res = await dataA('rawSQL', { sql });
      outcomes.push({ sql, status: res.status, code: res.body?.error?.code });
    }
    const escaped = outcomes.filter((o) => o.status < 400 || o.status >= 500);
    expect(escaped).toEqual([]);
    await bIntact();
    // The same attempts inside a transaction are refused too.
    const tx = await dataA('transaction', { operations: [{ action: 'rawSQL', sql: `delete from ${B}.secrets` }] });
    expect(tx.status).toBe(403);
    expect(tx.body.error.details.operation).toBe(0);
    await bIntact();
  }, 120_000);
});

describe('end users', () => {
  const asUser = (project: DataProject, userId: string): RequestContext => ({
    requestId: `test-${userId}`,
    principal: { kind: 'user', projectId: project.id, userId, clientId: 'client', scopes: ['openid'], mfa: false },
  });
  const run = async (ctx: RequestContext, query: string, variables: Record<string, unknown>) => {
    const handle = platform.tessera!.router.handles.get('data')!;
    return await handle.execute(query, variables, ctx);
  };
  const FIND = 'query($t: String!, $w: JSON) { dataFind(table: $t, where: $w, orderBy: "id") { rows } }';
  const INSERT = 'mutation($t: String!, $v: JSON!) { dataInsert(table: $t, values: $v) { count rows } }';

  beforeAll(async () => {
    const sqls = [
      'create table notes (id serial primary key, owner text not null, body text not null)',
      'alter table notes enable row level security',
      "create policy own_notes on notes using (owner = current_setting('request.user_id', true)) with check (owner = current_setting('request.user_id', true))",
    ];
    for (const sql of sqls) expect((await dataA('rawSQL', { sql })).status).toBe(200);
    await dataA('insert', {
      table: 'notes',
      values: [
        { owner: 'u1', body: 'one' },
        { owner: 'u2', body: 'two' },
        { owner: 'u1', body: 'three' },
      ],
    });
  });

  it('see and write only the rows their policies allow', async () => {
    const u1 = await run(asUser(a, 'u1'), FIND, { t: 'notes' });
    expect(u1.errors).toBeUndefined();
    expect((u1.data!.dataFind as { rows: { body: string }[] }).rows.map((r) => r.body)).toEqual(['one', 'three']);
    const ok = await run(asUser(a, 'u2'), INSERT, { t: 'notes', v: { owner: 'u2', body: 'mine' } });
    expect(ok.errors).toBeUndefined();
    const forged = await run(asUser(a, 'u2'), INSERT, { t: 'notes', v: { owner: 'u1', body: 'forged' } });
    expect(forged.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const key = await dataA('find', { table: 'notes', select: ['body'], orderBy: 'id' });
    expect(key.body.rows.map((r: { body: string }) => r.body)).toEqual(['one', 'two', 'three', 'mine']);
  });

  it('cannot use tables without row level security, nor rawSQL, nor another project', async () => {
    const plain = await run(asUser(a, 'u1'), FIND, { t: 'todos' });
    expect(plain.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const sql = await run(asUser(a, 'u1'), 'mutation { dataRawSql(sql: "select 1") { rows } }', {});
    expect(sql.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const other = await run(asUser(b, 'u1'), FIND, { t: 'notes' });
    expect(other.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
