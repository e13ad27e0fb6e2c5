// The after-hook outbox of the data subgraph on a real database (migration 0002), with the functions subgraph
// replaced by a recorder of `_enqueueAfterHooks` calls: the sweeper hands off rows that are due (never a young
// one, which is still its request's), deletes them, reschedules a failed one with a growing delay and its error,
// drops (with an error in the log) only a malformed one, and two sweepers at once hand each row off once.
// `tessera_hooks.outbox_add` refuses a connection that is not the project's.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import pg from 'pg';
import { openSubgraphDatabase, type SubgraphDatabase } from '../../platform/database.ts';
import { AppError, errors } from '../../platform/errors.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import { dataMigrations } from '../../subgraphs/data/migrations/index.ts';
import { createHookOutbox, readPayload, retryDelaySeconds } from '../../subgraphs/data/services/hook-outbox.ts';
import type { AfterWrite, DataHooks } from '../../subgraphs/data/services/hooks.ts';
import { createTestDatabase } from '../support/database.ts';

type Call = { projectId: string; table: string; event: string; rows: unknown[]; userId: string | null; depth: number };

let db: { url: string; drop: () => Promise<void> };
let orm: SubgraphDatabase;
let admin: pg.Pool;
const calls: Call[] = [];
let failWith: AppError | undefined;
const logged: { level: string; msg: string; fields: Record<string, unknown> }[] = [];

/** The hook client as the outbox uses it, answering like the functions subgraph would. */
const hooks = {
  enqueueAfter: async (projectId: string, w: AfterWrite, userId: string | null, depth: number): Promise<AppError | undefined> => {
    await new Promise((r) => setTimeout(r, 5));
    if (failWith) return failWith;
    if (w.table === 'refused') return errors.validation('rows', 'must be a list');
    calls.push({ projectId, table: w.table, event: w.event, rows: w.rows, userId, depth });
    return undefined;
  },
  handOff: async () => ({ left: [] }),
} as unknown as DataHooks;

const logger = (() => {
  const base = createLogger('silent');
  const record = (level: string) => (fields: Record<string, unknown>, msg: string) => void logged.push({ level, msg, fields });
  return Object.assign(Object.create(base) as Logger, { error: record('error'), warn: record('warn'), info: record('info') });
})();

const project = crypto.randomUUID();
const write = (table: string, n = 1): AfterWrite => ({ table, event: 'insert', rows: Array.from({ length: n }, (_, i) => ({ id: i + 1, sku: `s${i}` })) });

/** Adds a row as a request that died after its commit would have left it (old enough for the sweeper). */
const leave = async (payload: unknown, age = '1 minute'): Promise<string> => {
  const { rows } = await admin.query<{ id: string }>(
    `insert into data_hook_outbox (project_id, payload, created_at) values ($1, $2::jsonb, now() - $3::interval) returning id::text as id`,
    [project, JSON.stringify(payload), age],
  );
  return rows[0]!.id;
};
const outboxRows = async () =>
  (await admin.query<{ id: string; attempts: number; due_in: number; last_error: string | null; payload: { writes: AfterWrite[] } }>(
    `select id::text as id, attempts, extract(epoch from next_attempt_at - now())::float8 as due_in, last_error, payload from data_hook_outbox order by id`,
  )).rows;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openSubgraphDatabase({ name: 'data', url: db.url, entities: [], migrations: dataMigrations, logger: createLogger('silent') });
  admin = new pg.Pool({ connectionString: db.url, max: 6 });
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await orm?.close();
  await db?.drop();
});

beforeEach(async () => {
  calls.length = 0;
  logged.length = 0;
  failWith = undefined;
  await admin.query('delete from data_hook_outbox');
});

describe('the outbox sweeper', () => {
  it('hands off a row left by a request that did not finish, with its user and depth, and deletes it', async () => {
    const id = await leave({ userId: 'user-1', depth: 2, writes: [write('orders', 2), { table: 'lines', event: 'delete', rows: [{ id: 9 }] }] });
    await createHookOutbox({ admin, hooks, logger }).sweep();
    expect(calls).toEqual([
      { projectId: project, table: 'orders', event: 'insert', rows: [{ id: 1, sku: 's0' }, { id: 2, sku: 's1' }], userId: 'user-1', depth: 2 },
      { projectId: project, table: 'lines', event: 'delete', rows: [{ id: 9 }], userId: 'user-1', depth: 2 },
    ]);
    expect(await outboxRows()).toEqual([]);
    expect(logged).toEqual([expect.objectContaining({ level: 'info', fields: expect.objectContaining({ outbox: id, attempts: 1 }) })]);
  });

  it('leaves rows younger than 15 s to the request that added them, and rows not yet due', async () => {
    await leave({ userId: null, depth: 1, writes: [write('young')] }, '2 seconds');
    const later = await leave({ userId: null, depth: 1, writes: [write('later')] });
    await admin.query(`update data_hook_outbox set next_attempt_at = now() + interval '1 minute' where id = $1`, [later]);
    await createHookOutbox({ admin, hooks, logger }).sweep();
    expect(calls).toEqual([]);
    expect(await outboxRows()).toHaveLength(2);
  });

  it('keeps a row whose hand-off fails, with its error and a growing delay, logs every failure, and hands it off once it works', async () => {
    const outbox = createHookOutbox({ admin, hooks, logger });
    const id = await leave({ userId: null, depth: 1, writes: [write('orders')] });
    failWith = errors.unavailable('The edge functions service could not be reached for database hooks: connect ECONNREFUSED');
    await outbox.sweep();
    let [row] = await outboxRows();
    expect(row).toMatchObject({ id, attempts: 1, last_error: expect.stringMatching(/ECONNREFUSED/) });
    expect(row!.due_in).toBeGreaterThan(8);
    expect(row!.due_in).toBeLessThanOrEqual(10);
    expect(logged.at(-1)).toMatchObject({ level: 'warn', fields: { outbox: id, attempts: 1, retry_in_s: 10 } });
    // Not due yet: the next sweep leaves it alone.
    await outbox.sweep();
    expect((await outboxRows())[0]!.attempts).toBe(1);
    // Failing for the fifth time is an error in the log; the row is still kept.
    await admin.query(`update data_hook_outbox set attempts = 4, next_attempt_at = now() where id = $1`, [id]);
    await outbox.sweep();
    [row] = await outboxRows();
    expect(row).toMatchObject({ attempts: 5 });
    expect(row!.due_in).toBeGreaterThan(150);
    expect(logged.at(-1)).toMatchObject({ level: 'error', msg: expect.stringMatching(/keep failing/), fields: { attempts: 5, retry_in_s: 160 } });
    failWith = undefined;
    await admin.query(`update data_hook_outbox set next_attempt_at = now() where id = $1`, [id]);
    await outbox.sweep();
    expect(calls.map((c) => c.table)).toEqual(['orders']);
    expect(await outboxRows()).toEqual([]);
  });

  it('after a failure part way, keeps only the writes not handed off', async () => {
    const outbox = createHookOutbox({ admin, hooks, logger });
    let n = 0;
    const flaky = { ...hooks, enqueueAfter: async (...a: Parameters<DataHooks['enqueueAfter']>) => (++n === 2 ? errors.unavailable('down') : await hooks.enqueueAfter(...a)) } as DataHooks;
    await leave({ userId: null, depth: 1, writes: [write('a'), write('b'), write('c')] });
    await createHookOutbox({ admin, hooks: flaky, logger }).sweep();
    expect(calls.map((c) => c.table)).toEqual(['a']);
    expect((await outboxRows())[0]!.payload.writes.map((w) => w.table)).toEqual(['b', 'c']);
    await admin.query('update data_hook_outbox set next_attempt_at = now()');
    await outbox.sweep();
    expect(calls.map((c) => c.table)).toEqual(['a', 'b', 'c']);
    expect(await outboxRows()).toEqual([]);
  });

  it('drops a malformed row or a write the functions subgraph refuses as malformed, with an error in the log', async () => {
    const bad = await leave({ writes: 'not a list', depth: 1 });
    const refused = await leave({ userId: null, depth: 1, writes: [write('refused'), write('fine')] });
    await createHookOutbox({ admin, hooks, logger }).sweep();
    expect(await outboxRows()).toEqual([]);
    expect(calls.map((c) => c.table)).toEqual(['fine']);
    expect(logged.filter((l) => l.level === 'error')).toEqual([
      expect.objectContaining({ msg: expect.stringMatching(/malformed; dropped/), fields: expect.objectContaining({ outbox: bad, problem: 'writes must be a list' }) }),
      expect.objectContaining({ msg: expect.stringMatching(/refused an outbox write as malformed/), fields: expect.objectContaining({ outbox: refused, table: 'refused' }) }),
    ]);
  });

  it('two sweepers at once (two data instances) hand each row off exactly once', async () => {
    for (let i = 0; i < 120; i++) await leave({ userId: null, depth: 1, writes: [write(`t${i}`)] });
    const one = createHookOutbox({ admin, hooks, logger });
    const two = createHookOutbox({ admin, hooks, logger });
    await Promise.all([one.sweep(), two.sweep(), one.sweep()]);
    expect(calls.map((c) => c.table).sort()).toEqual(Array.from({ length: 120 }, (_, i) => `t${i}`).sort());
    expect(await outboxRows()).toEqual([]);
  });

  it('runs by itself once started, and stops', async () => {
    const outbox = createHookOutbox({ admin, hooks, logger, intervalMs: 200 });
    outbox.start();
    try {
      await leave({ userId: null, depth: 1, writes: [write('timed')] });
      for (let i = 0; i < 60 && calls.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(calls.map((c) => c.table)).toEqual(['timed']);
    } finally {
      await outbox.stop();
    }
    await leave({ userId: null, depth: 1, writes: [write('after-stop')] });
    await new Promise((r) => setTimeout(r, 1500));
    expect(calls.map((c) => c.table)).toEqual(['timed']);
  });
});

describe('tessera_hooks.outbox_add', () => {
  it('refuses a connection that is not the project login role (here: the platform role itself)', async () => {
    await expect(admin.query(`select tessera_hooks.outbox_add($1, '{"writes": []}'::jsonb)`, [project])).rejects.toMatchObject({ code: '42501', message: expect.stringMatching(/only project .* own connection/) });
    expect(await outboxRows()).toEqual([]);
  });

  it('adds from the write path of a project connection, which the outbox service uses', async () => {
    // A role registered as the project's login role, logged in as (with its password) like the data API's connections.
    const role = `tsr_test_${crypto.randomBytes(4).toString('hex')}`;
    const password = crypto.randomBytes(16).toString('hex');
    await admin.query(`create role ${role} login password '${password}'`);
    await admin.query(`grant connect on database "${new URL(db.url).pathname.slice(1)}" to ${role}`);
    try {
      await admin.query(`insert into data_project_roles (project_id, schema_name, role_name, user_role_name, password_sealed) values ($1, $2, $3, $4, 'x')`, [project, `p_${role}`, role, `${role}_u`]);
      const url = new URL(db.url);
      url.username = role;
      url.password = password;
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        const outbox = createHookOutbox({ admin, hooks, logger });
        const id = await outbox.add(c, { projectId: project, userId: 'u1', depth: 0, dryRun: false, requestId: 't' }, [write('orders'), { table: 'empty', event: 'update', rows: [] }]);
        expect(id).toMatch(/^\d+$/);
        expect(await outbox.add(c, { projectId: project, userId: null, depth: 0, dryRun: false, requestId: 't' }, [{ table: 'empty', event: 'update', rows: [] }])).toBeUndefined();
        await expect(c.query(`select tessera_hooks.outbox_add($1, '{"writes": []}'::jsonb)`, [crypto.randomUUID()])).rejects.toMatchObject({ code: '42501' });
        await expect(c.query(`select tessera_hooks.outbox_add($1, '{"writes": 1}'::jsonb)`, [project])).rejects.toMatchObject({ code: '22023' });
        await expect(c.query('select * from data_hook_outbox')).rejects.toMatchObject({ code: '42501' });
        await expect(c.query(`update data_hook_outbox set payload = '{}'`)).rejects.toMatchObject({ code: '42501' });
        const rows = await outboxRows();
        expect(rows.map((r) => r.id)).toEqual([id]);
        expect(rows[0]!.payload).toEqual({ userId: 'u1', depth: 1, writes: [write('orders')] });
      } finally {
        await c.end();
      }
    } finally {
      await admin.query('delete from data_project_roles where role_name = $1', [role]);
      await admin.query(`revoke connect on database "${new URL(db.url).pathname.slice(1)}" from ${role}`);
      await admin.query(`drop role ${role}`);
    }
  });
});

describe('helpers', () => {
  it('waits 10 s after the first failure, doubling up to an hour', () => {
    expect([1, 2, 3, 4, 5, 9, 10, 50].map(retryDelaySeconds)).toEqual([10, 20, 40, 80, 160, 2560, 3600, 3600]);
  });

  it('reads only well-formed payloads', () => {
    expect(readPayload({ depth: 1, writes: [] })).toEqual({ userId: null, depth: 1, writes: [] });
    expect(readPayload(null)).toBe('not an object');
    expect(readPayload({ depth: 0, writes: [] })).toMatch(/depth/);
    expect(readPayload({ depth: 1, userId: 5, writes: [] })).toMatch(/userId/);
    expect(readPayload({ depth: 1, writes: [{ table: 'a', event: 'upsert', rows: [] }] })).toMatch(/writes\[0\]\.event/);
    expect(readPayload({ depth: 1, writes: [{ table: '', event: 'insert', rows: [] }] })).toMatch(/writes\[0\]\.table/);
    expect(readPayload({ depth: 1, writes: [{ table: 'a', event: 'insert', rows: {} }] })).toMatch(/writes\[0\]\.rows/);
  });
});
