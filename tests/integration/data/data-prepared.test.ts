// Named statements of the data API's pools (subgraphs/data/services/pools.ts): a pool's single named statement is
// parsed once per connection and kept there (pg_prepared_statements), at most MAX_PREPARED_PER_CONNECTION of them; a
// checked-out connection runs them unnamed; a table changed under a kept statement, or the project's own SQL dropping
// or taking its name, costs that connection but never the request; a connection where the project's own SQL ran after
// named statements is not reused.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createLogger } from '../../../platform/logger.ts';
import {
  createProjectPools,
  MAX_PREPARED_PER_CONNECTION,
  type ProjectPools,
} from '../../../subgraphs/data/services/pools.ts';
import { scramVerifier, type ProjectRole } from '../../../subgraphs/data/services/provisioning.ts';
import { createTestDatabase } from '../../support/database.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let admin: pg.Client;
let pools: ProjectPools;
const suffix = crypto.randomBytes(4).toString('hex');
let database = '';
const role: ProjectRole = {
  projectId: 'prepared-a',
  serverId: 'default',
  get databaseName() {
    return database;
  },
  schemaName: `prep_${suffix}`,
  roleName: `prep_${suffix}`,
  userRoleName: `prep_${suffix}_u`,
  anonRoleName: `prep_${suffix}_a`,
  anonReady: false,
  password: crypto.randomBytes(24).toString('base64url'),
};
const T = `"prep_${suffix}".items`;
const FIND = { name: `find_${suffix}`, text: `select * from ${T} where category = $1 order by id` };

/** The named statements the pool's sessions keep (the pool has one connection). */
async function kept(): Promise<string[]> {
  const { rows } = await pools
    .get(role)
    .query<{ name: string }>('select name from pg_prepared_statements order by name');
  return rows.map((r) => r.name);
}

async function backend(): Promise<number> {
  return (await pools.get(role).query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
}

beforeAll(async () => {
  db = await createTestDatabase();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  database = (await admin.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
  await admin.query(`create role "${role.roleName}" login password '${scramVerifier(role.password)}'`);
  await admin.query(`grant connect on database "${database}" to "${role.roleName}"`);
  await admin.query(`grant "${role.roleName}" to current_user`);
  await admin.query(`create schema "${role.schemaName}" authorization "${role.roleName}"`);
  await admin.query(`create table ${T} (id integer primary key, category text not null, n integer not null)`);
  await admin.query(`alter table ${T} owner to "${role.roleName}"`);
  await admin.query(`insert into ${T} select i, 'c-' || (i % 3), i from generate_series(1, 9) as i`);
  // One connection: every statement of the test meets the same session.
  pools = createProjectPools({
    databaseUrl: db.url,
    maxConnections: 1,
    size: 1,
    waitMs: 3000,
    logger: createLogger('silent'),
  });
}, 60_000);

afterAll(async () => {
  await pools?.closeAll();
  await admin?.query(`drop schema if exists "${role.schemaName}" cascade`).catch(() => {});
  await admin?.query(`drop role if exists "${role.roleName}"`).catch(() => {});
  await admin?.end();
  await db?.drop();
});

describe('named statements of the data pools', () => {
  it('parses a named statement once per connection and keeps it there; a checked-out connection runs it unnamed', async () => {
    const pool = pools.get(role);
    const first = await pool.query<{ id: number }>({ ...FIND, values: ['c-1'] });
    expect(first.rows.map((r) => r.id)).toEqual([1, 4, 7]);
    expect(await kept()).toEqual([FIND.name]);
    expect((await pool.query<{ id: number }>({ ...FIND, values: ['c-2'] })).rows.map((r) => r.id)).toEqual([2, 5, 8]);
    expect(await kept()).toEqual([FIND.name]);

    const other = { name: `other_${suffix}`, text: `select count(*)::int as n from ${T}` };
    const client = await pool.connect();
    try {
      expect((await client.query<{ n: number }>(other)).rows[0]!.n).toBe(9);
    } finally {
      client.release();
    }
    expect(await kept()).toEqual([FIND.name]);
  });

  it('answers with the changed table when a kept statement would change its result type, on a new connection', async () => {
    const pid = await backend();
    await admin.query(`alter table ${T} add column note text not null default 'x'`);
    const res = await pools.get(role).query<{ id: number; note: string }>({ ...FIND, values: ['c-0'] });
    expect(res.rows.map((r) => [r.id, r.note])).toEqual([
      [3, 'x'],
      [6, 'x'],
      [9, 'x'],
    ]);
    expect(await backend()).not.toBe(pid);
    // The new connection prepares it again (the retry ran unnamed; the next call names it).
    await pools.get(role).query({ ...FIND, values: ['c-0'] });
    expect(await kept()).toEqual([FIND.name]);
  });

  it("answers when the project's own SQL dropped or took a kept statement's name", async () => {
    const pool = pools.get(role);
    await pool.query({ ...FIND, values: ['c-1'] });
    // As rawSQL would, on the pool's connection: but released without the reset, as if the pool had missed it.
    const client = await pool.connect();
    await client.query('deallocate all');
    client.release();
    expect((await pool.query<{ id: number }>({ ...FIND, values: ['c-1'] })).rows.map((r) => r.id)).toEqual([1, 4, 7]);

    const taken = { name: `taken_${suffix}`, text: `select n from ${T} where id = $1` };
    const c2 = await pool.connect();
    await c2.query(`prepare taken_${suffix} as select 'planted' as n`);
    c2.release();
    expect((await pool.query<{ n: number }>({ ...taken, values: [2] })).rows).toEqual([{ n: 2 }]);
  });

  it("does not reuse a connection where the project's own SQL ran after named statements", async () => {
    const pool = pools.get(role);
    await pool.query({ ...FIND, values: ['c-1'] });
    const pid = await backend();
    const client = await pool.connect();
    await client
      .query(`deallocate all; prepare ${FIND.name} as select 1 as id, 'planted' as category, 0 as n, 'y' as note`)
      .catch(() => {});
    client.release('reset');
    expect((await pool.query<{ category: string }>({ ...FIND, values: ['c-1'] })).rows.map((r) => r.category)).toEqual([
      'c-1',
      'c-1',
      'c-1',
    ]);
    expect(await backend()).not.toBe(pid);
  });

  it("keeps the connection when a named statement fails on its own input, with the statement's own error", async () => {
    const pool = pools.get(role);
    const byId = { name: `by_id_${suffix}`, text: `select id from ${T} where id = $1` };
    await pool.query({ ...byId, values: [1] });
    const pid = await backend();
    await expect(pool.query({ ...byId, values: ['not a number'] })).rejects.toMatchObject({ code: '22P02' });
    expect(await backend()).toBe(pid);
  });

  it("answers when a column's type changed under a kept statement whose parameter has the old type, on a new connection", async () => {
    const pool = pools.get(role);
    const ins = { name: `ins_${suffix}`, text: `insert into ${T} (id, category, n) values ($1, $2, $3) returning n` };
    expect((await pool.query({ ...ins, values: [100, 'c-x', 5] })).rows).toEqual([{ n: 5 }]);
    const pid = await backend();
    // As another instance's rawSQL would, before this pool's catalog hears of it: the statement's text is unchanged.
    await admin.query(`alter table ${T} alter column n type text[] using array[n::text]`);
    expect((await pool.query({ ...ins, values: [101, 'c-x', ['a', 'b']] })).rows).toEqual([{ n: ['a', 'b'] }]);
    expect(await backend()).not.toBe(pid);
  });

  it(`keeps at most ${MAX_PREPARED_PER_CONNECTION} named statements per connection; the others run unnamed`, async () => {
    const pool = pools.get(role);
    for (let i = 0; i < MAX_PREPARED_PER_CONNECTION + 8; i++) {
      const res = await pool.query<{ k: number }>({
        name: `shape_${suffix}_${i}`,
        text: `select ${i}::int as k, count(*) from ${T} where id > $1`,
        values: [0],
      });
      expect(res.rows[0]!.k).toBe(i);
    }
    expect((await kept()).length).toBe(MAX_PREPARED_PER_CONNECTION);
  });
});
