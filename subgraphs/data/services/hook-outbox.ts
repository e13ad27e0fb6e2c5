// The after-hook outbox: after-hooks run at least once for every committed write that fires them.
// A write with after-hooks adds one row to `tessera_hooks.outbox` in its project's own database, on its own
// connection and in its own transaction: the write and its row commit together, or neither does (a rolled-back
// transaction or a dry run leaves nothing). Just before that commit, the project is marked in the platform's
// `data_hook_outbox_projects` (touched). Once committed, the request hands the rows to the functions subgraph
// (hooks.ts `handOff`) and deletes the outbox row; if the hand-off fails (the functions subgraph unreachable) or
// never happens (the process died after the commit), the row stays and the sweeper hands it off later: every
// ~10 s (the recurring job jobs/sweep-hook-outbox.ts, on one data instance at a time) the sweep takes the marked projects last touched more than GRACE_SECONDS ago (`for update skip
// locked`: one instance per project) and, on a connection of that project, the rows that are due (older than
// GRACE_SECONDS, so a request still handing off its own is left alone): hands them off and deletes them in the same
// transaction. A row that fails again waits longer each time (10 s, 20 s, ... at most an hour) and is logged on every
// failure, as an error once it keeps failing; it is never dropped, except a row the functions subgraph refuses as
// malformed (only a row the project wrote itself can be one: the table is the project's), which is dropped with an
// error in the log. A row handed off whose deletion then fails is handed off again: at least once, so an after-hook
// may (rarely) run twice for one write. A marker goes once its project's outbox is empty and it was last touched more
// than MARKER_KEEP_SECONDS ago (a writer touches it before its commit, which follows at once).
import type pg from 'pg';
import { backoffMs } from '../../../platform/backoff.ts';
import { AppError, errors, isDatabaseUnavailable } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { AfterWrite, DataHooks, HookContext, HookEvent } from './hooks.ts';
import type { Db, RolePools } from './pools.ts';
import type { ProjectRole, Provisioning } from './provisioning.ts';

/** What an outbox row holds: the committed writes of one request or transaction, as `_enqueueAfterHooks` takes them. */
export type OutboxPayload = { userId: string | null; depth: number; writes: AfterWrite[] };

export type HookOutbox = ReturnType<typeof createHookOutbox>;

/** Rows (and markers) younger than this belong to the request that added them (it is handing them off). */
const GRACE_SECONDS = 15;
/** A marker whose outbox is empty is forgotten only when it was last touched longer ago than this. */
const MARKER_KEEP_SECONDS = 60;
const BATCH = 50;
/** Projects one sweep visits at most (then the next sweep goes on). */
const MAX_PROJECTS = 50;
/** Batches of one project one sweep takes at most. */
const MAX_BATCHES = 20;
/** From this many failed attempts on, a row's failures are logged as errors. */
const KEEPS_FAILING = 5;
/** Answers from the functions subgraph that say the write itself is malformed: retrying cannot help. */
const MALFORMED = new Set(['VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST']);
const EVENTS: readonly string[] = ['insert', 'update', 'delete'] satisfies HookEvent[];

/**
 * Seconds a row waits after its `attempts`-th failed sweep: 10, 20, 40, ... at most an hour. No jitter: the rows a
 * sweep failed together are retried together by one sweep of their project, which is what batching wants.
 */
export function retryDelaySeconds(attempts: number): number {
  return backoffMs(attempts, { baseMs: 10, maxMs: 3600, jitter: 'none' });
}

/** An outbox row's payload, or what is wrong with it (checked: the row is data the project could have written). */
export function readPayload(p: unknown): OutboxPayload | string {
  if (p === null || typeof p !== 'object' || Array.isArray(p)) return 'not an object';
  const o = p as Record<string, unknown>;
  if (o.userId !== null && o.userId !== undefined && typeof o.userId !== 'string')
    return 'userId must be a string or null';
  if (!Number.isInteger(o.depth) || (o.depth as number) < 1) return 'depth must be an integer of 1 or more';
  if (!Array.isArray(o.writes)) return 'writes must be a list';
  const writes: AfterWrite[] = [];
  for (const [i, w] of (o.writes as unknown[]).entries()) {
    const x = (w ?? {}) as Record<string, unknown>;
    if (typeof x.table !== 'string' || x.table === '') return `writes[${i}].table must be a table name`;
    if (typeof x.event !== 'string' || !EVENTS.includes(x.event))
      return `writes[${i}].event must be insert, update or delete`;
    if (!Array.isArray(x.rows)) return `writes[${i}].rows must be a list`;
    writes.push({ table: x.table, event: x.event as HookEvent, rows: x.rows as Record<string, unknown>[] });
  }
  return { userId: (o.userId as string | null | undefined) ?? null, depth: o.depth as number, writes };
}

type Row = { id: string; payload: unknown; attempts: number };

/** Whether a failed sweep of a project says its server is away (not the project: e.g. its connections busy). */
function serverDown(err: unknown): boolean {
  if (err instanceof AppError) return err.details?.reason === 'server_unavailable';
  return isDatabaseUnavailable(err);
}
/** `touched_at` as PostgreSQL's text (a Date would lose its microseconds, and the comparison that forgets a mark with them). */
type Marker = { project_id: string; touched_at: string; attempts: number };

/** Creates the outbox over the platform role's pool (`admin`, for the markers), the projects' pools and the hook client. */
export function createHookOutbox(opts: {
  admin: pg.Pool;
  pools: RolePools;
  provisioning: Provisioning;
  hooks: DataHooks;
  logger: Logger;
}) {
  const { admin, pools, provisioning, hooks, logger } = opts;
  /** Sweeps under way (the job's, or a caller's), waited for by `stop`. */
  const running = new Set<Promise<void>>();
  let stopped = false;

  /** Hands off one row inside the project transaction `c`: deleted when done, otherwise rescheduled; answers the error. */
  const sweepOne = async (c: Db, projectId: string, r: Row): Promise<AppError | undefined> => {
    const log = { outbox: r.id, project: projectId };
    const payload = readPayload(r.payload);
    if (typeof payload === 'string') {
      logger.error({ ...log, problem: payload }, 'data: an after-hook outbox row is malformed; dropped');
      await c.query('delete from tessera_hooks.outbox where id = $1', [r.id]);
      return undefined;
    }
    const left: AfterWrite[] = [];
    let error: AppError | undefined;
    for (const w of payload.writes) {
      if (error) {
        left.push(w); // the functions subgraph just failed: the rest waits with it
        continue;
      }
      const err = await hooks.enqueueAfter(
        projectId,
        w,
        payload.userId,
        payload.depth,
        `hook-outbox-${projectId}-${r.id}`,
      );
      if (!err) continue;
      if (MALFORMED.has(err.code)) {
        logger.error(
          { ...log, table: w.table, event: w.event, rows: w.rows.length, error: err.message },
          'data: the functions subgraph refused an outbox write as malformed; dropped',
        );
        continue;
      }
      error = err;
      left.push(w);
    }
    if (!error) {
      await c.query('delete from tessera_hooks.outbox where id = $1', [r.id]);
      logger.info({ ...log, attempts: r.attempts + 1 }, 'data: after-hooks handed off by the outbox sweeper');
      return undefined;
    }
    const attempts = r.attempts + 1;
    const delay = retryDelaySeconds(attempts);
    await c.query(
      `update tessera_hooks.outbox set attempts = $2, next_attempt_at = now() + make_interval(secs => $3), last_error = $4,
         payload = jsonb_set(payload, '{writes}', $5::jsonb) where id = $1`,
      [r.id, attempts, delay, error.message.slice(0, 2000), JSON.stringify(left)],
    );
    const fields = { ...log, attempts, retry_in_s: delay, writes: left.length, error: error.message };
    if (attempts >= KEEPS_FAILING)
      logger.error(fields, 'data: after-hooks keep failing to be handed off; still retrying');
    else logger.warn(fields, 'data: after-hooks could not be handed off; retrying later');
    return error;
  };

  /** One batch of a project's due rows in one transaction of its own connection; answers how many were taken and the first failure. */
  const sweepBatch = async (role: ProjectRole): Promise<{ taken: number; error?: AppError }> => {
    const c = await pools.get(role).connect();
    let broken = false;
    try {
      await c.query('begin');
      const { rows } = await c.query<Row>(
        `select id::text as id, payload, attempts from tessera_hooks.outbox
          where next_attempt_at <= now() and created_at <= now() - make_interval(secs => $1)
          order by next_attempt_at, id limit $2 for update skip locked`,
        [GRACE_SECONDS, BATCH],
      );
      let error: AppError | undefined;
      for (const r of rows) error = (await sweepOne(c, role.projectId, r)) ?? error;
      await c.query('commit');
      return { taken: rows.length, error };
    } catch (err) {
      await c.query('rollback').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      c.release(broken);
    }
  };

  /**
   * Sweeps one marked project inside the marker's platform transaction `m`. `down`: the project servers this sweep
   * could not reach; their other projects are not tried again in it (each try of a server that never answers costs
   * the connection timeout, and the projects of the other servers wait behind it), only rescheduled.
   */
  const sweepProject = async (m: pg.PoolClient, marker: Marker, down: Set<string>): Promise<void> => {
    const role = await provisioning.load(marker.project_id);
    if (!role) {
      await m.query('delete from data_hook_outbox_projects where project_id = $1', [marker.project_id]); // deleted since
      return;
    }
    let error: AppError | undefined;
    if (down.has(role.serverId)) error = errors.unavailable(`The project server ${role.serverId} is unreachable`);
    else
      try {
        for (let i = 0; i < MAX_BATCHES && !stopped; i++) {
          const batch = await sweepBatch(role);
          error ??= batch.error;
          if (batch.taken < BATCH) break;
        }
      } catch (err) {
        if (serverDown(err)) down.add(role.serverId);
        error = errors.unavailable((err as Error).message);
      }
    const { rows } = down.has(role.serverId)
      ? { rows: [{ n: 1 }] }
      : await pools
          .get(role)
          .query<{ n: number }>('select count(*)::int as n from tessera_hooks.outbox')
          .catch(() => ({ rows: [{ n: 1 }] }));
    if (rows[0]!.n === 0) {
      await m.query(
        `delete from data_hook_outbox_projects where project_id = $1 and touched_at = $2::timestamptz and touched_at <= now() - make_interval(secs => $3)`,
        [marker.project_id, marker.touched_at, MARKER_KEEP_SECONDS],
      );
      return;
    }
    const attempts = error ? marker.attempts + 1 : 0;
    await m.query(
      `update data_hook_outbox_projects set attempts = $2, next_attempt_at = now() + make_interval(secs => $3), last_error = $4 where project_id = $1`,
      [
        marker.project_id,
        attempts,
        error ? retryDelaySeconds(attempts) : GRACE_SECONDS,
        error?.message.slice(0, 2000) ?? null,
      ],
    );
  };

  const sweepMarked = async (): Promise<void> => {
    const m = await admin.connect();
    let broken = false;
    try {
      await m.query('begin');
      const { rows } = await m.query<Marker>(
        `select project_id::text as project_id, touched_at::text as touched_at, attempts from data_hook_outbox_projects
          where next_attempt_at <= now() and touched_at <= now() - make_interval(secs => $1)
          order by next_attempt_at limit $2 for update skip locked`,
        [GRACE_SECONDS, MAX_PROJECTS],
      );
      const down = new Set<string>();
      for (const marker of rows) {
        if (stopped) break;
        await sweepProject(m, marker, down);
      }
      await m.query('commit');
    } catch (err) {
      await m.query('rollback').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      m.release(broken);
    }
  };

  /** One sweep (nothing once stopped); a failure throws (the job logs it and the next run comes anyway). */
  const sweep = async (): Promise<void> => {
    if (stopped) return;
    const run = sweepMarked();
    const settled = run.catch(() => {});
    running.add(settled);
    try {
      await run;
    } finally {
      running.delete(settled);
    }
  };

  return {
    /** Stops sweeping: a sweep under way ends after the project it is on, and is waited for. */
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all(running);
    },

    /** Runs one sweep now (the recurring job, tests, and anyone who knows the functions subgraph is back). */
    sweep,

    /**
     * Adds the writes' committed-to-be rows to the outbox on `db`, the connection of the write's own transaction,
     * and marks the project for the sweeper. Answers the row's id (none when no write has rows). A failure here fails
     * the write: its after-hooks could not be guaranteed.
     */
    async add(db: Db, h: HookContext, writes: AfterWrite[]): Promise<string | undefined> {
      const kept = writes.filter((w) => w.rows.length > 0);
      if (kept.length === 0) return undefined;
      const payload: OutboxPayload = { userId: h.userId, depth: h.depth + 1, writes: kept };
      try {
        const { rows } = await db.query<{ id: string }>(
          'insert into tessera_hooks.outbox (payload) values ($1::jsonb) returning id::text as id',
          [JSON.stringify(payload)],
        );
        await admin.query(
          `insert into data_hook_outbox_projects (project_id) values ($1)
           on conflict (project_id) do update set touched_at = now()`,
          [h.projectId],
        );
        return rows[0]!.id;
      } catch (err) {
        logger.error(
          { project: h.projectId, err: (err as Error).message },
          'data: could not add to the after-hook outbox; the write is rolled back',
        );
        throw errors.unavailable('The write could not record its after-hooks and was rolled back; retry in a moment');
      }
    },

    /**
     * After the commit: hands the writes to the after-hooks and deletes their outbox row (`id`) on the project's
     * pool. What could not be handed off stays in the outbox for the sweeper (the request does not fail: its write
     * has committed).
     */
    async deliver(role: ProjectRole, h: HookContext, writes: AfterWrite[], id: string | undefined): Promise<void> {
      const { left, error } = await hooks.handOff(h, writes);
      const log = { project: h.projectId, outbox: id };
      if (!id) return;
      const db = pools.get(role);
      if (left.length === 0) {
        await db.query('delete from tessera_hooks.outbox where id = $1', [id]).catch((err: Error) => {
          logger.warn(
            { ...log, err: err.message },
            'data: could not delete a handed-off outbox row; the sweeper hands it off again',
          );
        });
        return;
      }
      if (left.length < writes.filter((w) => w.rows.length > 0).length) {
        await db
          .query(`update tessera_hooks.outbox set payload = jsonb_set(payload, '{writes}', $2::jsonb) where id = $1`, [
            id,
            JSON.stringify(left),
          ])
          .catch(() => {});
      }
      logger.warn(
        { ...log, writes: left.length, error: error?.message },
        'data: after-hooks could not be handed off yet; the outbox sweeper retries them',
      );
    },
  };
}
