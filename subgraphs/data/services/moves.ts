// Online moves of a project's database to another project server, and drains (issue 29 item 3). The operator asks
// (`moveProject`, or `drainProjectServer` for every project of a server); a durable job (`data.project.move`, Agenda:
// one run across every process, run again elsewhere if its process dies) does the work:
//
//   prepare   leftovers of an earlier attempt removed; the project's roles and an empty database made on the target
//             (provisioning.prepareCopy)
//   copy      move-copy.ts: schema, then rows (logical replication or pg_dump/pg_restore) while the project keeps being
//             read and written on its source
//   hold      every data process holds the project's writes (`data.project.hold`, refreshed while it lasts, move-hold.ts)
//             and the source is fenced: a write-blocking table lock (EXCLUSIVE: reads go on) on every table of the
//             project, which waits for the writes already under way to commit
//   catch-up, verify   (move-copy.ts) the target has every committed row, checked table by table
//   switch    one row of the platform database (`data_project_roles.server_id`) committed; from then on the target IS
//             the project. The source database stops taking connections and the project's sessions there end (a write
//             still waiting behind the fence fails with 503, it never reached any server); `data.project.moved` and
//             `data.project.released` tell every data process, whose held writes then run on the target
//   drop      after a grace period for processes that hear late, the source database and roles are dropped
//
// A move that fails before the switch (a tool or server failed, the copy did not verify, the target went away, the
// process was killed) leaves the project on its source: the hold is released (or expires), the fence goes with its
// connection, the copy and the replication objects are removed, and the move is marked failed. A move whose process
// died after the switch is finished by the job's next run.
import crypto from 'node:crypto';
import pg from 'pg';
import { announceLocally, publishBroadcastNow, type BroadcastListener } from '../../../platform/broadcast.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import { writeOperatorAudit, type OperatorActor } from '../../../platform/operator-audit.ts';
import { inPgTransaction } from '../../../platform/pg-pool.ts';
import type { Fleet, FleetServer } from './fleet.ts';
import { HOLD_TTL_MS, type MoveHolds } from './move-hold.ts';
import { cleanupLeftovers, copyProjectDatabase, type MoveProgress } from './move-copy.ts';
import { ident } from './names.ts';
import type { ProjectRole, Provisioning } from './provisioning.ts';

export const MOVE_JOB = 'data.project.move';
export const DRAIN_JOB = 'data.server.drain';
/**
 * The scheduler lock of a move or a drain: renewed every third of it while the job runs (heartbeat), so it bounds only
 * how long after its process died a move is taken over (finished, or undone). 15 s leaves a live mover four renewals
 * missed in a row before another instance would take over (an event loop stalled that long is not running the move
 * either), and a project held by a dead mover waits 15 s instead of the 30 s of the first version.
 */
export const MOVE_LOCK_LIFETIME_MS = 15_000;

/** Projects a drain moves at once. */
export const DRAIN_PARALLEL = 2;
/** After the switch, how long the source stays (fenced) before it is dropped: processes that hear of the move late. */
export const DROP_GRACE_MS = 5_000;
/** How often the mover renews its hold while it lasts (a third of its TTL). */
const HOLD_RENEW_MS = Math.floor(HOLD_TTL_MS / 3);
/** Longest the fence waits for the writes under way on the source (then the move fails, nothing changed). */
const FENCE_LOCK_TIMEOUT = '10s';

/** The mover's hold: the fence's connection (its transaction holds the locks) and the renewal timer. */
type Fence = { client?: pg.Client; renew?: NodeJS.Timeout };

export type MoveState = 'queued' | 'running' | 'done' | 'failed';

/** A move as the operator sees it. */
export type MoveView = {
  id: string;
  projectId: string;
  fromServer: string;
  toServer: string;
  state: MoveState;
  phase: string | null;
  mode: string | null;
  reason: string | null;
  errorCode: string | null;
  error: string | null;
  tables: { table: string; rows: number }[] | null;
  drainOf: string | null;
  attempts: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
};

type Row = {
  id: string;
  project_id: string;
  from_server: string;
  to_server: string;
  state: MoveState;
  phase: string | null;
  mode: string | null;
  reason: string | null;
  error_code: string | null;
  error: string | null;
  tables: { table: string; rows: number }[] | null;
  drain_of: string | null;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
};

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const viewOf = (r: Row): MoveView => ({
  id: r.id,
  projectId: r.project_id,
  fromServer: r.from_server,
  toServer: r.to_server,
  state: r.state,
  phase: r.phase,
  mode: r.mode,
  reason: r.reason,
  errorCode: r.error_code,
  error: r.error,
  tables: r.tables,
  drainOf: r.drain_of,
  attempts: r.attempts,
  createdAt: r.created_at.toISOString(),
  startedAt: iso(r.started_at),
  finishedAt: iso(r.finished_at),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The URL of database `name` on `server` (as the platform role). */
function databaseUrl(server: FleetServer, name: string): string {
  const u = new URL(server.url);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

export type Moves = ReturnType<typeof createMoves>;

/** The moves service over the platform database (`admin`), the fleet and provisioning. */
export function createMoves(opts: {
  admin: pg.Pool;
  provisioning: Provisioning;
  fleet: Fleet;
  holds: MoveHolds;
  /** Publishes `data.project.moved` (every data process follows the project). */
  announceMoved: (projectId: string, serverId: string) => Promise<void>;
  /** Queues a job on the data subgraph's scheduler. */
  enqueue: (name: string, data: object) => Promise<void>;
  /** TESSERA_PG_BIN. */
  pgBin?: string;
  dropGraceMs?: number;
  logger: Logger;
}) {
  const { admin, provisioning, fleet, holds, logger } = opts;

  const read = async (id: string): Promise<Row | undefined> => {
    if (!UUID.test(id)) return undefined;
    return (await admin.query<Row>('select * from data_moves where id = $1', [id])).rows[0];
  };
  const set = async (id: string, fields: Record<string, unknown>): Promise<void> => {
    const keys = Object.keys(fields);
    await admin.query(
      `update data_moves set ${keys.map((k, i) => `${k} = $${i + 2}`).join(', ')}, updated_at = now() where id = $1`,
      [id, ...keys.map((k) => (k === 'tables' ? JSON.stringify(fields[k]) : fields[k]))],
    );
  };

  const publishHold = async (projectId: string, moveId: string): Promise<void> => {
    const m = { projectId, moveId, ttlMs: HOLD_TTL_MS };
    await publishBroadcastNow(admin, 'data.project.hold', m);
    announceLocally('data.project.hold', m);
  };
  const publishRelease = async (projectId: string, moveId: string, movedTo?: string): Promise<void> => {
    const m = { projectId, moveId, movedTo };
    await publishBroadcastNow(admin, 'data.project.released', m);
    announceLocally('data.project.released', m);
  };

  /** A move of `projectId` to `toServer`, queued (checked first: the target takes moves, the project exists and lives elsewhere). */
  /** Records a move (and, when an operator asked for it, its audit row in the same transaction). */
  const request = async (
    projectId: string,
    toServer: string,
    drainOf?: string,
    by?: OperatorActor,
  ): Promise<MoveView> => {
    if (!UUID.test(projectId)) throw errors.notFound('project', projectId);
    const target = await fleet.get(toServer).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND')
        throw errors.validation('server', `no server ${toServer}`);
      throw err;
    });
    if (target.state !== 'active' || target.weight === 0)
      throw errors.conflict(
        `The server ${toServer} takes no projects (${target.weight === 0 ? 'weight 0' : target.state})`,
        {
          server: toServer,
          state: target.state,
        },
      );
    const { rows } = await admin.query<{ server_id: string }>(
      'select server_id from data_project_roles where project_id = $1 and database_name is not null',
      [projectId],
    );
    if (!rows[0]) throw errors.notFound('project', projectId);
    if (rows[0].server_id === toServer)
      throw errors.conflict(`The project lives on ${toServer} already`, { project_id: projectId, server: toServer });
    // Two registrations of one PostgreSQL server (another URL of it): a "copy" would be the project's own database.
    const identity = async (server: string): Promise<string> =>
      (
        await (
          await provisioning.serverPool(server)
        ).query<{ id: string }>(
          `select pg_postmaster_start_time()::text || '/' || coalesce(inet_server_port(), 0) as id`,
        )
      ).rows[0]!.id;
    if ((await identity(rows[0].server_id)) === (await identity(toServer)))
      throw errors.conflict(`The servers ${rows[0].server_id} and ${toServer} are one PostgreSQL server`, {
        server: toServer,
      });
    const id = crypto.randomUUID();
    await inPgTransaction(admin, async (c) => {
      await c
        .query(
          `insert into data_moves (id, project_id, from_server, to_server, drain_of) values ($1, $2, $3, $4, $5)`,
          [id, projectId, rows[0].server_id, toServer, drainOf ?? null],
        )
        .catch((err: { code?: string }) => {
          if (err.code === '23505')
            throw errors.conflict('The project is being moved already', { project_id: projectId });
          throw err;
        });
      if (by)
        await writeOperatorAudit(c, by, 'project.move', 'project', projectId, {
          move: id,
          from: rows[0].server_id,
          to: toServer,
        });
    });
    logger.info({ move: id, project: projectId, from: rows[0].server_id, to: toServer }, 'data: move queued');
    return viewOf((await read(id))!);
  };

  /**
   * Holds the project's writes everywhere and fences its source (see the top of this file): resolves once no write
   * can reach the source. The fence's connection is kept in `fence` for the switch (or released on failure).
   */
  const holdAndFence = async (moveId: string, role: ProjectRole, source: FleetServer, fence: Fence) => {
    await publishHold(role.projectId, moveId);
    fence.renew = setInterval(() => void publishHold(role.projectId, moveId).catch(() => {}), HOLD_RENEW_MS);
    fence.renew.unref();
    const c = new pg.Client({
      connectionString: databaseUrl(source, role.databaseName),
      application_name: 'tessera-move-fence',
    });
    c.on('error', () => {});
    await c.connect();
    fence.client = c;
    await c.query('set search_path = pg_catalog');
    await c.query('begin');
    await c.query(`set local lock_timeout = '${FENCE_LOCK_TIMEOUT}'`);
    const { rows } = await c.query<{ t: string }>(
      `select format('%I.%I', n.nspname, c.relname) as t from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where (n.nspname = $1 and c.relkind in ('r', 'p')) or (n.nspname = 'tessera_hooks' and c.relname = 'outbox')`,
      [role.schemaName],
    );
    // EXCLUSIVE: every write waits (or waited: the lock is granted once those under way committed); reads go on.
    await c.query(`lock table ${rows.map((r) => r.t).join(', ')} in exclusive mode`);
  };

  /** Ends the hold on failure: the fence's transaction rolled back (held writes go on on the source), the hold released. */
  const unfence = async (moveId: string, projectId: string, fence: Fence) => {
    if (fence.renew) clearInterval(fence.renew);
    await fence.client?.end().catch(() => {});
    fence.client = undefined;
    await publishRelease(projectId, moveId).catch((err: Error) =>
      logger.warn({ err: err.message, project: projectId }, 'data: a move could not release its hold (it expires)'),
    );
  };

  /** After a committed switch: the source takes no connection any more and the project's sessions there end. */
  const closeSource = async (role: ProjectRole, source: FleetServer, fence: Fence) => {
    const pool = await provisioning.serverPool(source.id);
    await pool.query(`alter database ${ident(role.databaseName)} with allow_connections false`);
    await pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and application_name <> 'tessera-move-fence'`,
      [role.databaseName],
    );
    if (fence.renew) clearInterval(fence.renew);
    await fence.client?.end().catch(() => {});
    fence.client = undefined;
  };

  /** Removes what a failed attempt left on both servers (replication objects, then the target's copy). */
  const undo = async (row: Row): Promise<void> => {
    const role = await provisioning.load(row.project_id);
    if (!role) {
      // Deleted meanwhile: its copy goes too (named as provisioning names it).
      await provisioning
        .dropCopy(row.project_id, row.to_server)
        .catch((err: Error) =>
          logger.warn({ err: err.message, move: row.id }, "data: a deleted project's copy was not dropped"),
        );
      return;
    }
    const from = await fleet.get(row.from_server).catch(() => undefined);
    const to = await fleet.get(row.to_server).catch(() => undefined);
    if (from && to)
      await cleanupLeftovers({
        sourceUrl: databaseUrl(from, role.databaseName),
        targetUrl: databaseUrl(to, role.databaseName),
      }).catch((err: { code?: string; message: string }) => {
        // The target's copy may not exist (3D000): nothing of the move is there then.
        if (err.code !== '3D000') logger.warn({ err: err.message, move: row.id }, 'data: move leftovers not removed');
      });
    if (role.serverId !== row.to_server)
      await provisioning
        .dropCopy(row.project_id, row.to_server)
        .catch((err: Error) =>
          logger.warn({ err: err.message, move: row.id }, "data: a failed move's copy was not dropped"),
        );
  };

  const fail = async (row: Row, err: unknown): Promise<void> => {
    const e = err instanceof AppError ? err : new AppError('MOVE_FAILED', `the move failed: ${(err as Error).message}`);
    logger.warn({ move: row.id, project: row.project_id, err: e.message, code: e.code }, 'data: move failed');
    await undo(row);
    await set(row.id, { state: 'failed', error_code: e.code, error: e.message, finished_at: new Date() });
  };

  /** After the switch: the source dropped once the grace period is over; the move done. */
  const finish = async (row: Row, graceMs: number): Promise<void> => {
    await set(row.id, { phase: 'drop' });
    if (graceMs > 0) await new Promise((resolve) => setTimeout(resolve, graceMs));
    await provisioning
      .dropCopy(row.project_id, row.from_server)
      .catch((err: Error) =>
        logger.warn({ err: err.message, move: row.id }, 'data: the source of a moved project was not dropped'),
      );
    await set(row.id, { state: 'done', phase: 'done', finished_at: new Date() });
    logger.info({ move: row.id, project: row.project_id, to: row.to_server }, 'data: move done');
  };

  /** The job: runs a queued move; a move left running by a process that died is finished or undone. */
  const run = async (id: string): Promise<void> => {
    const row = await read(id);
    if (!row || row.state === 'done' || row.state === 'failed') return;
    if (row.state === 'running') {
      // Its process died. The row of the project says whether the switch was committed.
      provisioning.forget(row.project_id);
      const role = await provisioning.load(row.project_id);
      if (role?.serverId === row.to_server) return await finish(row, opts.dropGraceMs ?? DROP_GRACE_MS);
      return await fail(
        row,
        new AppError(
          'MOVE_FAILED',
          'the process running the move stopped before the switch; the project stays on its source',
        ),
      );
    }
    await set(id, { state: 'running', phase: 'prepare', started_at: new Date(), attempts: row.attempts + 1 });
    const fence: Fence = {};
    let switched = false;
    try {
      provisioning.forget(row.project_id);
      const role = await provisioning.load(row.project_id);
      if (!role) throw errors.notFound('project', row.project_id);
      if (role.serverId !== row.from_server)
        throw errors.conflict(`The project moved to ${role.serverId} meanwhile`, { server: role.serverId });
      const [source, target] = [await fleet.get(row.from_server), await fleet.get(row.to_server)];
      await undo({ ...row }); // an earlier attempt's leftovers (idempotent)
      await provisioning.prepareCopy(row.project_id, row.to_server);
      let phase = '';
      const result = await copyProjectDatabase({
        sourceUrl: databaseUrl(source, role.databaseName),
        targetUrl: databaseUrl(target, role.databaseName),
        schemaName: role.schemaName,
        roleName: role.roleName,
        pgBin: opts.pgBin,
        logger,
        hold: () => holdAndFence(id, role, source, fence),
        onProgress: (p: MoveProgress) => {
          if (p.phase === phase) return;
          phase = p.phase;
          void set(id, { phase: p.phase, ...(p.mode ? { mode: p.mode } : {}) }).catch(() => {});
        },
      });
      // The switch: one row, committed; the target is the project from here on.
      await set(id, {
        phase: 'switch',
        mode: result.mode,
        reason: result.reason,
        tables: result.tables.map((t) => ({ table: t.table, rows: t.rows })),
      });
      const tx = await admin.connect();
      try {
        await tx.query('begin');
        await provisioning.switchServer(tx, row.project_id, row.to_server);
        await tx.query(`update data_moves set phase = 'switched', updated_at = now() where id = $1`, [id]);
        await tx.query('commit');
        switched = true;
      } catch (err) {
        await tx.query('rollback').catch(() => {});
        throw err;
      } finally {
        tx.release();
      }
      // Every process follows the project (its held writes then run on the target), then the source is closed: the
      // sessions still there end (a write waiting behind the fence fails with 503: it reached no server).
      await opts.announceMoved(row.project_id, row.to_server);
      await publishRelease(row.project_id, id, row.to_server);
      await closeSource(role, source, fence).catch((err: Error) =>
        logger.warn({ err: err.message, move: id }, 'data: the source of a switched move was not closed'),
      );
      logger.info(
        { move: id, project: row.project_id, to: row.to_server, mode: result.mode },
        'data: project switched',
      );
    } catch (err) {
      if (switched) {
        // Committed: whatever failed after it (a broadcast) does not undo the move; the hold expires by itself.
        logger.warn({ err: (err as Error).message, move: id }, 'data: after the switch');
      } else {
        await unfence(id, row.project_id, fence);
        await fail((await read(id))!, err);
        return;
      }
    }
    await finish((await read(id))!, opts.dropGraceMs ?? DROP_GRACE_MS);
  };

  return {
    request,
    /** Queues a move and its job. */
    async move(projectId: string, toServer: string, by?: OperatorActor): Promise<MoveView> {
      const view = await request(projectId, toServer, undefined, by);
      try {
        await opts.enqueue(MOVE_JOB, { moveId: view.id });
      } catch (err) {
        // Never queued: the move must not stay open (it would refuse every later move of the project).
        await set(view.id, {
          state: 'failed',
          error_code: 'SERVICE_UNAVAILABLE',
          error: (err as Error).message,
          finished_at: new Date(),
        });
        throw err;
      }
      return view;
    },
    /** One move (NOT_FOUND for an unknown id). */
    async get(id: string): Promise<MoveView> {
      const row = await read(id);
      if (!row) throw errors.notFound('move', id);
      return viewOf(row);
    },
    /** The latest moves (of one project, or of one drain), newest first. */
    async list(filter: { projectId?: string; drainOf?: string; first?: number }): Promise<MoveView[]> {
      const { rows } = await admin.query<Row>(
        `select * from data_moves where ($1::uuid is null or project_id = $1::uuid) and ($2::text is null or drain_of = $2)
          order by created_at desc limit $3`,
        [
          filter.projectId && UUID.test(filter.projectId) ? filter.projectId : null,
          filter.drainOf ?? null,
          Math.min(Math.max(filter.first ?? 50, 1), 100),
        ],
      );
      return rows.map(viewOf);
    },
    run,

    /** Marks the server draining and queues the drain job (moves every project off it, DRAIN_PARALLEL at a time). */
    async drain(serverId: string, by?: OperatorActor): Promise<FleetServer> {
      const server = await fleet.get(serverId);
      // The audit row goes with the state change (a drain asked again of a draining server is audited too).
      const audit = by
        ? async (db: Pick<pg.PoolClient, 'query'>) =>
            await writeOperatorAudit(db, by, 'server.drain', 'server', serverId, { from_state: server.state })
        : undefined;
      const updated =
        server.state === 'draining' && !audit ? server : await fleet.update(serverId, { state: 'draining' }, audit);
      await opts.enqueue(DRAIN_JOB, { serverId });
      logger.info({ server: serverId }, 'data: drain started');
      return updated;
    },

    /** The drain job: moves the server's projects away, a few at a time, until none is left or each failed once. */
    async runDrain(serverId: string): Promise<void> {
      // Moves of this drain left running by a process that died are finished or undone first.
      const open = await admin.query<{ id: string }>(
        `select id from data_moves where drain_of = $1 and state in ('queued', 'running')`,
        [serverId],
      );
      for (const r of open.rows) await run(r.id);
      const failedOnce = new Set<string>();
      for (;;) {
        const server = await fleet.get(serverId);
        if (server.state !== 'draining') return; // the operator set it back
        const { rows } = await admin.query<{ project_id: string }>(
          `select project_id from data_project_roles where server_id = $1 and database_name is not null order by project_id`,
          [serverId],
        );
        const todo = rows
          .map((r) => r.project_id)
          .filter((p) => !failedOnce.has(p))
          .slice(0, DRAIN_PARALLEL);
        if (todo.length === 0) {
          logger.info({ server: serverId, left: rows.length }, 'data: drain over');
          return;
        }
        await Promise.all(
          todo.map(async (projectId) => {
            try {
              const to = await fleet.place(admin);
              const view = await request(projectId, to, serverId);
              await run(view.id);
              const after = await read(view.id);
              if (after?.state !== 'done') failedOnce.add(projectId);
            } catch (err) {
              failedOnce.add(projectId);
              logger.warn(
                { err: (err as Error).message, project: projectId, server: serverId },
                'data: drain could not move a project',
              );
            }
          }),
        );
      }
    },

    /** Follows `data.project.hold` / `data.project.released` on `listener` (every data process). */
    listen(listener: BroadcastListener): void {
      listener.on('data.project.hold', (m) => holds.hold(m.projectId, m.moveId, m.ttlMs));
      listener.on('data.project.released', (m) => void holds.release(m.projectId, m.moveId, m.movedTo));
    },
  };
}
