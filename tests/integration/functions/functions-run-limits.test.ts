// The run limits on real PostgreSQL, as two instances of the functions subgraph would hold them (two RunLimits over
// one database): concurrent-run slots are shared across instances and freed by their lease when a holder dies, async
// invokes of one tree are counted exactly under concurrency, the cron schedule's shortest interval, and who may read
// a project's function usage.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import { createTestDatabase } from '../../support/database.ts';
import { heldPlan } from '../../support/plan-reader.ts';
import { waitFor } from '../../support/wait-for.ts';
import { openFunctionsTables } from './functions-fixtures.ts';
import { createSql } from '../../../subgraphs/functions/services/sql.ts';
import { createRunLimits, type RunSlot } from '../../../subgraphs/functions/services/run-limits.ts';
import { shortestIntervalMs } from '../../../subgraphs/functions/services/cron.ts';
import { usageReader, type FunctionsContext } from '../../../subgraphs/functions/resolvers/context.ts';
import { AppError } from '../../../platform/errors.ts';
import type { Principal } from '../../../platform/auth.ts';

let db: { url: string; drop: () => Promise<void> };
let tables: Awaited<ReturnType<typeof openFunctionsTables>>;
const plan = heldPlan({ maxConcurrentFunctionRuns: 2, maxAsyncInvokesPerRun: 5 });

beforeAll(async () => {
  db = await createTestDatabase();
  tables = await openFunctionsTables(db.url);
}, 60_000);

afterAll(async () => {
  await tables?.close();
  await db?.drop();
});

const instance = () => createRunLimits({ sql: createSql(tables.orm), limits: plan.reader });

describe('concurrent-run slots across instances', () => {
  it('lets two instances together hold at most the limit, and frees a slot on release', async () => {
    const [a, b] = [instance(), instance()];
    const projectId = crypto.randomUUID();
    const held = await Promise.all([a.takeSlot(projectId, 60_000), b.takeSlot(projectId, 60_000)]);
    expect(held.every((s) => s !== null)).toBe(true);
    expect(await a.takeSlot(projectId, 60_000)).toBeNull();
    expect(await b.takeSlot(projectId, 60_000)).toBeNull();
    // Another project has slots of its own.
    expect(await b.takeSlot(crypto.randomUUID(), 60_000)).not.toBeNull();
    expect((await a.usage(projectId)).runningNow).toBe(2);
    await held[0]!.release();
    const again = await b.takeSlot(projectId, 60_000);
    expect(again).not.toBeNull();
    await again!.release();
    await held[1]!.release();
    expect((await a.usage(projectId)).runningNow).toBe(0);
  });

  it('gives exactly the limit to many concurrent takers, and refuses the rest', async () => {
    const projectId = crypto.randomUUID();
    plan.plan.limits.maxConcurrentFunctionRuns = 5;
    const takers = Array.from({ length: 8 }, (_, i) => (i % 2 ? instance() : instance()));
    const got = await Promise.all(takers.map((t) => t.takeSlot(projectId, 60_000)));
    expect(got.filter((s) => s !== null)).toHaveLength(5);
    await Promise.all(got.map((s) => s?.release()));
    plan.plan.limits.maxConcurrentFunctionRuns = 2;
  });

  it('frees the slots of a holder that died once their lease ends', async () => {
    const projectId = crypto.randomUUID();
    const dead = instance();
    // Held and never given back (the process "died"), with short leases.
    const lost: (RunSlot | null)[] = [await dead.takeSlot(projectId, 300), await dead.takeSlot(projectId, 300)];
    expect(lost.every((s) => s !== null)).toBe(true);
    const other = instance();
    const slot = await waitFor(async () => (await other.takeSlot(projectId, 60_000)) ?? undefined, {
      message: 'a slot freed by its lease',
    });
    await slot.release();
  });

  it('asks the table nothing while this instance holds every slot of the project', async () => {
    const sql = createSql(tables.orm);
    let statements = 0;
    const counted = {
      ...sql,
      rows: (async (q: string, p?: unknown[]) => (statements++, await sql.rows(q, p))) as typeof sql.rows,
      run: async (q: string, p?: unknown[]) => (statements++, await sql.run(q, p)),
    };
    const limits = createRunLimits({ sql: counted, limits: plan.reader });
    const projectId = crypto.randomUUID();
    const held = [await limits.takeSlot(projectId, 60_000), await limits.takeSlot(projectId, 60_000)];
    expect(held.every((s) => s !== null)).toBe(true);
    expect(limits.heldHere(projectId)).toBe(2);
    const before = statements;
    const refused = await Promise.all(Array.from({ length: 50 }, () => limits.takeSlot(projectId, 60_000)));
    expect(refused.every((s) => s === null)).toBe(true);
    expect(statements).toBe(before);
    await held[0]!.release();
    expect(limits.heldHere(projectId)).toBe(1);
    const again = await limits.takeSlot(projectId, 60_000);
    expect(again).not.toBeNull();
    await Promise.all([again!.release(), held[1]!.release()]);
    expect(limits.heldHere(projectId)).toBe(0);
  });

  it('keeps one row per slot: taking and giving back updates it in place, and a raised limit adds rows', async () => {
    const projectId = crypto.randomUUID();
    const a = instance();
    for (let i = 0; i < 20; i++) {
      const slots = await Promise.all([a.takeSlot(projectId, 60_000), instance().takeSlot(projectId, 60_000)]);
      expect(slots.every((s) => s !== null)).toBe(true);
      await Promise.all(slots.map((s) => s!.release()));
    }
    const rows = async () =>
      (
        await tables.client.query('select slot from function_run_slots where project_id = $1 order by slot', [
          projectId,
        ])
      ).rows.map((r: { slot: number }) => r.slot);
    expect(await rows()).toEqual([0, 1]);
    expect((await a.usage(projectId)).runningNow).toBe(0);
    plan.plan.limits.maxConcurrentFunctionRuns = 3;
    try {
      const three = await Promise.all([0, 1, 2].map(() => instance().takeSlot(projectId, 60_000)));
      expect(three.every((s) => s !== null)).toBe(true);
      expect(await instance().takeSlot(projectId, 60_000)).toBeNull();
      expect(await rows()).toEqual([0, 1, 2]);
      await Promise.all(three.map((s) => s!.release()));
    } finally {
      plan.plan.limits.maxConcurrentFunctionRuns = 2;
    }
  });

  it('takes no slot (no statement) when the plan has no limit', async () => {
    const free = createRunLimits({ sql: createSql(tables.orm), limits: heldPlan({}).reader });
    const projectId = crypto.randomUUID();
    const slots = await Promise.all(Array.from({ length: 20 }, () => free.takeSlot(projectId, 60_000)));
    expect(slots.every((s) => s !== null)).toBe(true);
    expect(
      Number(
        (await tables.client.query('select count(*) from function_run_slots where project_id = $1', [projectId]))
          .rows[0].count,
      ),
    ).toBe(0);
  });
});

describe('async invokes per tree of runs', () => {
  it('counts concurrent invokes of one tree exactly: the bound passes, the rest PLAN_LIMIT_REACHED naming the limit', async () => {
    const [a, b] = [instance(), instance()];
    const projectId = crypto.randomUUID();
    const root = crypto.randomUUID();
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).takeAsyncInvoke(projectId, root)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason as AppError;
    expect(refused).toBeInstanceOf(AppError);
    expect(refused.code).toBe('PLAN_LIMIT_REACHED');
    expect(refused.details).toEqual({ limit: 'max_async_invokes_per_run', max: 5 });
    expect(refused.message).toMatch(
      /test plan allows 5 async invokes per run.*\(max_async_invokes_per_run\); the operator can raise it/,
    );
    // Another tree has its own count.
    await expect(a.takeAsyncInvoke(projectId, crypto.randomUUID())).resolves.toBeUndefined();
  });
});

describe('queued runs per project', () => {
  const queue = async (projectId: string, status: string, n: number) => {
    const sql = createSql(tables.orm);
    for (let i = 0; i < n; i++)
      await sql.run(
        `insert into function_executions (id, project_id, function_name, function_version, trigger, status, created_at)
         values (?, ?, 'f', 1, 'invoke', ?, now())`,
        [crypto.randomUUID(), projectId, status],
      );
  };

  it('counts held, queued and running executions (not ended ones) against the bound, in the batch’s order', async () => {
    plan.plan.limits.maxQueuedFunctionRuns = 5;
    const projectId = crypto.randomUUID();
    const other = crypto.randomUUID();
    await queue(projectId, 'queued', 1);
    await queue(projectId, 'held', 1);
    await queue(projectId, 'running', 1);
    await queue(projectId, 'succeeded', 5);
    await queue(projectId, 'failed', 2);
    // Two places left: a batch of four of the project (and one of another project) gets two, then refusals.
    const answers = await instance().queueRefusals([projectId, other, projectId, projectId, projectId]);
    expect(answers.map((a) => (a ? a.code : 'ok'))).toEqual(['ok', 'ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED']);
    const refused = answers[3]!;
    expect(refused.status).toBe(429);
    expect(refused.details).toEqual({ retry_after: 1, limit: 'max_queued_function_runs', max: 5 });
    expect(refused.message).toMatch(/test plan allows 5 queued function runs per project \(max_queued_function_runs\)/);
    // Without a bound, nothing is counted or refused.
    plan.plan.limits.maxQueuedFunctionRuns = null;
    expect(await instance().queueRefusals([projectId, projectId, projectId])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('a cron schedule’s shortest interval', () => {
  it.each([
    ['* * * * * *', 'UTC', 1_000],
    ['*/10 * * * * *', 'UTC', 10_000],
    ['0,5 * * * * *', 'UTC', 5_000],
    ['* * * * *', 'Europe/Paris', 60_000],
    ['0 3,4 * * *', 'UTC', 3_600_000],
    ['30 2 * * *', 'Europe/Paris', 23 * 3_600_000],
  ])('%s in %s: %d ms between runs at the shortest', (schedule, tz, expected) => {
    // Daily schedules across a DST change may be an hour shorter; never longer than their regular gap.
    const shortest = shortestIntervalMs(schedule, tz);
    if (expected === 23 * 3_600_000) expect(shortest).toBeGreaterThanOrEqual(expected);
    else expect(shortest).toBe(expected);
  });
});

describe('who may read a project’s function usage', () => {
  const projectId = crypto.randomUUID();
  const as = (principal: Principal) => ({ principal }) as unknown as FunctionsContext;
  it.each<[string, Principal, string | null]>([
    ['its project key', { kind: 'project', projectId, tenantId: 't' }, null],
    ['the operator', { kind: 'operator', operator: 'ops', keyId: 'k' }, null],
    ['the platform', { kind: 'internal' }, null],
    ['a tenant (reached through its own projects)', { kind: 'tenant', tenantId: 't', sessionId: 's' }, null],
    ['another project’s key', { kind: 'project', projectId: crypto.randomUUID(), tenantId: 't' }, 'NOT_FOUND'],
    ['a client token', { kind: 'project', projectId, tenantId: 't', clientId: 'c', scopes: ['openid'] }, 'FORBIDDEN'],
    ['the publishable key', { kind: 'publishable', projectId, tenantId: 't' }, 'FORBIDDEN'],
    ['an anonymous caller', { kind: 'anonymous' }, 'UNAUTHENTICATED'],
  ])('%s', (_who, principal, refusal) => {
    if (refusal === null) expect(usageReader(as(principal), projectId)).toBe(projectId);
    else expect(() => usageReader(as(principal), projectId)).toThrow(expect.objectContaining({ code: refusal }));
  });
});

describe('an account’s function usage (the operator’s tenant row)', () => {
  it('sums its projects in one statement and counts no other project’s runs', async () => {
    const sql = createSql(tables.orm);
    const [mine, alsoMine, theirs] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    await sql.run(
      `insert into function_run_counts (project_id, month, runs)
       select id::uuid, date_trunc('month', now() at time zone 'utc')::date, n from (values (?, 3), (?, 4), (?, 50)) v(id, n)`,
      [mine, alsoMine, theirs],
    );
    let statements = 0;
    const counted = {
      ...sql,
      rows: (async (q: string, p?: unknown[]) => (statements++, await sql.rows(q, p))) as typeof sql.rows,
    };
    const limits = createRunLimits({ sql: counted, limits: plan.reader });
    const slot = await limits.takeSlot(alsoMine, 60_000);
    const theirSlot = await limits.takeSlot(theirs, 60_000);
    statements = 0;
    // A duplicate id counts once; an id that is not a UUID matches nothing.
    expect(await limits.usageTotals([mine, alsoMine, mine, 'not-a-uuid'])).toEqual({
      runsThisMonth: 7,
      runningNow: 1,
      cronJobs: 0,
    });
    expect(statements).toBe(1);
    expect(await limits.usageTotals([])).toEqual({ runsThisMonth: 0, runningNow: 0, cronJobs: 0 });
    // A project's own usage is the same query for one id.
    expect(await limits.usage(theirs)).toEqual({ runsThisMonth: 50, runningNow: 1, cronJobs: 0 });
    await Promise.all([slot?.release(), theirSlot?.release()]);
  });
});
