// The after-hook outbox of the data subgraph on a real server: each project's rows live in its own database
// (`tessera_hooks.outbox`, from the project template), the platform database marks which projects have some
// (`data_hook_outbox_projects`), and the functions subgraph is replaced by a recorder of `_enqueueAfterHooks` calls.
// The sweeper hands off rows that are due (never a young one, which is still its request's), deletes them,
// reschedules a failed one with a growing delay and its error, drops (with an error in the log) only a malformed
// one, forgets a project's mark once its outbox is empty and the mark is old, and two sweepers at once hand each
// row off once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import pg from 'pg';
import { createPgPool } from '../../../platform/pg-pool.ts';
import { createSecretBox } from '../../../platform/crypto.ts';
import { openSubgraphDatabase, type SubgraphDatabase } from '../../../platform/database.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import { createLogger, type Logger } from '../../../platform/logger.ts';
import type { Config } from '../../../platform/config.ts';
import { registerJobs, startJobs } from '../../../platform/jobs.ts';
import { createScheduler } from '../../../platform/scheduler.ts';
import { dataJobs } from '../../../subgraphs/data/jobs/index.ts';
import { dataMigrations } from '../../../subgraphs/data/migrations/index.ts';
import type { DataServices } from '../../../subgraphs/data/services/index.ts';
import { createHookOutbox, readPayload, retryDelaySeconds } from '../../../subgraphs/data/services/hook-outbox.ts';
import type { AfterWrite, DataHooks } from '../../../subgraphs/data/services/hooks.ts';
import { createProjectPools, type ProjectPools } from '../../../subgraphs/data/services/pools.ts';
import {
  createProvisioning,
  type ProjectRole,
  type Provisioning,
} from '../../../subgraphs/data/services/provisioning.ts';
import { createTestDatabase } from '../../support/database.ts';
import { TEST_SECRET } from '../../support/platform.ts';
import { waitFor } from '../../support/wait-for.ts';

type Call = { projectId: string; table: string; event: string; rows: unknown[]; userId: string | null; depth: number };

let db: { url: string; drop: () => Promise<void> };
let orm: SubgraphDatabase;
let admin: pg.Pool;
let provisioning: Provisioning;
let pools: ProjectPools;
let role: ProjectRole;
const calls: Call[] = [];
let failWith: AppError | undefined;
const logged: { level: string; msg: string; fields: Record<string, unknown> }[] = [];

/** The hook client as the outbox uses it, answering like the functions subgraph would. */
const hooks = {
  enqueueAfter: async (
    projectId: string,
    w: AfterWrite,
    userId: string | null,
    depth: number,
  ): Promise<AppError | undefined> => {
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
  const record = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    void logged.push({ level, msg, fields });
  return Object.assign(Object.create(base) as Logger, {
    error: record('error'),
    warn: record('warn'),
    info: record('info'),
  });
})();

const project = crypto.randomUUID();
const write = (table: string, n = 1): AfterWrite => ({
  table,
  event: 'insert',
  rows: Array.from({ length: n }, (_, i) => ({ id: i + 1, sku: `s${i}` })),
});
const outboxOf = (h?: DataHooks) => createHookOutbox({ admin, pools, provisioning, hooks: h ?? hooks, logger });

/** Marks the project as a write just before its commit does, `age` ago. */
const mark = async (age = '1 minute'): Promise<void> => {
  await admin.query(
    `insert into data_hook_outbox_projects (project_id, touched_at) values ($1, now() - $2::interval)
     on conflict (project_id) do update set touched_at = excluded.touched_at, next_attempt_at = now()`,
    [project, age],
  );
};
/** Adds a row as a request that died after its commit would have left it (old enough for the sweeper), on the project's own connection. */
const leave = async (payload: unknown, age = '1 minute'): Promise<string> => {
  const { rows } = await pools
    .get(role)
    .query<{ id: string }>(
      `insert into tessera_hooks.outbox (payload, created_at) values ($1::jsonb, now() - $2::interval) returning id::text as id`,
      [JSON.stringify(payload), age],
    );
  await mark('2 minutes');
  return rows[0]!.id;
};
const outboxRows = async () =>
  (
    await pools.get(role).query<{
      id: string;
      attempts: number;
      due_in: number;
      last_error: string | null;
      payload: { writes: AfterWrite[] };
    }>(`select id::text as id, attempts, extract(epoch from next_attempt_at - now())::float8 as due_in, last_error, payload from tessera_hooks.outbox order by id`)
  ).rows;
const markers = async () =>
  (
    await admin.query<{ project_id: string; attempts: number }>(
      'select project_id::text as project_id, attempts from data_hook_outbox_projects',
    )
  ).rows;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openSubgraphDatabase({
    name: 'data',
    url: db.url,
    entities: [],
    migrations: dataMigrations,
    logger: createLogger('silent'),
  });
  // As the platform's pools are made: an idle connection the server ends (57P01, seen once in CI while another test
  // file ran) is dropped and replaced, instead of an unhandled 'error' event failing whatever test runs then.
  admin = createPgPool({ connectionString: db.url, max: 6 }, createLogger('warn'), 'test admin');
  provisioning = createProvisioning({
    admin,
    platformUrl: db.url,
    serverUrl: db.url,
    box: createSecretBox(TEST_SECRET, 'data:project-roles'),
    secret: TEST_SECRET,
    statementTimeoutMs: 5000,
    connectionLimit: 20,
    tempFileLimitKb: 1048576,
    logger: createLogger('silent'),
  });
  await provisioning.init();
  role = await provisioning.create(project);
  pools = createProjectPools({ databaseUrl: db.url, maxConnections: 20, size: 6, logger: createLogger('silent') });
}, 60_000);

afterAll(async () => {
  await pools?.closeAll();
  await provisioning?.stop();
  await admin?.end();
  await orm?.close();
  await db?.drop();
});

beforeEach(async () => {
  calls.length = 0;
  logged.length = 0;
  failWith = undefined;
  await pools.get(role).query('delete from tessera_hooks.outbox');
  await admin.query('delete from data_hook_outbox_projects');
});

describe('the outbox sweeper', () => {
  it('hands off a row left by a request that did not finish, with its user and depth, deletes it and forgets the mark', async () => {
    const id = await leave({
      userId: 'user-1',
      depth: 2,
      writes: [write('orders', 2), { table: 'lines', event: 'delete', rows: [{ id: 9 }] }],
    });
    await outboxOf().sweep();
    expect(calls).toEqual([
      {
        projectId: project,
        table: 'orders',
        event: 'insert',
        rows: [
          { id: 1, sku: 's0' },
          { id: 2, sku: 's1' },
        ],
        userId: 'user-1',
        depth: 2,
      },
      { projectId: project, table: 'lines', event: 'delete', rows: [{ id: 9 }], userId: 'user-1', depth: 2 },
    ]);
    expect(await outboxRows()).toEqual([]);
    expect(await markers()).toEqual([]);
    expect(logged).toEqual([
      expect.objectContaining({ level: 'info', fields: expect.objectContaining({ outbox: id, attempts: 1 }) }),
    ]);
  });

  it('leaves rows younger than 15 s to the request that added them, rows not yet due, and projects marked just now', async () => {
    await leave({ userId: null, depth: 1, writes: [write('young')] }, '2 seconds');
    const later = await leave({ userId: null, depth: 1, writes: [write('later')] });
    await pools
      .get(role)
      .query(`update tessera_hooks.outbox set next_attempt_at = now() + interval '1 minute' where id = $1`, [later]);
    await outboxOf().sweep();
    expect(calls).toEqual([]);
    expect(await outboxRows()).toHaveLength(2);
    expect(await markers()).toHaveLength(1); // kept: rows are left
    // Marked a moment ago (a write committing now): not visited, even with an old row waiting.
    await pools
      .get(role)
      .query("update tessera_hooks.outbox set next_attempt_at = now(), created_at = now() - interval '1 minute'");
    await mark('1 second');
    await outboxOf().sweep();
    expect(calls).toEqual([]);
  });

  it('keeps a mark whose outbox is empty while it is younger than a minute (a writer may be about to commit)', async () => {
    await mark('20 seconds');
    await outboxOf().sweep();
    expect(await markers()).toHaveLength(1);
    await mark('2 minutes');
    await outboxOf().sweep();
    expect(await markers()).toEqual([]);
  });

  it('keeps a row whose hand-off fails, with its error and a growing delay, logs every failure, and hands it off once it works', async () => {
    const outbox = outboxOf();
    const id = await leave({ userId: null, depth: 1, writes: [write('orders')] });
    failWith = errors.unavailable(
      'The edge functions service could not be reached for database hooks: connect ECONNREFUSED',
    );
    await outbox.sweep();
    let [row] = await outboxRows();
    expect(row).toMatchObject({ id, attempts: 1, last_error: expect.stringMatching(/ECONNREFUSED/) });
    expect(row!.due_in).toBeGreaterThan(8);
    expect(row!.due_in).toBeLessThanOrEqual(10);
    expect(logged.at(-1)).toMatchObject({ level: 'warn', fields: { outbox: id, attempts: 1, retry_in_s: 10 } });
    expect(await markers()).toEqual([{ project_id: project, attempts: 1 }]);
    // Not due yet: the next sweep leaves it alone.
    await mark('2 minutes');
    await outbox.sweep();
    expect((await outboxRows())[0]!.attempts).toBe(1);
    // Failing for the fifth time is an error in the log; the row is still kept.
    await pools
      .get(role)
      .query(`update tessera_hooks.outbox set attempts = 4, next_attempt_at = now() where id = $1`, [id]);
    await mark('2 minutes');
    await outbox.sweep();
    [row] = await outboxRows();
    expect(row).toMatchObject({ attempts: 5 });
    expect(row!.due_in).toBeGreaterThan(150);
    expect(logged.at(-1)).toMatchObject({
      level: 'error',
      msg: expect.stringMatching(/keep failing/),
      fields: { attempts: 5, retry_in_s: 160 },
    });
    failWith = undefined;
    await pools.get(role).query(`update tessera_hooks.outbox set next_attempt_at = now() where id = $1`, [id]);
    await mark('2 minutes');
    await outbox.sweep();
    expect(calls.map((c) => c.table)).toEqual(['orders']);
    expect(await outboxRows()).toEqual([]);
  });

  it('after a failure part way, keeps only the writes not handed off', async () => {
    let n = 0;
    const flaky = {
      ...hooks,
      enqueueAfter: async (...a: Parameters<DataHooks['enqueueAfter']>) =>
        ++n === 2 ? errors.unavailable('down') : await hooks.enqueueAfter(...a),
    } as DataHooks;
    await leave({ userId: null, depth: 1, writes: [write('a'), write('b'), write('c')] });
    await outboxOf(flaky).sweep();
    expect(calls.map((c) => c.table)).toEqual(['a']);
    expect((await outboxRows())[0]!.payload.writes.map((w) => w.table)).toEqual(['b', 'c']);
    await pools.get(role).query('update tessera_hooks.outbox set next_attempt_at = now()');
    await mark('2 minutes');
    await outboxOf().sweep();
    expect(calls.map((c) => c.table)).toEqual(['a', 'b', 'c']);
    expect(await outboxRows()).toEqual([]);
  });

  it('drops a malformed row (the project may write its own outbox) or a write the functions subgraph refuses as malformed, with an error in the log', async () => {
    const bad = await leave({ writes: 'not a list', depth: 1 });
    const refused = await leave({ userId: null, depth: 1, writes: [write('refused'), write('fine')] });
    await outboxOf().sweep();
    expect(await outboxRows()).toEqual([]);
    expect(calls.map((c) => c.table)).toEqual(['fine']);
    expect(logged.filter((l) => l.level === 'error')).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/malformed; dropped/),
        fields: expect.objectContaining({ outbox: bad, problem: 'writes must be a list' }),
      }),
      expect.objectContaining({
        msg: expect.stringMatching(/refused an outbox write as malformed/),
        fields: expect.objectContaining({ outbox: refused, table: 'refused' }),
      }),
    ]);
  });

  it('two sweepers at once (two data instances) hand each row off exactly once', async () => {
    for (let i = 0; i < 120; i++) await leave({ userId: null, depth: 1, writes: [write(`t${i}`)] });
    const one = outboxOf();
    const two = outboxOf();
    await Promise.all([one.sweep(), two.sweep(), one.sweep()]);
    expect(calls.map((c) => c.table).sort()).toEqual(Array.from({ length: 120 }, (_, i) => `t${i}`).sort());
    expect(await outboxRows()).toEqual([]);
  });

  it("runs by itself as the data subgraph's recurring job, and sweeps no more once stopped", async () => {
    const outbox = outboxOf();
    const scheduler = createScheduler({
      url: db.url,
      name: 'data',
      logger: createLogger('silent'),
      processEveryMs: 100,
    });
    const config = {} as Config;
    registerJobs('data', scheduler, { outbox } as unknown as DataServices, dataJobs, config);
    await leave({ userId: null, depth: 1, writes: [write('timed')] });
    try {
      await startJobs(scheduler, dataJobs, config); // a recurring job's first run is at once
      await waitFor(() => calls.length > 0, { timeoutMs: 10_000, message: 'the first run of the sweep job' });
      expect(calls.map((c) => c.table)).toEqual(['timed']);
    } finally {
      await scheduler.stop();
      await outbox.stop();
    }
    await leave({ userId: null, depth: 1, writes: [write('after-stop')] });
    await outbox.sweep();
    expect(calls.map((c) => c.table)).toEqual(['timed']);
  }, 20_000);
});

describe('adding to the outbox', () => {
  it("adds on the write's own project connection and marks the project in the platform database", async () => {
    const c = await pools.get(role).connect();
    try {
      const outbox = outboxOf();
      await c.query('begin');
      const id = await outbox.add(c, { projectId: project, userId: 'u1', depth: 0, dryRun: false, requestId: 't' }, [
        write('orders'),
        { table: 'empty', event: 'update', rows: [] },
      ]);
      expect(id).toMatch(/^\d+$/);
      expect(
        await outbox.add(c, { projectId: project, userId: null, depth: 0, dryRun: false, requestId: 't' }, [
          { table: 'empty', event: 'update', rows: [] },
        ]),
      ).toBeUndefined();
      await c.query('commit');
      const rows = await outboxRows();
      expect(rows.map((r) => r.id)).toEqual([id]);
      expect(rows[0]!.payload).toEqual({ userId: 'u1', depth: 1, writes: [write('orders')] });
      expect((await markers()).map((m) => m.project_id)).toEqual([project]);
    } finally {
      c.release();
    }
  });

  it("leaves nothing when the write's transaction rolls back", async () => {
    const c = await pools.get(role).connect();
    try {
      await c.query('begin');
      await outboxOf().add(c, { projectId: project, userId: null, depth: 0, dryRun: false, requestId: 't' }, [
        write('orders'),
      ]);
      await c.query('rollback');
      expect(await outboxRows()).toEqual([]);
    } finally {
      c.release();
    }
  });

  it("is out of reach of the project's connections: the marks live in the platform database, which no project role may enter", async () => {
    const { rows } = await admin.query<{ ok: boolean }>(
      `select has_database_privilege($1, current_database(), 'connect') as ok`,
      [role.roleName],
    );
    expect(rows[0]!.ok).toBe(false);
    await expect(pools.get(role).query('select * from data_hook_outbox_projects')).rejects.toMatchObject({
      code: '42P01',
    });
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
    expect(readPayload({ depth: 1, writes: [{ table: 'a', event: 'upsert', rows: [] }] })).toMatch(
      /writes\[0\]\.event/,
    );
    expect(readPayload({ depth: 1, writes: [{ table: '', event: 'insert', rows: [] }] })).toMatch(/writes\[0\]\.table/);
    expect(readPayload({ depth: 1, writes: [{ table: 'a', event: 'insert', rows: {} }] })).toMatch(/writes\[0\]\.rows/);
  });
});
