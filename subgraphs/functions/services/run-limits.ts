// The plan's limits on how functions run (issue 28), read through the one plan reader (platform/plan-limits.ts):
// - max_concurrent_function_runs: runs of a project executing at once, across every instance. A run takes a slot, a
//   row of `function_run_slots` (project, slot number < the limit) leased for the function's timeout plus a minute,
//   and gives it back when it ends; a process that dies mid-run frees its slots when their lease ends. A project whose
//   plan has no such limit takes no slot (no statement on its path). A synchronous Invoke step's child runs in its
//   parent's slot; a before-hook, part of a data API write, takes none (services/hooks.ts says why).
// - max_async_invokes_per_run: async Invoke steps a tree of runs may start, counted against the tree's root in
//   `function_fanout` (one conditional upsert per async invoke, so two instances cannot both pass the last one).
import crypto from 'node:crypto';
import { AppError } from '../../../platform/errors.ts';
import type { PlanLimitsReader, ProjectPlan } from '../../../platform/plan-limits.ts';
import type { Sql } from './sql.ts';

/** A held run slot; `release` gives it back (idempotent). */
export type RunSlot = { release: () => Promise<void> };
/** The slot of a run whose plan does not cap concurrent runs. */
const UNLIMITED: RunSlot = { release: async () => {} };
/** Collisions on one free slot (two runs choosing it at once) are tried again this often before "all taken". */
const SLOT_ATTEMPTS = 4;
/** How long after a refusal a synchronous caller is told to try again (runs are short; the slot frees on its end). */
export const SLOT_RETRY_AFTER_S = 1;
/** A fan-out count untouched this long is dropped (its tree has ended). */
const FANOUT_KEEP_MS = 24 * 3600_000;

/** PLAN_LIMIT_REACHED naming the plan field (snake_case) and its value; the message says the operator can raise it. */
export function planLimitReached(message: string, limit: string, max: number): AppError {
  return new AppError('PLAN_LIMIT_REACHED', `${message} (${limit}); the operator can raise it`, { limit, max });
}

const planName = (plan: ProjectPlan) => `The ${plan.planId} plan`;

/** Slots, fan-out counts and the usage the operator sees. */
export type RunLimits = ReturnType<typeof createRunLimits>;

/** Creates the run limits over the subgraph's SQL and the plan reader. */
export function createRunLimits({ sql, limits }: { sql: Sql; limits: PlanLimitsReader }) {
  const planOf = async (projectId: string): Promise<ProjectPlan | null> => {
    const known = limits.peekPlan(projectId);
    return known === undefined ? await limits.plan(projectId) : known;
  };

  /** Tries once to take a free slot: the slot taken, or whether a free one was seen (a collision) when none was. */
  const tryTake = async (projectId: string, max: number, holder: string, leaseMs: number) => {
    const rows = await sql.rows<{ slot: number | null; had_free: boolean }>(
      // With L slots live, one of the numbers 0..L is free (when L < max): only those are looked at, so a large
      // limit costs no more than a small one.
      `with live as (
         select slot from function_run_slots where project_id = ?::uuid and expires_at > now()
       ), free as (
         select s from generate_series(0, least(?::int, (select count(*)::int from live) + 1) - 1) s
         where s not in (select slot from live)
         order by random() limit 1
       ), taken as (
         insert into function_run_slots (project_id, slot, holder, expires_at)
         select ?::uuid, s, ?::uuid, now() + make_interval(secs => ?::float8 / 1000) from free
         on conflict (project_id, slot) do update set holder = excluded.holder, expires_at = excluded.expires_at
           where function_run_slots.expires_at <= now()
         returning slot
       )
       select (select slot from taken) as slot, exists (select 1 from free) as had_free`,
      [projectId, max, projectId, holder, leaseMs],
    );
    return rows[0] ?? { slot: null, had_free: false };
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
      const holder = crypto.randomUUID();
      for (let attempt = 0; attempt < SLOT_ATTEMPTS; attempt++) {
        const r = await tryTake(projectId, max, holder, leaseMs);
        if (r.slot !== null && r.slot !== undefined) {
          const slot = Number(r.slot);
          let released = false;
          return {
            release: async () => {
              if (released) return;
              released = true;
              await sql.run('delete from function_run_slots where project_id = ? and slot = ? and holder = ?', [
                projectId,
                slot,
                holder,
              ]);
            },
          };
        }
        if (!r.had_free) return null;
      }
      return null;
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
    async usage(projectId: string): Promise<{ runsThisMonth: number; runningNow: number; cronJobs: number }> {
      const rows = await sql.rows<{ runs: string | null; slots: number; running: number; cron: number }>(
        `select
           (select runs from function_run_counts where project_id = ?::uuid and month = date_trunc('month', now() at time zone 'utc')::date) as runs,
           (select count(*)::int from function_run_slots where project_id = ?::uuid and expires_at > now()) as slots,
           (select count(*)::int from function_executions where project_id = ?::uuid and status = 'running') as running,
           (select count(*)::int from cron_jobs where project_id = ?::uuid) as cron`,
        [projectId, projectId, projectId, projectId],
      );
      const r = rows[0];
      return {
        runsThisMonth: Number(r?.runs ?? 0),
        runningNow: Math.max(Number(r?.slots ?? 0), Number(r?.running ?? 0)),
        cronJobs: Number(r?.cron ?? 0),
      };
    },
  };
}
