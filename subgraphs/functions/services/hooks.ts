// Database hooks: `{table, timing, events, function}` per project. The data API asks, through internal
// operations, which (table, timing, event) have hooks (it caches the answer until `hooks.changed`), runs the
// before-hooks synchronously before a write and hands the committed rows of a write to the after-hooks,
// which run through the scheduler (one job per hook and row, retried with backoff: at least once).
//
// A hook's function gets `input.body = {event, table, timing, row, where, user_id}`:
// - insert: `row` is the row to write (one run per row of a multi-row insert); update: `row` is the `set`
//   values and `where` the filter; delete: `row` is null (before) and `where` the filter.
// - after-hooks: `row` is the committed row as stored (for delete: the deleted row), `where` is null.
// A before-hook's output decides: `{"error": "...", "status": 400-599, "message"?}` refuses the write
// (HOOK_REJECTED with that status); `{"row": {...}}` replaces the row to write (insert) or the `set`
// values (update); anything else leaves the write as it is. A failing before-hook refuses the write too.
import crypto from 'node:crypto';
import { publishBroadcast } from '../../../platform/broadcast.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Scheduler } from '../../../platform/scheduler.ts';
import type { RouterClient } from '../../../platform/subgraph.ts';
import { INTERNAL_OPERATIONS, callInternal } from '../../../platform/internal-operations.ts';
import { checkFunctionName } from './definitions.ts';
import { failureError, makeInput, responseStatusOf, type Engine, type RunOutcome } from './engine.ts';
import type { FunctionService } from './functions.ts';
import type { Sql } from './sql.ts';
import { isUuid } from '../../../platform/ids.ts';

export const HOOK_JOB = 'functions.hook.run';
export const HOOK_TIMINGS = ['before', 'after'] as const;
export const HOOK_EVENTS = ['insert', 'update', 'delete'] as const;
/** A before-hook holds the caller's write: its run is capped to this (or the function's own smaller timeout). */
export const BEFORE_HOOK_TIMEOUT_MS = 5000;
/** Retries of a failed after-hook run (exponential backoff from 1 s). */
export const AFTER_HOOK_RETRIES = 5;
const MAX_HOOKS_PER_PROJECT = 100;
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;
/** Failures that would fail again the same way: not retried. */
const FINAL_FAILURES = new Set(['HOOK_DEPTH_EXCEEDED', 'TEMPLATE_FAILED', 'INVALID_DEFINITION']);

export type HookTiming = (typeof HOOK_TIMINGS)[number];
export type HookEvent = (typeof HOOK_EVENTS)[number];

export type Hook = {
  id: string;
  projectId: string;
  table: string;
  timing: HookTiming;
  events: HookEvent[];
  functionId: string;
  functionName: string;
  createdAt: Date;
};

/** What the data API needs to know: which (table, timing) have hooks, for which events. */
export type HookTrigger = { table: string; timing: HookTiming; events: HookEvent[] };

/** One after-hook run, as queued. */
export type AfterHookJob = {
  hookId: string;
  projectId: string;
  table: string;
  event: HookEvent;
  row: unknown;
  userId: string | null;
  depth: number;
};

type Row = Record<string, unknown>;
const toHook = (r: Row): Hook => ({
  id: r.id as string,
  projectId: r.project_id as string,
  table: r.table_name as string,
  timing: r.timing as HookTiming,
  events: r.events as HookEvent[],
  functionId: r.function_id as string,
  functionName: r.function_name as string,
  createdAt: new Date(r.created_at as string),
});

const SELECT =
  'select h.*, f.name as function_name from function_hooks h join edge_functions f on f.id = h.function_id';
const ORDER = 'order by h.created_at, h.id';

/** Tells every data API process that the project's hooks changed (delivered when `tx` commits). */
export async function announceHooksChanged(tx: Sql, projectId: string): Promise<void> {
  await publishBroadcast({ execute: async (sql, params) => await tx.run(sql, params) }, 'hooks.changed', { projectId });
}

function checkTable(value: unknown): string {
  if (value === undefined || value === null) throw errors.validation('table', 'is required (the table name)');
  if (typeof value !== 'string' || !TABLE_NAME.test(value))
    throw errors.validation('table', 'must be a table name: a letter or _, then letters, digits, _ or $ (at most 63)');
  return value;
}

/**
 * Whether the project's own database has `table`, as the data domain lists the tables of that project's database
 * (`_projectTables`, the same question the realtime switch asks): only the caller's own project is asked about, so
 * another project's tables cannot be seen from here.
 */
async function tableExists(
  router: RouterClient,
  caller: { projectId: string; tenantId: string; requestId: string },
  table: string,
) {
  const { _projectTables: tables } = await callInternal(
    router,
    INTERNAL_OPERATIONS.projectTables,
    { projectId: caller.projectId },
    { requestId: caller.requestId, principal: { kind: 'internal' } },
  );
  return tables.includes(table);
}

function checkTiming(value: unknown): HookTiming {
  if (value === undefined || value === null) throw errors.validation('timing', 'is required: "before" or "after"');
  if (!HOOK_TIMINGS.includes(value as HookTiming))
    throw errors.validation('timing', `must be "before" or "after", got ${JSON.stringify(value).slice(0, 40)}`);
  return value as HookTiming;
}

function checkEvents(value: unknown): HookEvent[] {
  if (value === undefined || value === null)
    throw errors.validation('events', 'is required: a non-empty list of insert, update, delete');
  if (!Array.isArray(value) || value.length === 0)
    throw errors.validation('events', 'must be a non-empty list of insert, update, delete');
  for (const [i, e] of value.entries()) {
    if (!HOOK_EVENTS.includes(e as HookEvent))
      throw errors.validation(
        `events[${i}]`,
        `must be insert, update or delete, got ${JSON.stringify(e).slice(0, 40)}`,
      );
  }
  return HOOK_EVENTS.filter((e) => value.includes(e));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export type HookService = ReturnType<typeof createHookService>;

/**
 * Row events of outbound event subscriptions ride the after-hooks' path: a watched table is an after trigger for the
 * data API, and its committed rows are handed over with the hooks' (event-deliveries.ts).
 */
export type RowEvents = {
  triggers: (projectId: string) => Promise<HookTrigger[]>;
  enqueue: (a: {
    projectId: string;
    table: string;
    event: HookEvent;
    rows: unknown[];
    userId: string | null;
  }) => Promise<number>;
};

/** Merges triggers of one table and timing (hooks and row events together). */
export function mergeTriggers(lists: HookTrigger[][]): HookTrigger[] {
  const out = new Map<string, HookTrigger>();
  for (const t of lists.flat()) {
    const key = `${t.timing}/${t.table}`;
    const seen = out.get(key);
    out.set(key, {
      table: t.table,
      timing: t.timing,
      events: HOOK_EVENTS.filter((e) => t.events.includes(e) || (seen?.events.includes(e) ?? false)),
    });
  }
  return [...out.values()];
}

/** Creates the hook service. */
export function createHookService(deps: {
  sql: Sql;
  functions: FunctionService;
  engine: Engine;
  scheduler: Scheduler;
  router: RouterClient;
  logger: Logger;
  rowEvents?: RowEvents;
}) {
  const { sql, functions, engine, scheduler, router, logger } = deps;
  const hooksFor = async (projectId: string, table: string, timing: HookTiming, event: HookEvent): Promise<Hook[]> =>
    (
      await sql.rows(
        `${SELECT} where h.project_id = ? and h.table_name = ? and h.timing = ? and ? = any(h.events) ${ORDER}`,
        [projectId, table, timing, event],
      )
    ).map(toHook);

  const inputOf = (body: Record<string, unknown>) => makeInput({ body, method: 'POST' });

  /** The error a caller sees when a before-hook's run failed: FUNCTION_FAILED/FUNCTION_TIMEOUT naming the hook. */
  const failed = (hook: Hook, outcome: RunOutcome, table: string, event: string): AppError => {
    const e = failureError(outcome);
    return new AppError(e.code, `before-hook "${hook.functionName}" on ${table} (${event}) failed: ${e.message}`, {
      ...e.details,
      hook: hook.id,
      function: hook.functionName,
    });
  };

  /**
   * After a committed change: tells the data API instance the router reaches to forget the project's hooks now
   * (the broadcast may reach it a moment after our answer); the broadcast covers every other instance.
   */
  const changed = async (projectId: string): Promise<void> => {
    try {
      await callInternal(
        router,
        INTERNAL_OPERATIONS.hooksChanged,
        { projectId },
        { requestId: `hooks-${projectId}`, principal: { kind: 'internal' } },
      );
    } catch (err) {
      logger.warn(
        { project: projectId, err: (err as Error).message },
        'hooks: the data API could not be told of a change (the broadcast will)',
      );
    }
  };

  return {
    changed,

    /**
     * Registers a hook; the table must exist in the project's database (a hook on a table that is not there would
     * never fire) and the function in the project.
     */
    async create(
      caller: { projectId: string; tenantId: string; requestId: string },
      input: { table?: unknown; timing?: unknown; events?: unknown; function?: unknown },
    ): Promise<Hook> {
      const { projectId } = caller;
      const table = checkTable(input.table);
      const timing = checkTiming(input.timing);
      const events = checkEvents(input.events);
      if (input.function === undefined || input.function === null)
        throw errors.validation('function', 'is required (the name of a function of this project)');
      const name = checkFunctionName(input.function, 'function');
      const fn = await functions.findByName(projectId, name);
      if (!fn) throw errors.validation('function', `no function named "${name}" in this project`);
      if (!(await tableExists(router, caller, table)))
        throw new AppError('VALIDATION_FAILED', `table: no table named "${table}" in this project's database`, {
          field: 'table',
          table,
        });
      const id = crypto.randomUUID();
      await sql.tx(async (tx) => {
        const [count] = await tx.rows<{ n: number }>(
          'select count(*)::int as n from function_hooks where project_id = ?',
          [projectId],
        );
        if ((count?.n ?? 0) >= MAX_HOOKS_PER_PROJECT)
          throw errors.conflict(`A project may have at most ${MAX_HOOKS_PER_PROJECT} hooks`, {
            limit: MAX_HOOKS_PER_PROJECT,
          });
        await tx.run(
          'insert into function_hooks (id, project_id, table_name, timing, events, function_id, created_at) values (?, ?, ?, ?, ?::text[], ?, ?)',
          [id, projectId, table, timing, `{${events.join(',')}}`, fn.id, new Date()],
        );
        await announceHooksChanged(tx, projectId);
      });
      await changed(projectId);
      return toHook((await sql.rows(`${SELECT} where h.id = ?`, [id]))[0]!);
    },

    /** The project's hooks, by table, then in the order they run. */
    async list(projectId: string): Promise<Hook[]> {
      return (
        await sql.rows(`${SELECT} where h.project_id = ? order by h.table_name, h.timing desc, h.created_at, h.id`, [
          projectId,
        ])
      ).map(toHook);
    },

    async remove(projectId: string, id: unknown): Promise<void> {
      if (typeof id !== 'string' || id === '')
        throw errors.validation('id', 'is required (the hook id, as ?id= or in the body)');
      if (!isUuid(id)) throw errors.notFound('hook', String(id).slice(0, 100));
      await sql.tx(async (tx) => {
        const n = await tx.run('delete from function_hooks where id = ? and project_id = ?', [id, projectId]);
        if (n === 0) throw errors.notFound('hook', id);
        await announceHooksChanged(tx, projectId);
      });
      await changed(projectId);
    },

    /** The data API's question: which (table, timing) have hooks (or row-event subscriptions), and for which events. */
    async triggers(projectId: string): Promise<HookTrigger[]> {
      if (!isUuid(projectId)) return [];
      const [rows, rowEvents] = await Promise.all([
        sql.rows<{ table_name: string; timing: HookTiming; events: HookEvent[] }>(
          'select table_name, timing, array_agg(distinct e order by e) as events from function_hooks, unnest(events) e where project_id = ? group by table_name, timing',
          [projectId],
        ),
        deps.rowEvents?.triggers(projectId) ?? [],
      ]);
      return mergeTriggers([rows.map((r) => ({ table: r.table_name, timing: r.timing, events: r.events })), rowEvents]);
    },

    /**
     * Runs the before-hooks of a write, in creation order, each seeing the previous one's row; answers the
     * rows to write. A refusal or a failed run throws (the data API answers it to its caller). In a dry run
     * the hooks run as dry runs too (nothing sent, written or recorded).
     */
    async runBefore(a: {
      projectId: string;
      table: string;
      event: HookEvent;
      rows: unknown[];
      where: unknown;
      userId: string | null;
      depth: number;
      dryRun: boolean;
    }): Promise<unknown[]> {
      const hooks = await hooksFor(a.projectId, a.table, 'before', a.event);
      const rows = a.rows.map((r) => (r === undefined ? null : r));
      for (const hook of hooks) {
        const fn = await functions.load(hook.functionId);
        if (!fn) continue; // deleted a moment ago
        for (let i = 0; i < rows.length; i++) {
          const body = {
            event: a.event,
            table: a.table,
            timing: 'before',
            row: rows[i],
            where: a.where ?? null,
            user_id: a.userId,
          };
          const outcome = await engine.runSync({
            fn,
            input: inputOf(body),
            trigger: 'hook',
            triggerRef: hook.id,
            depth: a.depth,
            dryRun: a.dryRun,
            maxTimeoutMs: BEFORE_HOOK_TIMEOUT_MS,
            // Part of a data API write (bounded by its short timeout and the plan's requests per minute): no run slot
            // of its own, or a function writing to a hooked table at the limit would be refused by its own hook (a
            // function's write and an API write both fire hooks at depth 1: they cannot be told apart here).
            inRun: true,
          });
          if (outcome.status === 'failed') throw failed(hook, outcome, a.table, a.event);
          const status = responseStatusOf(outcome.output);
          if (status !== 200) {
            const o = outcome.output as { error: string; message?: unknown };
            const message =
              typeof o.message === 'string' && o.message !== '' ? o.message.slice(0, 1000) : o.error.slice(0, 1000);
            throw new AppError('HOOK_REJECTED', message, {
              error: o.error.slice(0, 200),
              status,
              hook: hook.id,
              function: hook.functionName,
              table: a.table,
              event: a.event,
              execution_id: outcome.executionId,
              ...(rows.length > 1 ? { row: i } : {}),
            });
          }
          // The row to write is the function's own (a secret it puts in a column is written, as it would be by a Database step).
          const out = outcome.rawOutput;
          if (a.event !== 'delete' && isPlainObject(out) && isPlainObject(out.row)) rows[i] = out.row;
        }
      }
      return rows;
    },

    /** Queues one run per after-hook and committed row, and the rows' event deliveries; answers how many were queued. */
    async enqueueAfter(a: {
      projectId: string;
      table: string;
      event: HookEvent;
      rows: unknown[];
      userId: string | null;
      depth: number;
    }): Promise<number> {
      const runs = async () => {
        const hooks = await hooksFor(a.projectId, a.table, 'after', a.event);
        const jobs: AfterHookJob[] = hooks.flatMap((h) =>
          a.rows.map((row) => ({
            hookId: h.id,
            projectId: a.projectId,
            table: a.table,
            event: a.event,
            row,
            userId: a.userId,
            depth: a.depth,
          })),
        );
        for (let i = 0; i < jobs.length; i += 20)
          await Promise.all(jobs.slice(i, i + 20).map(async (j) => await scheduler.enqueue(HOOK_JOB, j)));
        return jobs.length;
      };
      // The hooks' runs and the event deliveries are queued side by side (the writer waits for both).
      const [queued, deliveries] = await Promise.all([
        runs(),
        deps.rowEvents?.enqueue({
          projectId: a.projectId,
          table: a.table,
          event: a.event,
          rows: a.rows,
          userId: a.userId,
        }) ?? 0,
      ]);
      return queued + deliveries;
    },

    /** The job: one after-hook run. A failed run throws, so the scheduler runs it again later (with backoff). */
    async runAfter(job: AfterHookJob): Promise<void> {
      const rows = await sql.rows(`${SELECT} where h.id = ?`, [job.hookId]);
      if (!rows[0]) return; // the hook was deleted since: its queued runs are dropped
      const hook = toHook(rows[0]);
      const fn = await functions.load(hook.functionId);
      if (!fn) return;
      const body = {
        event: job.event,
        table: job.table,
        timing: 'after',
        row: job.row,
        where: null,
        user_id: job.userId,
      };
      // With every run slot of the project taken, the run waits in line as a queued execution (it then runs once).
      const outcome = await engine.runOrQueue({
        fn,
        input: inputOf(body),
        trigger: 'hook',
        triggerRef: hook.id,
        depth: job.depth,
      });
      if ('queued' in outcome || outcome.status !== 'failed') return;
      const code = outcome.error?.code ?? 'FUNCTION_FAILED';
      if (FINAL_FAILURES.has(code)) {
        logger.warn(
          { hook: hook.id, execution: outcome.executionId, error: outcome.error },
          'after-hook failed; not retried',
        );
        return;
      }
      throw new Error(
        `after-hook "${fn.name}" on ${job.table} (${job.event}) failed (execution ${outcome.executionId}): ${outcome.error?.message ?? code}`,
      );
    },
  };
}
