// Fair shares of the connection budget on a real server: a project holds at most its plan's
// max_database_connections; when the budget is contended the next connection goes to the waiting project holding
// the fewest (a project under its share before one over it), and a project whose statements took its plan's
// database_cpu_seconds_per_minute is refused (429) before it takes a connection. Statements are held by advisory
// locks the test takes and lets go, so the order of events is the test's, not the machine's speed.
import crypto from 'node:crypto';
import os from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createLogger } from '../../../platform/logger.ts';
import { NO_LIMITS, type PlanLimitValues } from '../../../platform/plan-limits.ts';
import { createProjectPools, type ProjectPools } from '../../../subgraphs/data/services/pools.ts';
import { scramVerifier, type ProjectRole } from '../../../subgraphs/data/services/provisioning.ts';
import {
  autogroupNiceOf,
  autogroupsEnabled,
  createBackendPriority,
  createLoweredGroup,
  inLoweredGroup,
  isLocalServer,
  LOWERED_NICE,
  type BackendPriority,
} from '../../../subgraphs/data/services/backend-priority.ts';
import { createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/wait-for.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let admin: pg.Client;
let locks: pg.Client;
let pools: ProjectPools | undefined;
const suffix = crypto.randomBytes(4).toString('hex');
let database = '';
const roles: ProjectRole[] = ['hostile', 'victim', 'other'].map((x) => ({
  projectId: `fair-${x}`,
  serverId: 'default',
  get databaseName() {
    return database;
  },
  schemaName: `fair_${x}_${suffix}`,
  roleName: `fair_${x}_${suffix}`,
  userRoleName: `fair_${x}_${suffix}_u`,
  anonRoleName: `fair_${x}_${suffix}_a`,
  anonReady: false,
  password: crypto.randomBytes(24).toString('base64url'),
}));
const [HOSTILE, VICTIM, OTHER] = roles as [ProjectRole, ProjectRole, ProjectRole];
/** Whether this machine's kernel shares the CPU between sessions first (backend-priority.ts sets autogroup nice too). */
const AUTOGROUPS = autogroupsEnabled();
/**
 * Where this process may write the kernel's CPU controller (as root: CI), lowered backends share one CPU group and
 * their autogroup nice is left alone; elsewhere their autogroup nice is set.
 */
const GROUP = createLoweredGroup();
/** The backend weighs what a lowered one weighs against other sessions: in the shared group, or its autogroup at 19. */
const weighsLowered = (pid: number) =>
  GROUP ? inLoweredGroup(GROUP, pid) : !AUTOGROUPS || autogroupNiceOf(pid) === LOWERED_NICE;
/** The backend weighs what it does by default: outside the group, its autogroup at 0. */
const weighsDefault = (pid: number) =>
  (!GROUP || !inLoweredGroup(GROUP, pid)) && (!AUTOGROUPS || autogroupNiceOf(pid) === 0);

/** The plans the pools read, per project (what tenant management would answer); change them in a test. */
const plans = new Map<string, PlanLimitValues>();
const limits = {
  peek: (projectId: string) => plans.get(projectId) ?? NO_LIMITS,
  get: async (projectId: string) => plans.get(projectId) ?? NO_LIMITS,
};

function start(maxConnections: number, size = 10, priority?: BackendPriority | null, heavyMs?: number): ProjectPools {
  pools = createProjectPools({
    priority,
    heavyMs,
    databaseUrl: db.url,
    maxConnections,
    size,
    waitMs: 30_000,
    statementTimeoutMs: 60_000,
    cancelBackend: async (pid) => void (await admin.query('select pg_cancel_backend($1)', [pid])),
    limits,
    logger: createLogger('silent'),
  });
  return pools;
}

/** Statements of `role` waiting for an advisory lock now. */
async function blocked(role: ProjectRole): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where usename = $1 and wait_event_type = 'Lock'`,
    [role.roleName],
  );
  return rows[0]!.n;
}

beforeAll(async () => {
  db = await createTestDatabase();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  locks = new pg.Client({ connectionString: db.url });
  await locks.connect();
  database = (await admin.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
  for (const r of roles) {
    await admin.query(`create role "${r.roleName}" login password '${scramVerifier(r.password)}'`);
    await admin.query(`grant connect on database "${database}" to "${r.roleName}"`);
    await admin.query(`grant "${r.roleName}" to current_user`);
  }
}, 60_000);

afterEach(async () => {
  await locks.query('select pg_advisory_unlock_all()');
  await pools?.closeAll();
  pools = undefined;
  plans.clear();
});

afterAll(async () => {
  for (const r of roles) await admin?.query(`drop role if exists "${r.roleName}"`).catch(() => {});
  await locks?.end();
  await admin?.end();
  await db?.drop();
});

describe('fair shares of the connection budget', () => {
  it('serves a waiting project holding nothing before the waiters of the project holding the whole budget', async () => {
    const p = start(3);
    await locks.query('select pg_advisory_lock(1), pg_advisory_lock(2)');
    // The hostile project holds the whole budget, its statements waiting for lock 1 ...
    const holding = [1, 2, 3].map(() => p.get(HOSTILE).query('select pg_advisory_xact_lock_shared(1)'));
    await waitFor(async () => (await blocked(HOSTILE)) === 3, { message: 'three hostile statements holding' });
    // ... and queues three more (which will wait for lock 2) before the victim asks for one connection.
    const queued = [1, 2, 3].map(() => p.get(HOSTILE).query('select pg_advisory_xact_lock_shared(2)'));
    await waitFor(() => p.stats().waiting === 3, { message: 'the hostile waiters queued' });
    let victimAnswered = false;
    const victim = p
      .get(VICTIM)
      .query<{ who: string }>('select current_user::text as who')
      .then((r) => {
        victimAnswered = true;
        return r.rows[0]!.who;
      });
    await waitFor(() => p.stats().waiting === 4, { message: 'the victim queued last' });
    expect(victimAnswered).toBe(false);

    await locks.query('select pg_advisory_unlock(1)');
    // The first connection the hostile project gives back goes to the victim (it holds none), although the
    // hostile project's own waiters came first; before fair shares they took all three and the victim waited.
    expect(await victim).toBe(VICTIM.roleName);
    await Promise.all(holding);
    // The hostile waiters get the rest once the victim is done, within the budget, and wait for lock 2.
    await waitFor(async () => (await blocked(HOSTILE)) === 3, { message: 'the hostile waiters served' });
    expect(p.stats().open).toBeLessThanOrEqual(3);
    await locks.query('select pg_advisory_unlock(2)');
    await Promise.all(queued);
    expect(p.stats().waiting).toBe(0);
  }, 60_000);

  it('gives the one connection that comes back to the project under its share, not to the one over it', async () => {
    const p = start(4);
    await locks.query(
      'select pg_advisory_lock(11), pg_advisory_lock(12), pg_advisory_lock(13), pg_advisory_lock(2), pg_advisory_lock(3)',
    );
    // Over its share (2 of 4 with two projects wanting): 3 connections, each waiting for a lock of its own; under: 1.
    const over = [11, 12, 13].map((k) => p.get(HOSTILE).query(`select pg_advisory_xact_lock_shared(${k})`));
    const under = p.get(OTHER).query('select pg_advisory_xact_lock_shared(2)');
    await waitFor(async () => (await blocked(HOSTILE)) === 3 && (await blocked(OTHER)) === 1, {
      message: 'the budget held',
    });
    // Both queue one more (over first); once served, each waits for lock 3.
    const overNext = p.get(HOSTILE).query('select pg_advisory_xact_lock_shared(3)');
    await waitFor(() => p.stats().waiting === 1, { message: 'the project over its share queued' });
    const underNext = p.get(OTHER).query('select pg_advisory_xact_lock_shared(3)');
    await waitFor(() => p.stats().waiting === 2, { message: 'the project under its share queued' });
    // One connection of the project over its share comes back.
    await locks.query('select pg_advisory_unlock(11)');
    await over[0];
    await waitFor(async () => (await blocked(OTHER)) === 2, { message: 'the waiter under its share served' });
    expect(p.stats().waiting).toBe(1); // the one over its share still waits
    expect(await blocked(HOSTILE)).toBe(2);
    expect(p.projectStats(HOSTILE.projectId).open).toBe(2);
    await locks.query('select pg_advisory_unlock_all()');
    await Promise.all([...over, under, overNext, underNext]);
  }, 60_000);

  it("holds a project to its plan's max_database_connections while others use the rest of the budget", async () => {
    const p = start(6);
    plans.set(HOSTILE.projectId, { ...NO_LIMITS, maxDatabaseConnections: 2 });
    await locks.query('select pg_advisory_lock(1)');
    const held = [1, 2, 3, 4, 5].map(() =>
      p
        .get(HOSTILE)
        .query('select pg_advisory_xact_lock_shared(1)')
        .then(() => 'done'),
    );
    await waitFor(async () => (await blocked(HOSTILE)) === 2, { message: 'two hostile statements' });
    await waitFor(() => p.stats().waiting === 3, { message: 'three hostile waiters' });
    expect(p.projectStats(HOSTILE.projectId).open).toBe(2);
    // The victim is not queued behind them: there is room in the budget.
    const answers = await Promise.all(
      [1, 2, 3, 4].map(async () => (await p.get(VICTIM).query('select 1 as one')).rows[0]),
    );
    expect(answers).toEqual([{ one: 1 }, { one: 1 }, { one: 1 }, { one: 1 }]);
    expect(await blocked(HOSTILE)).toBe(2);
    await locks.query('select pg_advisory_unlock(1)');
    expect(await Promise.all(held)).toEqual(['done', 'done', 'done', 'done', 'done']);
    expect(p.projectStats(HOSTILE.projectId).open).toBeLessThanOrEqual(2);
  }, 60_000);

  it("refuses with 429 a project whose statements took its plan's time this minute, and not another project", async () => {
    const p = start(6);
    plans.set(HOSTILE.projectId, { ...NO_LIMITS, databaseCpuSecondsPerMinute: 1 });
    let refused: unknown;
    for (let i = 0; i < 10 && !refused; i++) {
      refused = await p
        .get(HOSTILE)
        .query('select pg_sleep(0.3)')
        .then(
          () => undefined,
          (err: unknown) => err,
        );
    }
    expect(refused).toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit: 'database_cpu_seconds_per_minute', max: 1 },
    });
    const details = (refused as { details: { retry_after: number; used: number } }).details;
    expect(details.retry_after).toBeGreaterThanOrEqual(1);
    expect(details.retry_after).toBeLessThanOrEqual(60);
    expect(details.used).toBeGreaterThanOrEqual(1);
    expect((refused as Error).message).toContain('database_cpu_seconds_per_minute');
    expect((await p.get(VICTIM).query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    // The operator raises it: the next statement runs.
    plans.set(HOSTILE.projectId, { ...NO_LIMITS, databaseCpuSecondsPerMinute: 60 });
    expect((await p.get(HOSTILE).query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    expect(p.projectStats(HOSTILE.projectId).statementMs).toBeGreaterThanOrEqual(1000);
  }, 60_000);
});

describe('long statements yield the CPU to short ones (a server on this machine)', () => {
  it('knows which servers are on this machine', () => {
    expect(isLocalServer('postgres://u:p@127.0.0.1:5432/d')).toBe(true);
    expect(isLocalServer('postgres://u:p@localhost/d')).toBe(true);
    expect(isLocalServer('postgres://u:p@[::1]:5432/d')).toBe(true);
    expect(isLocalServer('postgres:///d?host=/var/run/postgresql')).toBe(true);
    expect(isLocalServer('postgres://u:p@db.internal:5432/d')).toBe(false);
    expect(isLocalServer('postgres://u:p@10.0.0.5/d')).toBe(false);
    expect(createBackendPriority('postgres://u:p@db.internal/d', createLogger('silent'))).toBeNull();
  });

  it("lowers the backend of a statement that uses the CPU long (and its session's autogroup) while another project has one in flight, never one alone or one that waits; the project's next statements start lowered until it has run none for a while", async () => {
    const priority = createBackendPriority(db.url, createLogger('silent'));
    expect(priority).not.toBeNull();
    // Never a process that is not a PostgreSQL backend (this test's own process here).
    expect(priority!.lower(process.pid)).toBe(false);
    expect(os.getPriority(process.pid)).toBe(0);
    if (GROUP) expect(inLoweredGroup(GROUP, process.pid)).toBe(false);
    const p = start(4, 10, priority, 1_500);
    const victimSleeping = async () =>
      (
        await admin.query<{ pid: number }>(
          `select pid from pg_stat_activity where usename = $1 and state = 'active' and query like 'select pg_sleep%'`,
          [VICTIM.roleName],
        )
      ).rows[0]?.pid;
    const pidOf = async (where: string) =>
      (
        await admin.query<{ pid: number }>(
          `select pid from pg_stat_activity where usename = $1 and state = 'active' and ${where}`,
          [HOSTILE.roleName],
        )
      ).rows[0]?.pid;
    /** A statement of the hostile project that computes for `seconds`, once its backend is seen running it. */
    const compute = async (seconds: number, message: string) => {
      const done = p
        .get(HOSTILE)
        .query(
          `do $$ begin while clock_timestamp() < statement_timestamp() + interval '${seconds} s' loop perform 1; end loop; end $$`,
        );
      const pid = await waitFor(async () => await pidOf(`query like 'do $$%'`), { message });
      return { done, pid };
    };
    // A statement that waits a long time (here for a lock) uses no CPU: it keeps its priority, and its project is not
    // made heavy (lowering a statement that waits for a CPU on a busy machine would only make it wait longer).
    await locks.query('select pg_advisory_lock(21)');
    const waiting = p.get(HOSTILE).query('select pg_advisory_xact_lock_shared(21)');
    await waitFor(async () => (await pidOf(`wait_event_type = 'Lock'`)) !== undefined, { message: 'the wait' });
    const waitingPid = (await pidOf(`wait_event_type = 'Lock'`))!;
    await new Promise((r) => setTimeout(r, 400));
    expect(os.getPriority(waitingPid)).toBe(0);
    expect(weighsDefault(waitingPid)).toBe(true);
    await locks.query('select pg_advisory_unlock(21)');
    await waiting;
    const afterWait = await p.get(HOSTILE).query<{ pid: number }>('select pg_backend_pid() as pid');
    expect(os.getPriority(afterWait.rows[0]!.pid)).toBe(0);
    // Alone on the server (no other project's statement in flight), a statement that computes keeps its priority:
    // lowering it would serve no one, and on a machine busy with other work it would starve it into its timeout.
    const { done: lone, pid: lonePid } = await compute(1, 'the lone statement');
    await new Promise((r) => setTimeout(r, 700));
    expect(os.getPriority(lonePid)).toBe(0);
    expect(weighsDefault(lonePid)).toBe(true);
    await lone;
    // With another project's statement in flight (here one that sleeps), a statement that computes for 3 s is lowered
    // once it has used LONG_STATEMENT_MS of CPU time (or from its start: its project ran a long one just now).
    const neighbour = p.get(VICTIM).query('select pg_sleep(6)');
    await waitFor(async () => (await victimSleeping()) !== undefined, { message: "the neighbour's statement" });
    const { done: long, pid } = await compute(3, 'the long statement');
    await waitFor(() => os.getPriority(pid) === LOWERED_NICE, { message: "the long statement's backend lowered" });
    // Where the kernel shares the CPU between sessions first, the backend's own session weighs less too (its nice
    // value alone would only order it within that session, which it leads alone); where the CPU controller may be
    // written, it is in the one group all lowered backends share instead.
    expect(weighsLowered(pid)).toBe(true);
    // Another project's short statement runs at the default priority meanwhile.
    const short = await p.get(VICTIM).query<{ pid: number }>('select pg_backend_pid() as pid');
    expect(os.getPriority(short.rows[0]!.pid)).toBe(0);
    expect(weighsDefault(short.rows[0]!.pid)).toBe(true);
    await long;
    // The project's next statement starts lowered (the neighbour's statement still in flight): a project running heavy statements back to back would otherwise
    // have the CPU at full priority for the first part of each.
    const next = await p.get(HOSTILE).query<{ pid: number }>('select pg_backend_pid() as pid');
    expect(os.getPriority(next.rows[0]!.pid)).toBe(LOWERED_NICE);
    expect(weighsLowered(next.rows[0]!.pid)).toBe(true);
    expect(
      os.getPriority((await p.get(VICTIM).query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid),
    ).toBe(0);
    // Once it has run no long statement for a while, its statements run at the default priority again.
    const after = await waitFor(
      async () => {
        const r = await p.get(HOSTILE).query<{ pid: number }>('select pg_backend_pid() as pid');
        return os.getPriority(r.rows[0]!.pid) === 0 ? r.rows[0]!.pid : undefined;
      },
      { message: "the project's statements back at the default priority", intervalMs: 200 },
    );
    expect(weighsDefault(after)).toBe(true);
    await neighbour;
  }, 60_000);
});
