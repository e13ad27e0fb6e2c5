// Executions of functions and their step logs: recorded by the engine, read by the executions API.
import crypto from 'node:crypto';
import { errors } from '../../../platform/errors.ts';
import { jsonParam, type Sql } from './sql.ts';
import { checkPageSize, decodeCursor, encodeCursor, isUuid, optionalTime } from './validation.ts';

export const STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export const TRIGGERS = ['invoke', 'webhook', 'cron', 'function'] as const;
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
};

/** One line of a step log. */
export type ExecutionEvent = {
  seq: number;
  step: string;
  kind: string;
  type: 'started' | 'succeeded' | 'failed' | 'skipped';
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
    depth: Number(r.depth),
    status: r.status as ExecutionStatus,
    input: r.input ?? null,
    output: r.output ?? null,
    error: r.error ?? null,
    responseStatus: r.response_status === null || r.response_status === undefined ? null : Number(r.response_status),
    createdAt: new Date(r.created_at as string),
    startedAt: r.started_at ? new Date(r.started_at as string) : null,
    finishedAt: r.finished_at ? new Date(r.finished_at as string) : null,
    durationMs: r.duration_ms === null || r.duration_ms === undefined ? null : Number(r.duration_ms),
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
  depth: number;
  input: unknown;
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

export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 100;

/** Creates the execution store and queries. */
export function createExecutionService({ sql }: { sql: Sql }) {
  const insertEvents = async (tx: Sql, executionId: string, events: ExecutionEvent[]) => {
    if (events.length === 0) return;
    const values: string[] = [];
    const params: unknown[] = [];
    for (const e of events) {
      values.push('(?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?, ?)');
      params.push(executionId, e.seq, e.step, e.kind, e.type, e.attempt, jsonParam(e.input), jsonParam(e.output), jsonParam(e.error), e.durationMs ?? null, e.at);
    }
    await tx.run(
      `insert into function_execution_events (execution_id, seq, step, kind, type, attempt, input, output, error, duration_ms, at) values ${values.join(', ')}`,
      params,
    );
  };

  return {
    /** Records a queued execution (async invoke, Invoke steps with async, cron). */
    async enqueue(e: NewExecution): Promise<string> {
      const id = crypto.randomUUID();
      await sql.run(
        `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, trigger_ref, parent_id, depth, status, input, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?::jsonb, ?)`,
        [id, e.projectId, e.functionId, e.functionName, e.functionVersion, e.trigger, e.triggerRef ?? null, e.parentId ?? null, e.depth, jsonParam(e.input), new Date()],
      );
      return id;
    },

    /** Moves a queued execution to running; false when it is not queued (already taken, or gone). */
    async claim(id: string): Promise<Execution | null> {
      const rows = await sql.rows(`update function_executions set status = 'running', started_at = ? where id = ? and status = 'queued' returning *`, [new Date(), id]);
      return rows[0] ? toExecution(rows[0]) : null;
    },

    /** Records the end of a claimed execution with its step log. */
    async finish(id: string, f: FinishedExecution): Promise<void> {
      await sql.tx(async (tx) => {
        await tx.run(
          `update function_executions set status = ?, output = ?::jsonb, error = ?::jsonb, response_status = ?, started_at = ?, finished_at = ?, duration_ms = ?, function_version = ? where id = ?`,
          [f.status, jsonParam(f.output), jsonParam(f.error), f.responseStatus, f.startedAt, f.finishedAt, f.durationMs, f.functionVersion, id],
        );
        await insertEvents(tx, id, f.events);
      });
    },

    /** Records a synchronous execution once it is over (one transaction: the row and its step log). */
    async record(e: NewExecution & { id: string }, f: FinishedExecution): Promise<void> {
      await sql.tx(async (tx) => {
        await tx.run(
          `insert into function_executions (id, project_id, function_id, function_name, function_version, trigger, trigger_ref, parent_id, depth, status,
             input, output, error, response_status, created_at, started_at, finished_at, duration_ms)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?, ?, ?, ?, ?)`,
          [e.id, e.projectId, e.functionId, e.functionName, f.functionVersion, e.trigger, e.triggerRef ?? null, e.parentId ?? null, e.depth, f.status,
            jsonParam(e.input), jsonParam(f.output), jsonParam(f.error), f.responseStatus, f.startedAt, f.startedAt, f.finishedAt, f.durationMs],
        );
        await insertEvents(tx, e.id, f.events);
      });
    },

    /** Marks a queued execution failed without running it (its function is gone). */
    async fail(id: string, error: unknown): Promise<void> {
      const now = new Date();
      await sql.run(`update function_executions set status = 'failed', error = ?::jsonb, finished_at = ?, started_at = coalesce(started_at, ?), duration_ms = 0 where id = ?`, [jsonParam(error), now, now, id]);
    },

    /** One execution of the project; NOT_FOUND otherwise. */
    async get(projectId: string, id: string): Promise<Execution> {
      if (!isUuid(id)) throw errors.notFound('execution', String(id).slice(0, 100));
      const rows = await sql.rows('select * from function_executions where id = ? and project_id = ?', [id, projectId]);
      if (!rows[0]) throw errors.notFound('execution', id);
      return toExecution(rows[0]);
    },

    /** The raw row by id, whoever's (jobs). */
    async load(id: string): Promise<Execution | null> {
      const rows = await sql.rows('select * from function_executions where id = ?', [id]);
      return rows[0] ? toExecution(rows[0]) : null;
    },

    /** The ordered step log of an execution of the project. */
    async events(projectId: string, id: string): Promise<ExecutionEvent[]> {
      await this.get(projectId, id);
      const rows = await sql.rows('select * from function_execution_events where execution_id = ? order by seq', [id]);
      return rows.map((r) => ({
        seq: Number(r.seq),
        step: r.step as string,
        kind: r.kind as string,
        type: r.type as ExecutionEvent['type'],
        attempt: Number(r.attempt),
        input: r.input ?? null,
        output: r.output ?? null,
        error: r.error ?? null,
        durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
        at: new Date(r.at as string),
      }));
    },

    /** Newest first, filtered, one page at a time. */
    async list(projectId: string, f: { function?: unknown; status?: unknown; trigger?: unknown; since?: unknown; until?: unknown; first?: unknown; after?: unknown }) {
      const first = checkPageSize('first', f.first, PAGE_DEFAULT, PAGE_MAX);
      const after = decodeCursor('after', f.after);
      const where = ['project_id = ?'];
      const params: unknown[] = [projectId];
      if (f.function !== undefined && f.function !== null) {
        where.push('function_name = ?');
        params.push(String(f.function));
      }
      if (f.status !== undefined && f.status !== null) {
        if (!STATUSES.includes(f.status as ExecutionStatus)) throw errors.validation('status', `must be one of ${STATUSES.join(', ')}`);
        where.push('status = ?');
        params.push(f.status);
      }
      if (f.trigger !== undefined && f.trigger !== null) {
        if (!TRIGGERS.includes(f.trigger as Trigger)) throw errors.validation('trigger', `must be one of ${TRIGGERS.join(', ')}`);
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
      const rows = await sql.rows(`select * from function_executions where ${where.join(' and ')} order by created_at desc, id desc limit ${first + 1}`, params);
      const items = rows.slice(0, first).map(toExecution);
      const last = items[items.length - 1];
      return { items, nextCursor: rows.length > first && last ? encodeCursor(last.createdAt, last.id) : null };
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
