// The plan's function runs per calendar month (UTC), per project: every run counts (sync, async when queued, dry
// runs, webhooks, cron, hooks, Invoke steps); past the plan's maxFunctionInvocationsPerMonth a run is refused with
// 429 RATE_LIMITED and Retry-After until the next month. Taking a run is a memory increment; each process adds
// what it counted to `function_run_counts` once a second (one statement for every project) and learns the totals
// of the others from the answer, so several instances together overshoot by at most about a second's runs.
import { errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { PlanLimitsReader } from '../../../platform/plan-limits.ts';
import type { Sql } from './sql.ts';

const FLUSH_MS = 1_000;
/** A project's total is read again after this long even when this process ran nothing for it. */
const STALE_MS = 10_000;

type Count = { month: string; base: number; unsent: number; readAt: number };

export type RunQuota = {
  take: (projectId: string) => void | Promise<void>;
  /** What the operator suspended of the project (`project` or its owner `tenant`), or null: a queued run checks it. */
  suspension: (projectId: string) => Promise<'project' | 'tenant' | null>;
  flush: () => Promise<void>;
  stop: () => Promise<void>;
};

/** The first day of the current month (UTC), as a date. */
function monthOf(now: number): string {
  const d = new Date(now);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

function secondsToNextMonth(now: number): number {
  const d = new Date(now);
  return Math.max(1, Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - now) / 1000));
}

/** Creates the quota over the subgraph's SQL and the plan limits (through the router). */
export function createRunQuota(opts: {
  sql: Sql;
  limits: PlanLimitsReader;
  logger: Logger;
  now?: () => number;
}): RunQuota {
  const now = opts.now ?? Date.now;
  const counts = new Map<string, Count>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;

  const read = async (projectId: string, month: string): Promise<Count> => {
    const rows = await opts.sql.rows<{ runs: string }>(
      'select runs from function_run_counts where project_id = ? and month = ?',
      [projectId, month],
    );
    const fresh = counts.get(projectId);
    const c: Count = fresh && fresh.month === month ? fresh : { month, base: 0, unsent: 0, readAt: 0 };
    c.base = Number(rows[0]?.runs ?? 0);
    c.readAt = now();
    counts.set(projectId, c);
    return c;
  };

  const flush = async (): Promise<void> => {
    const batch: { project_id: string; month: string; runs: number }[] = [];
    for (const [projectId, c] of counts) {
      if (c.unsent > 0) batch.push({ project_id: projectId, month: c.month, runs: c.unsent });
    }
    if (batch.length === 0) return;
    for (const b of batch) counts.get(b.project_id)!.unsent -= b.runs;
    try {
      const totals = await opts.sql.rows<{ project_id: string; month: string; runs: string }>(
        `insert into function_run_counts (project_id, month, runs)
         select project_id, month, runs from jsonb_to_recordset(?::jsonb) as b(project_id uuid, month date, runs bigint)
         on conflict (project_id, month) do update set runs = function_run_counts.runs + excluded.runs
         returning project_id, to_char(month, 'YYYY-MM-DD') as month, runs`,
        [JSON.stringify(batch)],
      );
      for (const t of totals) {
        const c = counts.get(t.project_id);
        if (c && c.month === t.month) {
          c.base = Number(t.runs);
          c.readAt = now();
        }
      }
    } catch (err) {
      // Not lost: counted again at the next flush.
      for (const b of batch) {
        const c = counts.get(b.project_id);
        if (c && c.month === b.month) c.unsent += b.runs;
      }
      opts.logger.warn({ err: (err as Error).message }, 'function run counts not saved; retrying');
    }
  };

  const schedule = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      flushing = flush().finally(() => (flushing = undefined));
    }, FLUSH_MS);
    timer.unref();
  };

  const count = (projectId: string, c: Count, limit: number | null): void => {
    if (limit === null) return;
    if (c.base + c.unsent >= limit) throw errors.rateLimited(secondsToNextMonth(now()));
    c.unsent++;
    schedule();
  };

  return {
    take(projectId) {
      const month = monthOf(now());
      // A project the operator suspended runs nothing (cron ticks, hooks, async runs are refused and recorded so).
      const suspended = opts.limits.peekPlan(projectId)?.suspended;
      if (suspended) throw errors.projectSuspended(projectId, suspended);
      const known = opts.limits.peek(projectId);
      const c = counts.get(projectId);
      // The hot path: limits known, this month's count fresh (or being counted here).
      if (known !== undefined && c && c.month === month && (c.unsent > 0 || now() - c.readAt < STALE_MS)) {
        return known ? count(projectId, c, known.maxFunctionInvocationsPerMonth) : undefined;
      }
      return (async () => {
        const limits = known === undefined ? await opts.limits.get(projectId) : known;
        if (!limits) return;
        const late = opts.limits.peekPlan(projectId)?.suspended;
        if (late) throw errors.projectSuspended(projectId, late);
        const current = counts.get(projectId);
        const fresh =
          current && current.month === month && (current.unsent > 0 || now() - current.readAt < STALE_MS)
            ? current
            : await read(projectId, month);
        count(projectId, fresh, limits.maxFunctionInvocationsPerMonth);
      })();
    },
    async suspension(projectId) {
      const known = opts.limits.peekPlan(projectId);
      return (known === undefined ? await opts.limits.plan(projectId) : known)?.suspended ?? null;
    },
    flush,
    async stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await flushing;
      await flush();
    },
  };
}
