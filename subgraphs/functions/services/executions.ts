// Executions of functions and their step logs: recorded by the engine, read by the executions API.
import { errors } from '../../../platform/errors.ts';
import { createBatcher } from './batching.ts';
import { TIMEOUT_MAX_MS } from './definitions.ts';
import { toFunction, type EdgeFunction } from './functions.ts';
import { sealedSecretsOf } from './secrets.ts';
import { jsonParam, type HotSql, type Sql } from './sql.ts';
import { checkPageSize, optionalTime } from './validation.ts';
import { decodeTimeCursor, timePage } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';

export const STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export const TRIGGERS = ['invoke', 'webhook', 'cron', 'function', 'hook', 'replay'] as const;
export type ExecutionStatus = (typeof STATUSES)[number];
export type Trigger = (typeof TRIGGERS)[number];

export type Execution = {
  id: string;
  projectId: string;
  functionId: string | null;
  functionName: string;
  functionVersion: number;
  trigger: Trigger;
  triggerRef: string | null;
  parentId: string | null;
  /** The run whose tree this execution belongs to (null: it is a root). */
  rootId: string | null;
  depth: number;
  status: ExecutionStatus;
  input: unknown;
  output: unknown;
  error: unknown;
  responseStatus: number | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  /** The execution this one replays (trigger `replay`), and the step it started from. */
  replayOf: string | null;
  replayFromStep: string | null;
};

/** One line of a step log. `reused`: a replay took the step's recorded result instead of running it. */
export type ExecutionEvent = {
  seq: number;
  step: string;
  kind: string;
  type: 'started' | 'succeeded' | 'failed' | 'skipped' | 'reused';
  attempt: number;
  input?: unknown;
  output?: unknown;
  error?: unknown;
  durationMs?: number | null;
  at: Date;
};

type Row = Record<string, unknown>;

function toExecution(r: Row): Execution {
  return {
    id: r.id as string,
    projectId: r.project_id as string,
    functionId: (r.function_id as string | null) ?? null,
    functionName: r.function_name as string,
    functionVersion: Number(r.function_version),
    trigger: r.trigger as Trigger,
    triggerRef: (r.trigger_ref as string | null) ?? null,
    parentId: (r.parent_id as string | null) ?? null,
    rootId: (r.root_id as string | null | undefined) ?? null,
    depth: Number(r.depth),
    // `held` is `queued` for callers: the instant between saving a run and saving its job.
    status: (r.status === 'held' ? 'queued' : r.status) as ExecutionStatus,
    input: r.input ?? null,
    output: r.output ?? null,
    error: r.error ?? null,
    responseStatus: r.response_status === null || r.response_status === undefined ? null : Number(r.response_status),
    createdAt: new Date(r.created_at as string),
    startedAt: r.started_at ? new Date(r.started_at as string) : null,
    finishedAt: r.finished_at ? new Date(r.finished_at as string) : null,
    durationMs: r.duration_ms === null || r.duration_ms === undefined ? null : Number(r.duration_ms),
    replayOf: (r.replay_of as string | null | undefined) ?? null,
    replayFromStep: (r.replay_from as string | null | undefined) ?? null,
  };
}

export type NewExecution = {
  projectId: string;
  functionId: string;
  functionName: string;
  functionVersion: number;
  trigger: Trigger;
  triggerRef?: string | null;
  parentId?: string | null;
  rootId?: string | null;
  depth: number;
  input: unknown;
  replayOf?: string | null;
  replayFromStep?: string | null;
};

export type FinishedExecution = {
  status: 'succeeded' | 'failed';
  output: unknown;
  error: unknown;
  responseStatus: number | null;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  functionVersion: number;
  events: ExecutionEvent[];
};

export type ExecutionService = ReturnType<typeof createExecutionService>;

/** A claimed execution with its function (null when it was deleted) and its project's sealed secrets. */
export type Claimed = { execution: Execution; fn: EdgeFunction | null; sealedSecrets: Record<string, string> };

export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 100;

/** A batch of execution writes stays under this much JSON (a lone larger write goes alone). */
const BATCH_MAX_BYTES = 4 * 1024 * 1024;

/**
 * An execution's columns as reads answer them: all but its step log (`step_log`, one JSON array of the lines as
 * `ExecutionEvent`s, read only by `events`), which may be large.
 */
const COLUMNS = `id, project_id, function_id, function_name, function_version, trigger, trigger_ref, parent_id, root_id, depth, status,
  input, output, error, response_status, created_at, started_at, finished_at, duration_ms, replay_of, replay_from`;
/** The same, of `function_executions e`. */
const E_COLUMNS = COLUMNS.replace(/(\w+)/g, 'e.$1');

/** A finished execution's row (record: inserted; finish: updated) in the JSON shape the batched statements read. */
type WriteRow = {
  id: string;
  project_id?: string;
  function_id?: string;
  function_name?: string;
  function_version: number;
  trigger?: string;
  trigger_ref?: string | null;
  parent_id?: string | null;
  root_id?: string | null;
  depth?: number;
  status: string;
  input?: unknown;
  output: unknown;
  error: unknown;
  response_status: number | null;
  started_at: Date;
  finished_at: Date;
  duration_ms: number;
  replay_of?: string | null;
  replay_from?: string | null;
  step_log: ExecutionEvent[];
};

// One statement writes the rows of a batch with their step logs; both run as prepared statements on the hot pool
// (`$1`: the rows, one JSON array).
const RECORD = `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, trigger_ref, parent_id, root_id, depth, status,
    input, output, error, response_status, created_at, started_at, finished_at, duration_ms, replay_of, replay_from, step_log)
  select r.id, r.project_id, r.function_id, r.function_name, r.function_version, r.trigger, r.trigger_ref, r.parent_id, r.root_id, r.depth, r.status,
    r.input, r.output, r.error, r.response_status, r.started_at, r.started_at, r.finished_at, r.duration_ms, r.replay_of, r.replay_from, r.step_log
  from jsonb_to_recordset($1::jsonb) as r(id uuid, project_id uuid, function_id uuid, function_name text, function_version integer, trigger text, trigger_ref text,
    parent_id uuid, root_id uuid, depth integer, status text, input jsonb, output jsonb, error jsonb, response_status integer, started_at timestamptz, finished_at timestamptz, duration_ms double precision,
    replay_of uuid, replay_from text, step_log jsonb)`;
const FINISH = `update function_executions e set status = r.status, output = r.output, error = r.error, response_status = r.response_status, started_at = r.started_at,
    finished_at = r.finished_at, duration_ms = r.duration_ms, function_version = r.function_version, step_log = r.step_log
  from jsonb_to_recordset($1::jsonb) as r(id uuid, status text, output jsonb, error jsonb, response_status integer, started_at timestamptz, finished_at timestamptz,
    duration_ms double precision, function_version integer, step_log jsonb)
  where e.id = r.id`;

/** Creates the execution store and queries. */
export function createExecutionService({ sql, hot }: { sql: Sql; hot: HotSql }) {
  // Each write (its row and step log) is turned into JSON once, when it is handed in; a batch joins them (and
  // stays under a few MB).
  const batched = (name: string, statement: string) =>
    createBatcher<string>(async (rows) => await hot.run(name, statement, [`[${rows.join(',')}]`]), {
      max: 200,
      inFlight: 2,
      retryAlone: true,
      weigh: (row) => row.length,
      maxWeight: BATCH_MAX_BYTES,
    });
  const recordWrite = batched('functions.record', RECORD);
  const finishWrite = batched('functions.finish', FINISH);

  /** A new execution's columns (the version it runs with comes from its start or, recorded once over, its end). */
  const newColumns = (e: NewExecution & { id: string }) => ({
    id: e.id,
    project_id: e.projectId,
    function_id: e.functionId,
    function_name: e.functionName,
    trigger: e.trigger,
    trigger_ref: e.triggerRef ?? null,
    parent_id: e.parentId ?? null,
    root_id: e.rootId ?? null,
    depth: e.depth,
    input: e.input,
  });
  /** A finished execution's columns. */
  const finishedColumns = (f: FinishedExecution) => ({
    status: f.status,
    output: f.output,
    error: f.error,
    response_status: f.responseStatus,
    started_at: f.startedAt,
    finished_at: f.finishedAt,
    duration_ms: f.durationMs,
    function_version: f.functionVersion,
    step_log: f.events,
  });

  return {
    /** A queued execution as `enqueueMany` takes it (JSON, made once by the caller, who may weigh it). */
    queuedRow(e: NewExecution & { id: string }): string {
      return JSON.stringify({ ...newColumns(e), function_version: e.functionVersion, created_at: new Date() });
    },

    /**
     * Records queued executions (async invoke, Invoke steps with async), all in one statement, `held`: no job
     * claims them until `release` (their job is saved by then), so a run whose queuing failed never runs.
     */
    async enqueueMany(rows: string[]): Promise<void> {
      await sql.run(
        `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, trigger_ref, parent_id, root_id, depth, status, input, created_at)
         select r.id, r.project_id, r.function_id, r.function_name, r.function_version, r.trigger, r.trigger_ref, r.parent_id, r.root_id, r.depth, 'held', r.input, r.created_at
         from jsonb_to_recordset(?::jsonb) as r(id uuid, project_id uuid, function_id uuid, function_name text, function_version integer, trigger text, trigger_ref text,
           parent_id uuid, root_id uuid, depth integer, input jsonb, created_at timestamptz)`,
        [`[${rows.join(',')}]`],
      );
    },

    /**
     * Moves the given executions that are still queued to running (others were taken, or are gone) and answers
     * them with what running them needs: their function as it is now (null when deleted) and their project's
     * sealed secrets. One statement.
     */
    async claimMany(ids: string[]): Promise<Claimed[]> {
      if (ids.length === 0) return [];
      const rows = await sql.rows(
        `update function_executions e set status = 'running', started_at = ? where e.id in (select (jsonb_array_elements_text(?::jsonb))::uuid) and e.status = 'queued'
         returning ${E_COLUMNS}, (select to_jsonb(f) from edge_functions f where f.id = e.function_id) as function_row, ${sealedSecretsOf('e.project_id')} as sealed_secrets`,
        [new Date(), JSON.stringify(ids)],
      );
      return rows.map((r) => ({
        execution: toExecution(r),
        fn: r.function_row ? toFunction(r.function_row as Record<string, unknown>) : null,
        sealedSecrets: (r.sealed_secrets ?? {}) as Record<string, string>,
      }));
    },

    /** Puts claimed executions that did not start (no free run slot of their project) back in line. */
    async unclaim(ids: string[]): Promise<void> {
      await sql.run(
        `update function_executions set status = 'queued', started_at = null where id in (select (jsonb_array_elements_text(?::jsonb))::uuid) and status = 'running'`,
        [JSON.stringify(ids)],
      );
    },

    /** Records the end of a claimed execution with its step log (one statement, batched with concurrent ones). */
    async finish(id: string, f: FinishedExecution): Promise<void> {
      await finishWrite(JSON.stringify({ id, ...finishedColumns(f) } satisfies WriteRow));
    },

    /** Records a synchronous execution once it is over: the row and its step log in one statement, batched with concurrent ones. */
    async record(e: NewExecution & { id: string }, f: FinishedExecution): Promise<void> {
      await recordWrite(
        JSON.stringify({
          ...newColumns(e),
          ...finishedColumns(f),
          ...(e.replayOf ? { replay_of: e.replayOf, replay_from: e.replayFromStep ?? null } : {}),
        } satisfies WriteRow),
      );
    },

    /** Marks queued or claimed executions failed without running them (their function is gone, or they could not be queued). */
    async fail(ids: string[], error: unknown): Promise<void> {
      const now = new Date();
      await sql.run(
        `update function_executions set status = 'failed', error = ?::jsonb, finished_at = ?, started_at = coalesce(started_at, ?), duration_ms = 0
         where id in (select (jsonb_array_elements_text(?::jsonb))::uuid) and status in ('held', 'queued', 'running')`,
        [jsonParam(error), now, now, JSON.stringify(ids)],
      );
    },

    /** Lets jobs claim held executions: their job is saved. */
    async release(ids: string[]): Promise<void> {
      await sql.run(
        `update function_executions set status = 'queued' where id in (select (jsonb_array_elements_text(?::jsonb))::uuid) and status = 'held'`,
        [JSON.stringify(ids)],
      );
    },

    /**
     * How many of these executions no job has claimed: held (their enqueue has not released them yet, or never will)
     * or queued (released after a claim had looked at them).
     */
    async countUnclaimed(ids: string[]): Promise<number> {
      const rows = await sql.rows(
        `select count(*)::int as n from function_executions where id in (select (jsonb_array_elements_text(?::jsonb))::uuid) and status in ('held', 'queued')`,
        [JSON.stringify(ids)],
      );
      return Number(rows[0]?.n ?? 0);
    },

    /**
     * Executions whose queuing failed (the caller was answered 503) and that could not be marked failed then
     * (the database was away): still held after `graceMs`, they are marked failed now. They never ran.
     */
    async sweepHeld(graceMs: number): Promise<number> {
      return await sql.run(
        `update function_executions set status = 'failed', finished_at = now(), started_at = coalesce(started_at, now()), duration_ms = 0,
           error = jsonb_build_object('code', 'SERVICE_UNAVAILABLE', 'message', 'the run could not be queued (the caller was answered 503); it was not run')
         where status = 'held' and created_at < now() - make_interval(secs => ? / 1000.0)`,
        [graceMs],
      );
    },

    /** Executions released to their job (`queued`) more than `olderThanMs` ago and never claimed: at most `limit`. */
    async staleQueued(olderThanMs: number, limit: number): Promise<string[]> {
      const rows = await sql.rows(
        `select id::text as id from function_executions where status = 'queued' and created_at < now() - make_interval(secs => ? / 1000.0) order by created_at limit ?`,
        [olderThanMs, limit],
      );
      return rows.map((r) => String(r.id));
    },

    /**
     * Marks as failed the executions a worker claimed and never finished (the process crashed or was killed
     * mid-run): `running` for longer than their function's timeout plus `graceMs`. They are not run again — a
     * run cut short may have had side effects — but they no longer look alive. Answers how many were marked.
     */
    async sweepLost(graceMs: number): Promise<number> {
      return await sql.run(
        `update function_executions e set status = 'failed', finished_at = now(),
           duration_ms = extract(epoch from (now() - e.started_at)) * 1000,
           error = jsonb_build_object('code', 'WORKER_LOST', 'message', 'the process running this execution stopped before it finished (crash or restart); it was not run again')
         where e.status = 'running'
           and e.started_at < now() - make_interval(secs => (coalesce((select f.timeout_ms from edge_functions f where f.id = e.function_id), ?) + ?) / 1000.0)`,
        [TIMEOUT_MAX_MS, graceMs],
      );
    },

    /** One execution of the project; NOT_FOUND otherwise. */
    async get(projectId: string, id: string): Promise<Execution> {
      if (!isUuid(id)) throw errors.notFound('execution', String(id).slice(0, 100));
      const rows = await sql.rows(`select ${COLUMNS} from function_executions where id = ? and project_id = ?`, [
        id,
        projectId,
      ]);
      if (!rows[0]) throw errors.notFound('execution', id);
      return toExecution(rows[0]);
    },

    /** The raw row by id, whoever's (jobs). */
    async load(id: string): Promise<Execution | null> {
      const rows = await sql.rows(`select ${COLUMNS} from function_executions where id = ?`, [id]);
      return rows[0] ? toExecution(rows[0]) : null;
    },

    /** The ordered step log of an execution of the project (empty until it has run); NOT_FOUND otherwise. */
    async events(projectId: string, id: string): Promise<ExecutionEvent[]> {
      if (!isUuid(id)) throw errors.notFound('execution', String(id).slice(0, 100));
      const rows = await sql.rows('select step_log from function_executions where id = ? and project_id = ?', [
        id,
        projectId,
      ]);
      if (!rows[0]) throw errors.notFound('execution', id);
      const lines = (rows[0].step_log ?? []) as Array<Record<string, unknown>>;
      return lines.map((e) => ({
        seq: Number(e.seq),
        step: e.step as string,
        kind: e.kind as string,
        type: e.type as ExecutionEvent['type'],
        attempt: Number(e.attempt),
        input: e.input ?? null,
        output: e.output ?? null,
        error: e.error ?? null,
        durationMs: e.durationMs === null || e.durationMs === undefined ? null : Number(e.durationMs),
        at: new Date(e.at as string),
      }));
    },

    /** Newest first, filtered, one page at a time. */
    async list(
      projectId: string,
      f: {
        function?: unknown;
        status?: unknown;
        trigger?: unknown;
        since?: unknown;
        until?: unknown;
        first?: unknown;
        after?: unknown;
      },
    ) {
      const first = checkPageSize('first', f.first, PAGE_DEFAULT, PAGE_MAX);
      const after = decodeTimeCursor('after', f.after);
      const where = ['project_id = ?'];
      const params: unknown[] = [projectId];
      if (f.function !== undefined && f.function !== null) {
        where.push('function_name = ?');
        params.push(String(f.function));
      }
      if (f.status !== undefined && f.status !== null) {
        if (!STATUSES.includes(f.status as ExecutionStatus))
          throw errors.validation('status', `must be one of ${STATUSES.join(', ')}`);
        where.push(f.status === 'queued' ? "status in (?, 'held')" : 'status = ?');
        params.push(f.status);
      }
      if (f.trigger !== undefined && f.trigger !== null) {
        if (!TRIGGERS.includes(f.trigger as Trigger))
          throw errors.validation('trigger', `must be one of ${TRIGGERS.join(', ')}`);
        where.push('trigger = ?');
        params.push(f.trigger);
      }
      const since = optionalTime('since', f.since);
      const until = optionalTime('until', f.until);
      if (since) {
        where.push('created_at >= ?');
        params.push(since);
      }
      if (until) {
        where.push('created_at < ?');
        params.push(until);
      }
      if (after) {
        where.push('(created_at < ? or (created_at = ? and id < ?))');
        params.push(after.createdAt, after.createdAt, after.id);
      }
      const rows = await sql.rows(
        `select ${COLUMNS} from function_executions where ${where.join(' and ')} order by created_at desc, id desc limit ${first + 1}`,
        params,
      );
      return timePage(rows, first, toExecution);
    },

    /** Counts by status and p50/p95 duration per function over a window (default: the last 24 hours). */
    async stats(projectId: string, f: { since?: unknown; until?: unknown }) {
      const until = optionalTime('until', f.until) ?? new Date();
      const since = optionalTime('since', f.since) ?? new Date(until.getTime() - 24 * 3600_000);
      if (since >= until) throw errors.validation('since', 'must be before until');
      const rows = await sql.rows(
        `select function_name, count(*)::int as total,
           count(*) filter (where status = 'queued')::int as queued,
           count(*) filter (where status = 'running')::int as running,
           count(*) filter (where status = 'succeeded')::int as succeeded,
           count(*) filter (where status = 'failed')::int as failed,
           percentile_cont(0.5) within group (order by duration_ms) as p50,
           percentile_cont(0.95) within group (order by duration_ms) as p95
         from function_executions where project_id = ? and created_at >= ? and created_at < ?
         group by function_name order by function_name`,
        [projectId, since, until],
      );
      const round = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v) * 100) / 100);
      return {
        since,
        until,
        functions: rows.map((r) => ({
          function: r.function_name as string,
          total: Number(r.total),
          queued: Number(r.queued),
          running: Number(r.running),
          succeeded: Number(r.succeeded),
          failed: Number(r.failed),
          p50Ms: round(r.p50),
          p95Ms: round(r.p95),
        })),
      };
    },
  };
}
