// The plan's limits on how functions run (issue 28), read through the one plan reader (platform/plan-limits.ts):
// - max_concurrent_function_runs: runs of a project executing at once, across every instance. A run takes a slot, a
//   row of `function_run_slots` (project, slot number < the limit) leased for the function's timeout plus a minute,
//   and gives it back when it ends (the row stays, its lease ended); a process that dies mid-run frees its slots when
//   their lease ends. An instance that holds every slot of a project refuses the next run without a statement. A
//   project whose plan has no such limit takes no slot (no statement on its path). A synchronous Invoke step's child
//   runs in its parent's slot; a before-hook, part of a data API write, takes none (services/hooks.ts says why).
// - max_async_invokes_per_run: async Invoke steps a tree of runs may start, counted against the tree's root in
//   `function_fanout` (one conditional upsert per async invoke, so two instances cannot both pass the last one).
// - max_queued_function_runs: queued runs of a project not yet ended (waiting, or running: a run a job claimed is
//   `running` while it waits for its turn and a slot, so counting waiting rows alone would let a backlog grow while its
//   jobs retry). Async invokes (the API's `async`, async Invoke steps) are refused past it; checked where runs are
//   queued, for a batch at once (one indexed count of the batch's projects' `held`, `queued` and `running`
//   executions); past it 429 RATE_LIMITED with Retry-After, nothing counted or saved. Instances
//   queuing for one project at the same moment may each pass the last place: the queue can exceed the limit by what
//   they queue in one batch each. Cron ticks and after-hooks that find no free run slot are not refused by it (their
//   rate is bounded by the cron interval and jobs, and by the project's own requests).
import crypto from 'node:crypto';
import { AppError } from '../../../platform/errors.ts';
import { isUuid } from '../../../platform/ids.ts';
import type { PlanLimitsReader, ProjectPlan } from '../../../platform/plan-limits.ts';
import type { Sql } from './sql.ts';

/** A held run slot; `release` gives it back (idempotent). */
export type RunSlot = { release: () => Promise<void> };
/** The slot of a run whose plan does not cap concurrent runs. */
const UNLIMITED: RunSlot = { release: async () => {} };
/** How long a check that a project's slot rows exist is trusted, and how many projects' checks are kept. */
const ENSURED_KEEP_MS = 60_000;
const ENSURED_MAX = 10_000;
/** The holder of a free slot row (its lease ended at -infinity). */
const FREE_HOLDER = '00000000-0000-0000-0000-000000000000';
/** How long after a refusal a synchronous caller is told to try again (runs are short; the slot frees on its end). */
export const SLOT_RETRY_AFTER_S = 1;
/** How long a caller refused for a full queue is told to wait (runs are short; the queue drains as they end). */
export const QUEUE_RETRY_AFTER_S = 1;
/** A fan-out count untouched this long is dropped (its tree has ended). */
const FANOUT_KEEP_MS = 24 * 3600_000;

/** PLAN_LIMIT_REACHED naming the plan field (snake_case) and its value; the message says the operator can raise it. */
export function planLimitReached(message: string, limit: string, max: number): AppError {
  return new AppError('PLAN_LIMIT_REACHED', `${message} (${limit}); the operator can raise it`, { limit, max });
}

const planName = (plan: ProjectPlan) => `The ${plan.planId} plan`;

/** Runs this month, runs executing now, cron jobs: of one project, or summed over an account's. */
export type FunctionUsage = { runsThisMonth: number; runningNow: number; cronJobs: number };

const sumUsage = (all: FunctionUsage[]): FunctionUsage =>
  all.reduce(
    (t, u) => ({
      runsThisMonth: t.runsThisMonth + u.runsThisMonth,
      runningNow: t.runningNow + u.runningNow,
      cronJobs: t.cronJobs + u.cronJobs,
    }),
    { runsThisMonth: 0, runningNow: 0, cronJobs: 0 },
  );

/** Slots, fan-out counts and the usage the operator sees. */
export type RunLimits = ReturnType<typeof createRunLimits>;

/** Creates the run limits over the subgraph's SQL and the plan reader. */
export function createRunLimits({ sql, limits }: { sql: Sql; limits: PlanLimitsReader }) {
  const planOf = async (projectId: string): Promise<ProjectPlan | null> => {
    const known = limits.peekPlan(projectId);
    return known === undefined ? await limits.plan(projectId) : known;
  };

  /**
   * Takes a free slot of the project (one of its rows 0..max-1 whose lease has ended) for `holder`, or null when none
   * is free. The rows stay (a released slot's lease is ended, not deleted): a slot taken and given back hundreds of
   * times a second is an update of one row in place, where an insert and a delete each time left dead index entries
   * that every later take had to step over (bench N1). A row another taker is taking is skipped, not waited for.
   */
  const tryTake = async (projectId: string, max: number, holder: string, leaseMs: number): Promise<number | null> => {
    const rows = await sql.rows<{ slot: number }>(
      `update function_run_slots set holder = ?::uuid, expires_at = now() + make_interval(secs => ?::float8 / 1000)
        where project_id = ?::uuid and slot = (
          select slot from function_run_slots where project_id = ?::uuid and slot < ?::int and expires_at <= now()
          order by slot limit 1 for update skip locked)
        returning slot`,
      [holder, leaseMs, projectId, projectId, max],
    );
    return rows[0] ? Number(rows[0].slot) : null;
  };
  /** Makes the project's slot rows 0..max-1 that do not exist yet (free: a lease that ended long ago). */
  const ensureRows = async (projectId: string, max: number): Promise<number> =>
    await sql.run(
      `insert into function_run_slots (project_id, slot, holder, expires_at)
       select ?::uuid, s, ?::uuid, '-infinity'::timestamptz from generate_series(0, ?::int - 1) s
       on conflict (project_id, slot) do nothing`,
      [projectId, FREE_HOLDER, max],
    );

  /** When this instance last made sure a project's rows 0..max-1 exist, by `project/max` (bounded: oldest dropped). */
  const ensured = new Map<string, number>();
  const markEnsured = (key: string) => {
    ensured.delete(key);
    if (ensured.size >= ENSURED_MAX) ensured.delete(ensured.keys().next().value!);
    ensured.set(key, Date.now());
  };
  /** Each project's usage (the three indexed reads per project), one statement; ids that are not UUIDs are left out. */
  const usageOf = async (projectIds: readonly string[]): Promise<FunctionUsage[]> => {
    const ids = projectIds.filter((id) => isUuid(id));
    if (ids.length === 0) return [];
    const rows = await sql.rows<{ runs: string | null; slots: number; running: number; cron: number }>(
      `select
         (select runs from function_run_counts c where c.project_id = p.id and c.month = date_trunc('month', now() at time zone 'utc')::date) as runs,
         (select count(*)::int from function_run_slots s where s.project_id = p.id and s.expires_at > now()) as slots,
         (select count(*)::int from function_executions e where e.project_id = p.id and e.status = 'running') as running,
         (select count(*)::int from cron_jobs j where j.project_id = p.id) as cron
       from (select distinct (jsonb_array_elements_text(?::jsonb))::uuid as id) p`,
      [JSON.stringify(ids)],
    );
    return rows.map((r) => ({
      runsThisMonth: Number(r.runs ?? 0),
      // Per project: its slots when its plan caps concurrency, else its running executions.
      runningNow: Math.max(Number(r.slots), Number(r.running)),
      cronJobs: Number(r.cron),
    }));
  };

  /** Slots each project holds (or is taking) through this instance; a project holding none is not kept. */
  const here = new Map<string, number>();
  const unhold = (projectId: string) => {
    const n = (here.get(projectId) ?? 1) - 1;
    if (n > 0) here.set(projectId, n);
    else here.delete(projectId);
  };

  return {
    /**
     * A slot for one run of `projectId` (UNLIMITED when its plan has no cap), or null when all are taken. `leaseMs`:
     * how long the slot outlives a process that dies without giving it back.
     */
    async takeSlot(projectId: string, leaseMs: number): Promise<RunSlot | null> {
      const plan = await planOf(projectId);
      const max = plan?.limits.maxConcurrentFunctionRuns ?? null;
      if (max === null) return UNLIMITED;
      if (max <= 0) return null;
      // This instance already holds (or is taking) every slot of the project: none can be free anywhere, and asking
      // the table would only cost the server a statement. A backlog of queued runs at its cap otherwise sent one
      // failing statement per run (bench N1: the busiest statement on the platform database).
      const mine = here.get(projectId) ?? 0;
      if (mine >= max) return null;
      here.set(projectId, mine + 1);
      const holder = crypto.randomUUID();
      let slot: number | null = null;
      try {
        slot = await tryTake(projectId, max, holder, leaseMs);
        // None free: perhaps the project's first runs here (no rows yet), or a limit the operator raised (rows
        // missing above the old one). The rows are made and the take tried once more; once this instance has seen
        // the rows made (within a minute), none free means all taken.
        const key = `${projectId}/${max}`;
        const seen = ensured.get(key);
        if (slot === null && (seen === undefined || Date.now() - seen > ENSURED_KEEP_MS)) {
          await ensureRows(projectId, max);
          markEnsured(key);
          slot = await tryTake(projectId, max, holder, leaseMs);
        }
      } finally {
        if (slot === null) unhold(projectId);
      }
      if (slot === null) return null;
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          try {
            await sql.run(
              `update function_run_slots set holder = ?::uuid, expires_at = '-infinity'::timestamptz
                where project_id = ?::uuid and slot = ? and holder = ?::uuid`,
              [FREE_HOLDER, projectId, slot, holder],
            );
          } finally {
            unhold(projectId);
          }
        },
      };
    },

    /** Slots of `projectId` this instance holds or is taking now (its share of the table's rows). */
    heldHere(projectId: string): number {
      return here.get(projectId) ?? 0;
    },

    /** The answer of a synchronous call refused for want of a slot: 429 RATE_LIMITED with Retry-After. */
    async slotRefusal(projectId: string): Promise<AppError> {
      const plan = await planOf(projectId);
      const max = plan?.limits.maxConcurrentFunctionRuns ?? 0;
      const name = plan ? planName(plan) : 'The plan';
      return new AppError(
        'RATE_LIMITED',
        `${name} allows ${max} function runs at once per project (max_concurrent_function_runs); try again in ${SLOT_RETRY_AFTER_S} s, or ask the operator to raise it`,
        { retry_after: SLOT_RETRY_AFTER_S, limit: 'max_concurrent_function_runs', max },
      );
    },

    /**
     * Counts one async invoke against the tree of `rootId`; PLAN_LIMIT_REACHED (as an AppError) past the plan's
     * max_async_invokes_per_run. No statement when the plan has no such limit.
     */
    async takeAsyncInvoke(projectId: string, rootId: string): Promise<void> {
      const plan = await planOf(projectId);
      const max = plan?.limits.maxAsyncInvokesPerRun ?? null;
      if (max === null || !plan) return;
      const refuse = () =>
        planLimitReached(
          `${planName(plan)} allows ${max} async invokes per run, counted over the whole tree of runs it started`,
          'max_async_invokes_per_run',
          max,
        );
      if (max <= 0) throw refuse();
      const n = await sql.run(
        `insert into function_fanout (root_id, project_id, invokes, updated_at) values (?, ?, 1, now())
         on conflict (root_id) do update set invokes = function_fanout.invokes + 1, updated_at = now()
           where function_fanout.invokes < ?`,
        [rootId, projectId, max],
      );
      if (n === 0) throw refuse();
    },

    /**
     * For runs about to be queued, one per entry of `projectIds` (in order, a project repeated for each of its runs):
     * undefined where there is room in the project's queue, 429 RATE_LIMITED where the plan's
     * max_queued_function_runs is reached. One statement for every capped project of the batch; none when no plan caps it.
     */
    async queueRefusals(projectIds: readonly string[]): Promise<(AppError | undefined)[]> {
      const plans = new Map<string, ProjectPlan | null>();
      for (const id of projectIds) if (!plans.has(id)) plans.set(id, await planOf(id));
      const maxOf = (id: string) => plans.get(id)?.limits.maxQueuedFunctionRuns ?? null;
      const capped = [...plans.keys()].filter((id) => maxOf(id) !== null);
      const waiting = new Map<string, number>();
      if (capped.length > 0) {
        const rows = await sql.rows<{ project_id: string; n: number }>(
          `select project_id::text as project_id, count(*)::int as n from function_executions
            where project_id in (select (jsonb_array_elements_text(?::jsonb))::uuid) and status in ('held', 'queued', 'running')
            group by project_id`,
          [JSON.stringify(capped)],
        );
        for (const r of rows) waiting.set(r.project_id, Number(r.n));
      }
      return projectIds.map((id) => {
        const max = maxOf(id);
        const plan = plans.get(id);
        if (max === null || !plan) return undefined;
        const n = waiting.get(id) ?? 0;
        if (n < max) {
          waiting.set(id, n + 1);
          return undefined;
        }
        return new AppError(
          'RATE_LIMITED',
          `${planName(plan)} allows ${max} queued function runs per project (max_queued_function_runs) and as many are queued or running; try again in ${QUEUE_RETRY_AFTER_S} s, once some have ended, or ask the operator to raise it`,
          { retry_after: QUEUE_RETRY_AFTER_S, limit: 'max_queued_function_runs', max },
        );
      });
    },

    /** Drops fan-out counts of trees untouched for a day (the sweep). */
    async sweep(): Promise<number> {
      return await sql.run('delete from function_fanout where updated_at < now() - make_interval(secs => ? / 1000.0)', [
        FANOUT_KEEP_MS,
      ]);
    },

    /**
     * What the operator sees of a project's functions: runs this month (function_run_counts, as the monthly quota
     * counts them, up to a second behind), runs executing now (the slots held when the plan caps concurrency, or the
     * queued runs being run), cron jobs. Three indexed reads.
     */
    async usage(projectId: string): Promise<FunctionUsage> {
      return sumUsage(await usageOf([projectId]));
    },

    /** The same summed over several projects (an account's, for the operator): one statement for all of them. */
    async usageTotals(projectIds: readonly string[]): Promise<FunctionUsage> {
      return sumUsage(await usageOf(projectIds));
    },
  };
}
