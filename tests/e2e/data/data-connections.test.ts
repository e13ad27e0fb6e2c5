// The data API's connections and catalog: projects share one connection budget (each connection still logs in as
// its own project's role), and what a project's SQL changes in its tables is seen by the very next request, on
// this instance and on another one (the catalog is cached per process and dropped by broadcasts).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTessera, type Tessera } from '../../../main.ts';
import { startOneProcess, TEST_SECRET, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { createProject, dataCall, dropLeftoverRoles, signIn, type Call, type DataProject } from './data-support.ts';

const BUDGET = 3;

let platform: TestPlatform;
let second: Tessera;
let secondDir: string;
let call: Call;
let token: string;
let databaseUrl: string;

beforeAll(async () => {
  platform = await startOneProcess({ TESSERA_DATA_MAX_CONNECTIONS: String(BUDGET) });
  databaseUrl = platform.tessera!.config.databaseUrl!;
  // Another instance on the same database (as a second server behind a load balancer would be).
  secondDir = fs.mkdtempSync(path.join(path.resolve('.tessera', 'test-data'), 'p-'));
  second = await startTessera({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    TESSERA_DATA_DIR: secondDir,
    TESSERA_INTERNAL_SECRET: TEST_SECRET,
    TESSERA_DATA_MAX_CONNECTIONS: String(BUDGET),
  });
  call = client(platform.url);
  token = await signIn(call);
}, 120_000);

afterAll(async () => {
  await second?.close();
  if (secondDir) fs.rmSync(secondDir, { recursive: true, force: true });
  await platform?.close();
  if (databaseUrl) await dropLeftoverRoles(databaseUrl);
});

async function dataConnections(): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where application_name = 'tessera-data' and datname = current_database()`,
    );
    return rows[0]!.n;
  } finally {
    await c.end();
  }
}

describe('the catalog', () => {
  let project: DataProject;
  let here: ReturnType<typeof dataCall>;
  let there: ReturnType<typeof dataCall>;

  beforeAll(async () => {
    project = await createProject(call, token, 'catalog');
    here = dataCall(call, project.apiKey);
    there = dataCall(client(second.url), project.apiKey);
  }, 60_000);

  it('sees a column changed through rawSQL on another instance at the next request', async () => {
    expect((await here('rawSQL', { sql: 'create table things (id serial primary key, n int)' })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await there('insert', { table: 'things', values: { n: i } })).status).toBe(201);
    // Known as an integer there: an array is refused before any SQL runs.
    expect((await there('insert', { table: 'things', values: { n: ['a', 'b'] } })).status).toBe(400);
    expect(
      (await here('rawSQL', { sql: 'alter table things alter column n type text[] using array[n::text]' })).status,
    ).toBe(200);
    const res = await there('insert', { table: 'things', values: { n: ['a', 'b'] } });
    expect(res.status).toBe(201);
    expect(res.body.rows[0].n).toEqual(['a', 'b']);
  }, 30_000);

  it('sees a table made by rawSQL at once, also inside the transaction that made it', async () => {
    expect((await here('find', { table: 'later' })).status).toBe(404);
    const tx = await here('transaction', {
      operations: [
        { action: 'rawSQL', sql: 'create table later (id serial primary key, title text)' },
        { action: 'insert', table: 'later', values: { title: 'made in the transaction' } },
        { action: 'find', table: 'later', select: ['title'] },
      ],
    });
    expect(tx.status).toBe(200);
    expect(tx.body.results[2].rows).toEqual([{ title: 'made in the transaction' }]);
    expect((await there('find', { table: 'later', select: ['title'] })).body.rows).toEqual([
      { title: 'made in the transaction' },
    ]);
  }, 30_000);

  it("sees a column added by the project's own trigger, which no rawSQL announced", async () => {
    expect((await here('rawSQL', { sql: 'create table target (id serial primary key)' })).status).toBe(200);
    expect((await here('rawSQL', { sql: 'create table switch (id serial primary key)' })).status).toBe(200);
    expect(
      (
        await here('rawSQL', {
          sql: `create function add_extra() returns trigger language plpgsql as $$ begin alter table target add column extra int; return null; end $$`,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await here('rawSQL', {
          sql: 'create trigger switch_adds after insert on switch for each row execute function add_extra()',
        })
      ).status,
    ).toBe(200);
    expect((await here('find', { table: 'target' })).status).toBe(200); // cached without "extra"
    expect((await here('insert', { table: 'switch', values: {} })).status).toBe(201);
    const res = await here('find', { table: 'target', select: ['extra'] });
    expect(res.status).toBe(200);
    // A column that really does not exist is still refused, naming it.
    const bad = await here('find', { table: 'target', select: ['nothing'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('"nothing"');
  }, 30_000);
});

describe('the connection budget', () => {
  it(`serves more projects than TESSERA_DATA_MAX_CONNECTIONS (${BUDGET}) at once, each as its own role, within the budget`, async () => {
    const tokens = [await signIn(call), await signIn(call)]; // the free plan holds 3 projects per tenant
    const projects = await Promise.all(
      [0, 1, 2, 3].map(async (i) => await createProject(call, tokens[i % 2]!, `budget ${i}`)),
    );
    for (const [i, p] of projects.entries()) {
      const made = await dataCall(call, p.apiKey)('rawSQL', {
        sql: `create table mine as select ${i} as owner, current_user::text as who`,
      });
      expect(made.status).toBe(200);
    }
    const finds = await Promise.all(
      Array.from({ length: 30 }, async (_, k) => {
        const i = k % projects.length;
        return { i, res: await dataCall(call, projects[i]!.apiKey)('find', { table: 'mine' }) };
      }),
    );
    const roles = new Set<string>();
    for (const { i, res } of finds) {
      expect(res.status).toBe(200);
      expect(res.body.rows[0].owner).toBe(i);
      roles.add(res.body.rows[0].who);
    }
    expect(roles.size).toBe(projects.length);
    expect(await dataConnections()).toBeLessThanOrEqual(BUDGET * 2); // this instance's budget and the other's
  }, 90_000);
});

describe('session settings', () => {
  it('live on the project role, and a starting instance brings every role to its configuration', async () => {
    const project = await createProject(call, await signIn(call), 'settings');
    expect((await dataCall(call, project.apiKey)('rawSQL', { sql: 'select 1' })).status).toBe(200);
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      const { rows } = await c.query<{ role_name: string; schema_name: string; database_name: string }>(
        'select role_name, schema_name, database_name from data_project_roles where project_id = $1',
        [project.id],
      );
      const role = rows[0]!;
      // As a role made by an older version: no settings at all, and no connection limit.
      await c.query(`alter role "${role.role_name}" in database "${role.database_name}" reset all`);
      await c.query(`alter role "${role.role_name}" connection limit -1`);
      const dir = fs.mkdtempSync(path.join(path.resolve('.tessera', 'test-data'), 'p-'));
      const third = await startTessera({
        PORT: '0',
        LOG_LEVEL: 'silent',
        DATABASE_URL: databaseUrl,
        TESSERA_DATA_DIR: dir,
        TESSERA_INTERNAL_SECRET: TEST_SECRET,
        TESSERA_DATA_STATEMENT_TIMEOUT_MS: '1234',
      });
      try {
        const data = dataCall(client(third.url), project.apiKey);
        const show = async (name: string) => (await data('rawSQL', { sql: `show ${name}` })).body.rows[0][name];
        expect(await show('statement_timeout')).toBe('1234ms');
        expect(await show('idle_in_transaction_session_timeout')).toBe('2468ms');
        expect(await show('search_path')).toBe(`${role.schema_name}, extensions`);
        const limit = await c.query<{ n: number }>('select rolconnlimit as n from pg_roles where rolname = $1', [
          role.role_name,
        ]);
        expect(limit.rows[0]!.n).toBe(50);
        const slow = await data('rawSQL', { sql: 'select pg_sleep(3)' });
        expect(slow.status).toBe(408);
      } finally {
        await third.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await c.end();
    }
  }, 90_000);
});
