// The database quota's measurement on a real server (subgraphs/data/services/usage.ts): live rows from PostgreSQL's
// statistics and the database's size, how long a measurement is trusted (5 s; 1 s after a write; a refusal never rests
// on one older than 1 s), on a clock the test moves, and the per-transaction count of written rows that keeps a
// project past its quota from writing through a read or a delete.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createDatabaseQuota, writtenRows } from '../../../subgraphs/data/services/usage.ts';
import type { ProjectRole } from '../../../subgraphs/data/services/provisioning.ts';
import { createTestDatabase } from '../../support/database.ts';
import { heldPlan } from '../../support/plan-reader.ts';
import { waitFor } from '../../support/wait-for.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: pg.Pool;
const role = { projectId: 'usage-test' } as ProjectRole;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await pool.query('create table items (id serial primary key, n int)');
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Rows the statistics show (they arrive about a second after a commit). */
const statRows = async () =>
  Number(
    (await pool.query('select coalesce(sum(n_live_tup), 0)::int as n from pg_stat_user_tables')).rows[0].n as number,
  );

describe('the database quota', () => {
  it('measures live rows and bytes, trusts a measurement 5 s (1 s after a write) and refuses only on a fresh one', async () => {
    let clock = 1_000_000;
    const held = heldPlan({ maxDatabaseRows: 10 });
    const quota = createDatabaseQuota({ db: () => pool, planLimits: held.reader, now: () => clock });
    await pool.query('insert into items (n) select g from generate_series(1, 5) g');
    await waitFor(async () => (await statRows()) === 5, { message: 'the statistics to see 5 rows' });
    expect(await quota.check(role)).toBeNull();
    const u = await quota.usage(role);
    expect(u).toMatchObject({ rows: 5, maxRows: 10, maxBytes: null });
    expect(u.bytes).toBeGreaterThan(1_000_000);

    // Past the limit, but the measurement is 1 s old and no write was announced: still trusted (5 s).
    await pool.query('insert into items (n) select g from generate_series(1, 10) g');
    await waitFor(async () => (await statRows()) === 15, { message: 'the statistics to see 15 rows' });
    clock += 1_000;
    expect(await quota.check(role)).toBeNull();
    // A write was announced: a measurement 1 s old is taken again, and it is past the limit.
    quota.wrote(role.projectId);
    const over = await quota.check(role);
    expect(over).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { limit: 'max_database_rows', max: 10, used: 15 },
    });
    expect(over!.message).toMatch(/test plan allows 10 database rows per project \(max_database_rows\)/);

    // Back under: a refusal is never older than 1 s, so 0.5 s later the old measurement still refuses, 1 s later not.
    await pool.query('delete from items where n > 2');
    await waitFor(async () => (await statRows()) < 10, { message: 'the statistics to see the deletes' });
    clock += 500;
    expect(await quota.check(role)).not.toBeNull();
    clock += 500;
    expect(await quota.check(role)).toBeNull();

    // The operator's change is read at once (the reader's copy), without measuring again.
    held.plan.limits.maxDatabaseRows = 2;
    expect(await quota.check(role)).toMatchObject({ details: { limit: 'max_database_rows', max: 2 } });
    held.plan.limits.maxDatabaseRows = null;
    held.plan.limits.maxDatabaseBytes = 1;
    expect(await quota.check(role)).toMatchObject({ details: { limit: 'max_database_bytes', max: 1 } });
    held.plan.limits.maxDatabaseBytes = null;
    expect(await quota.check(role)).toBeNull();
  });

  it('counts the rows a transaction wrote, whatever wrote them, and not those of earlier transactions', async () => {
    const c = await pool.connect();
    try {
      await c.query(
        `create or replace function sneak() returns int language sql as $$ insert into items (n) values (0) returning id $$`,
      );
      await c.query('insert into items (n) values (1)'); // an earlier transaction on this connection, maybe unreported
      await c.query('begin');
      const before = await writtenRows(c);
      await c.query('delete from items where n = 1');
      await c.query('select count(*) from items');
      expect(await writtenRows(c)).toBe(before);
      await c.query('select sneak()');
      expect(await writtenRows(c)).toBe(before + 1);
      await c.query('with w as (update items set n = n returning 1) select count(*) from w');
      expect(await writtenRows(c)).toBeGreaterThan(before + 1);
      await c.query('rollback');
    } finally {
      c.release();
    }
  });

  it("sums several projects' databases for an account's total: fresh measurements reused, 4 at a time, an unreachable one counted apart", async () => {
    let clock = 5_000_000;
    let running = 0;
    let most = 0;
    let asked = 0;
    // What each measurement answered: the database is real, and its size on disk moves between two measurements
    // (autovacuum writes visibility maps and free-space maps of the rows deleted above), so the total is checked
    // against the sum of the answers given, not against nine times the first one.
    const answered: { rows: number; bytes: number }[] = [];
    // Every "project" measures this one database (so each counts its rows); `down` is a server that cannot be reached.
    const counting = {
      query: async (text: string) => {
        asked++;
        running++;
        most = Math.max(most, running);
        try {
          const result = await pool.query(text);
          answered.push({ rows: Number(result.rows[0].rows), bytes: Number(result.rows[0].bytes) });
          return result;
        } finally {
          running--;
        }
      },
    };
    const down = { query: async () => Promise.reject(new Error('connect ECONNREFUSED')) };
    const quota = createDatabaseQuota({
      db: (r) => (r.projectId === 'down' ? down : counting) as never,
      planLimits: heldPlan({}).reader,
      now: () => clock,
    });
    const rows = await statRows();
    const one = await quota.usage(role);
    const roles = Array.from({ length: 9 }, (_, i) => ({ projectId: `p${i}` }) as ProjectRole);
    asked = 0;
    answered.length = 0;
    const totals = await quota.totals([...roles, { projectId: 'down' } as ProjectRole]);
    const sum = (key: 'rows' | 'bytes') => answered.reduce((n, a) => n + a[key], 0);
    expect(totals).toEqual({ rows: sum('rows'), bytes: sum('bytes'), unmeasured: 1 });
    expect(answered.every((a) => a.rows === rows)).toBe(true); // each counts this database's rows
    expect(answered).toHaveLength(9);
    expect(one.bytes).toBeGreaterThan(0);
    expect(asked).toBe(9);
    expect(most).toBeLessThanOrEqual(4);
    // Measured a second ago and not written since: trusted, nothing is asked again; a write makes it measure anew.
    clock += 1_000;
    asked = 0;
    expect(await quota.totals(roles)).toEqual({ rows: 9 * rows, bytes: sum('bytes'), unmeasured: 0 });
    expect(asked).toBe(0);
    quota.wrote('p0');
    await quota.totals(roles);
    expect(asked).toBe(1);
    expect(await quota.totals([])).toEqual({ rows: 0, bytes: 0, unmeasured: 0 });
  });
});
