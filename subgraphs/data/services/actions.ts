// The nine data API actions. Each runs on the calling project's own pool (its own role, in its own database); an
// end-user runs as the project's end-user role with its id in `request.user_id`, and the publishable key's
// anonymous visitor as the project's anonymous role, so row level security applies to both.
// rawSQL runs in a transaction of its own through a cursor that stops past TESSERA_DATA_MAX_ROWS rows (or
// TESSERA_DATA_MAX_RESULT_BYTES) and rolls back, and its session is reset afterwards (see pools.ts).
// insert, update and delete (alone or inside a transaction) fire the table's database hooks (./hooks.ts):
// before-hooks run before the statement and may change or refuse it; the committed rows go to the
// after-hooks once the write has committed (never for a rolled-back transaction or a dry run): they are
// added to the after-hook outbox in the write's own transaction (./hook-outbox.ts), so they are handed off
// at least once even if this process dies right after the commit.
import crypto from 'node:crypto';
import type pg from 'pg';
import type { Principal } from '../../../platform/auth.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import { requireAdminScope } from '../../../platform/admin-scopes.ts';
import { DATA_ACTIONS, type DataActionName } from '../../../platform/data-actions.ts';
import {
  buildAggregate,
  buildDelete,
  buildFind,
  buildInsert,
  buildUpdate,
  buildVectorSearch,
  PGVECTOR_OPCLASSES,
  HNSW_INDEX_SQL,
  type Built,
} from './builder.ts';
import type { Catalog, TableMeta } from './catalog.ts';
import type { HookOutbox } from './hook-outbox.ts';
import type { AfterWrite, DataHooks, HookContext, HookEvent } from './hooks.ts';
import { forEndUser, mapPgError } from './pg-errors.ts';
import type { Db, LimitedResult, ProjectClient, ProjectPool, RolePools } from './pools.ts';
import type { ProjectRole, Provisioning } from './provisioning.ts';
import type { MoveHolds } from './move-hold.ts';
import type { Realtime } from './realtime.ts';
import { checkSqlScript, type ScriptStatement } from './sql-guard.ts';
import { ident } from './names.ts';
import { bindValue, isPlainObject, Params } from './where.ts';
import type { Change } from './realtime.ts';
import { writtenRows, ROOM_MAKING_STATEMENTS, type DatabaseQuota } from './usage.ts';

export type Body = Record<string, unknown>;
export type ActionName =
  'find' | 'findOne' | 'insert' | 'update' | 'delete' | 'aggregate' | 'vectorSearch' | 'rawSQL' | 'transaction';
const TRANSACTION_ACTIONS = [
  'find',
  'findOne',
  'insert',
  'update',
  'delete',
  'aggregate',
  'vectorSearch',
  'rawSQL',
] as const;
const MAX_OPERATIONS = 100;
/** Actions that never write (no quota is checked for them). */
const READ_ACTIONS = new Set(['find', 'findOne', 'aggregate', 'vectorSearch']);

/**
 * Who runs the action, on which project: the project key (its own role), an end-user (the end-user role, `user`)
 * or the publishable key's anonymous visitor (the anonymous role, `anonymous`). The last two run under row level
 * security, with `request.role` set to `authenticated` or `anon` for policies to tell them apart.
 */
type Caller = { role: ProjectRole; user?: { id: string; clientId: string; scopes: string[] }; anonymous?: true };

/** End-users and anonymous visitors: a transaction as their role, tables with row level security only. */
const underRls = (c: Caller): boolean => c.user !== undefined || c.anonymous === true;

/** One connection (or the pool) of the caller, with the caller's identity applied, and its writes' hooks. */
type Session = {
  db: Db;
  caller: Caller;
  ddl: boolean;
  /** rawSQL ran: the schema's tables may have changed (announced to every process once it is over). */
  catalogChanged: boolean;
  /** SQL or a hook ran (so the action must not be repeated). */
  sent: boolean;
  hook: HookContext;
  after: AfterWrite[];
  /** The project key's single statement: `db` is this pool (a write with after-hooks takes one connection of it). */
  autocommit?: ProjectPool;
  /** In a transaction: its connection (`db` is the same). */
  client?: ProjectClient;
  /** The project's own SQL ran: the session's settings may have changed (it is reset before it serves again). */
  dirty: boolean;
  /** The after-hook outbox row of the session's committed writes. */
  outboxId?: string;
};

/** Where a call comes from: how deep in function runs (database hooks) and its request id. */
export type RunOptions = { depth?: number; requestId?: string };

const hookContext = (caller: Caller, o: RunOptions, dryRun: boolean): HookContext => ({
  projectId: caller.role.projectId,
  userId: caller.user?.id ?? null,
  depth: o.depth ?? 0,
  dryRun,
  requestId: o.requestId ?? 'data',
});

/** With after-hooks a write returns whole rows; its caller still gets the `returning` it asked for (checked when built). */
function asReturned(returning: unknown, rows: Record<string, unknown>[]): Record<string, unknown>[] {
  if (returning === undefined || returning === null || returning === true || returning === '*') return rows;
  if (returning === false) return [];
  const columns = returning as string[];
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])));
}

export type Actions = ReturnType<typeof createActions>;

const TYPE_NAMES: Record<number, string> = {
  16: 'bool',
  17: 'bytea',
  20: 'int8',
  21: 'int2',
  23: 'int4',
  25: 'text',
  114: 'json',
  700: 'float4',
  701: 'float8',
  1042: 'bpchar',
  1043: 'varchar',
  1082: 'date',
  1083: 'time',
  1114: 'timestamp',
  1184: 'timestamptz',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
  1000: '_bool',
  1005: '_int2',
  1007: '_int4',
  1016: '_int8',
  1009: '_text',
  1021: '_float4',
  1022: '_float8',
  26: 'oid',
  19: 'name',
  18: 'char',
};

/**
 * A built statement's name: the same text gets the same name, so a project pool's connection parses and plans it once
 * and binds it after that (pools.ts: named statements, at most MAX_PREPARED_PER_CONNECTION per connection). The
 * values always travel apart from the text, so statements differ only by their shape.
 */
const statementName = (sql: string): string => `tessera_${crypto.hash('sha1', sql, 'base64url')}`;

async function run(db: Db, built: Built): Promise<pg.QueryResult> {
  try {
    return await db.query({
      name: statementName(built.sql),
      text: built.sql,
      values: built.params,
      queryMode: 'extended',
    } as pg.QueryConfig);
  } catch (err) {
    throw mapPgError(err);
  }
}

/** Runs the session's statement (from then on the action has effects and is never repeated). */
async function exec(s: Session, built: Built): Promise<pg.QueryResult> {
  s.sent = true;
  return await run(s.db, built);
}

/** pgvector values come back as text (`[1,2,3]`): answer them as arrays. */
function decodeRows(t: TableMeta, rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const vectors = [...t.columns.values()].filter((c) => c.typname === 'vector').map((c) => c.name);
  if (vectors.length === 0) return rows;
  for (const r of rows) for (const v of vectors) if (typeof r[v] === 'string') r[v] = JSON.parse(r[v] as string);
  return rows;
}

/** Creates the action runner. */
export function createActions(deps: {
  admin: pg.Pool;
  provisioning: Provisioning;
  pools: RolePools;
  catalog: Catalog;
  realtime: Realtime;
  hooks: DataHooks;
  outbox: HookOutbox;
  /** Most rows rawSQL or a write's `returning` answers (TESSERA_DATA_MAX_ROWS). */
  maxRows: number;
  /** Most bytes (roughly, as JSON) a rawSQL answer holds (TESSERA_DATA_MAX_RESULT_BYTES). */
  maxResultBytes: number;
  /** The plan's database size limits (max_database_rows, max_database_bytes); none checked without it. */
  quota?: DatabaseQuota;
  /** Writes of a project being switched to another server wait here, or answer 503 (move-hold.ts). */
  holds?: Pick<MoveHolds, 'beforeWrite'>;
}) {
  const { admin, provisioning, pools, catalog, realtime, hooks, outbox, maxRows, quota } = deps;

  /**
   * The database quota for operations about to run (`{action, sql?}`): nothing for reads alone; for writes, the
   * QUOTA_EXCEEDED error when the project is past max_database_rows or max_database_bytes. Past it, inserts, updates
   * and rawSQL statements other than reads and room-making ones (DELETE, TRUNCATE, DROP, VACUUM) are refused here;
   * what is left is returned so that it runs in a transaction that must not write a row (usage.ts writtenRows).
   */
  const quotaFor = async (caller: Caller, ops: Body[]): Promise<AppError | undefined> => {
    const writes = ops.filter((op) => !READ_ACTIONS.has(op.action as string));
    if (!quota || writes.length === 0) return undefined;
    const over = await quota.check(caller.role);
    if (!over) return undefined;
    for (const op of writes) {
      if (op.action === 'insert' || op.action === 'update') throw over;
      if (op.action === 'rawSQL') {
        requireAdminScope('admin:sql'); // a caller that may not run SQL learns nothing about the quota
        const statements = await checkSqlScript(op.sql, caller.role.schemaName);
        if (statements.some((st) => !ROOM_MAKING_STATEMENTS.has(st.statement))) throw over;
      }
    }
    return over;
  };
  const limits = { maxRows, maxBytes: deps.maxResultBytes };

  const runBefore = async (s: Session, ...args: Parameters<DataHooks['runBefore']>): Promise<unknown[]> => {
    s.sent = true;
    return await hooks.runBefore(...args);
  };
  const session = (db: Db, caller: Caller, hook: HookContext): Session => ({
    db,
    caller,
    ddl: false,
    catalogChanged: false,
    sent: false,
    hook,
    after: [],
    dirty: false,
  });
  /** Drops the schema's catalog here and in every other process; a failed announcement is logged by nobody: it only costs freshness elsewhere. */
  const announce = async (schema: string): Promise<void> => await catalog.announce(admin, schema).catch(() => {});

  /**
   * Runs a write statement; with `event` (the table has after-hooks for it) its rows are kept for them. The project
   * key's single statement then runs in a short transaction of its own with its outbox row, so both commit together;
   * inside a transaction the outbox row is added just before the commit (see inTransaction).
   */
  const write = async (
    s: Session,
    built: Built,
    t: TableMeta,
    event?: HookEvent,
  ): Promise<{ res: pg.QueryResult; rows: Record<string, unknown>[] }> => {
    if (!event) {
      const res = await exec(s, built);
      return { res, rows: decodeRows(t, res.rows) };
    }
    if (!s.autocommit) {
      const res = await exec(s, built);
      const rows = decodeRows(t, res.rows);
      s.after.push({ table: t.name, event, rows });
      return { res, rows };
    }
    s.sent = true;
    const client = await s.autocommit.connect();
    let broken = false;
    try {
      await client.query('begin');
      const res = await run(client, built);
      const rows = decodeRows(t, res.rows);
      const w: AfterWrite = { table: t.name, event, rows };
      s.outboxId = await outbox.add(client, s.hook, [w]);
      await client.query('commit');
      s.after.push(w);
      return { res, rows };
    } catch (err) {
      await client.query('rollback').catch(() => {
        broken = true;
      });
      throw mapPgError(err);
    } finally {
      client.release(broken);
    }
  };

  /** A write waits while its project is held by a move (before its role is read: after a switch it is the new one). */
  const holdOf = async (principal: Principal): Promise<void> => {
    if (deps.holds && 'projectId' in principal && typeof principal.projectId === 'string')
      await deps.holds.beforeWrite(principal.projectId);
  };

  const callerOf = async (principal: Principal): Promise<Caller> => {
    let projectId: string;
    let user: Caller['user'];
    if (principal.kind === 'project') projectId = principal.projectId;
    else if (principal.kind === 'user') {
      projectId = principal.projectId;
      user = { id: principal.userId, clientId: principal.clientId, scopes: principal.scopes };
    } else if (principal.kind === 'publishable') {
      // A project made before the anonymous role existed gets it on its first anonymous call.
      return {
        role: await provisioning.ensureAnonymous(await provisioning.ensure(principal.projectId)),
        anonymous: true,
      };
    } else if (principal.kind === 'anonymous')
      throw errors.unauthenticated('Send a project key (X-Api-Key) or an end-user access token');
    else throw errors.forbidden('The data API takes a project key (X-Api-Key) or an end-user access token');
    // A new project's database may still be on its way (made from the project.created event): this call makes it.
    return { role: await provisioning.ensure(projectId), user };
  };

  const table = async (s: Session, name: unknown): Promise<TableMeta> => {
    const t = await catalog.table(s.db, s.caller.role.schemaName, name);
    if (underRls(s.caller) && !t.rls) {
      const who = s.caller.user ? 'End users' : 'The publishable key';
      throw errors.forbidden(
        `${who} may only use tables with row level security enabled; "${t.name}" has none (ALTER TABLE ... ENABLE ROW LEVEL SECURITY and add policies)`,
      );
    }
    return t;
  };

  const actions = {
    async find(s: Session, body: Body) {
      const t = await table(s, body.table);
      const res = await exec(s, buildFind(s.caller.role.schemaName, t, body));
      return { rows: decodeRows(t, res.rows) };
    },
    async findOne(s: Session, body: Body) {
      const t = await table(s, body.table);
      const res = await exec(s, buildFind(s.caller.role.schemaName, t, body, true));
      return { row: decodeRows(t, res.rows)[0] ?? null };
    },
    async insert(s: Session, body: Body) {
      const t = await table(s, body.table);
      const schema = s.caller.role.schemaName;
      let built = buildInsert(schema, t, body); // the body as sent is checked before any hook runs
      const plan = await hooks.plan(s.hook, t.name, 'insert');
      if (!plan.before && !plan.after) {
        const res = await exec(s, built);
        return { count: res.rowCount ?? res.rows.length, rows: decodeRows(t, res.rows) };
      }
      let b = body;
      if (plan.before) {
        const many = Array.isArray(body.values);
        const rows = await runBefore(
          s,
          s.hook,
          t.name,
          'insert',
          many ? (body.values as unknown[]) : [body.values],
          null,
        );
        b = { ...body, values: many ? rows : rows[0] };
      }
      built = buildInsert(schema, t, plan.after ? { ...b, returning: '*' } : b);
      const { res, rows } = await write(s, built, t, plan.after ? 'insert' : undefined);
      return { count: res.rowCount ?? res.rows.length, rows: plan.after ? asReturned(body.returning, rows) : rows };
    },
    async update(s: Session, body: Body) {
      const t = await table(s, body.table);
      const schema = s.caller.role.schemaName;
      let built = buildUpdate(schema, t, body, maxRows);
      const plan = await hooks.plan(s.hook, t.name, 'update');
      if (!plan.before && !plan.after) {
        const res = await exec(s, built);
        return { count: res.rowCount ?? 0, rows: decodeRows(t, res.rows) };
      }
      let b = body;
      if (plan.before) b = { ...body, set: (await runBefore(s, s.hook, t.name, 'update', [body.set], body.where))[0] };
      built = buildUpdate(schema, t, plan.after ? { ...b, returning: '*' } : b, maxRows);
      const { res, rows } = await write(s, built, t, plan.after ? 'update' : undefined);
      return { count: res.rowCount ?? 0, rows: plan.after ? asReturned(body.returning, rows) : rows };
    },
    async delete(s: Session, body: Body) {
      const t = await table(s, body.table);
      const schema = s.caller.role.schemaName;
      const built = buildDelete(schema, t, body, maxRows);
      const plan = await hooks.plan(s.hook, t.name, 'delete');
      if (!plan.before && !plan.after) {
        const res = await exec(s, built);
        return { count: res.rowCount ?? 0, rows: decodeRows(t, res.rows) };
      }
      if (plan.before) await runBefore(s, s.hook, t.name, 'delete', [null], body.where);
      const { res, rows } = await write(
        s,
        plan.after ? buildDelete(schema, t, { ...body, returning: '*' }, maxRows) : built,
        t,
        plan.after ? 'delete' : undefined,
      );
      return { count: res.rowCount ?? 0, rows: plan.after ? asReturned(body.returning, rows) : rows };
    },
    async aggregate(s: Session, body: Body) {
      const t = await table(s, body.table);
      const res = await exec(s, buildAggregate(s.caller.role.schemaName, t, body));
      return { rows: res.rows };
    },
    async vectorSearch(s: Session, body: Body) {
      const t = await table(s, body.table);
      const built = buildVectorSearch(s.caller.role.schemaName, t, body);
      let method = 'exact';
      if (built.pgvector) {
        const { rows } = await exec(s, {
          sql: HNSW_INDEX_SQL,
          params: [s.caller.role.schemaName, t.name, built.column, PGVECTOR_OPCLASSES[built.metric]],
        });
        if (rows.length > 0) method = 'hnsw';
      }
      const res = await exec(s, built);
      return { rows: decodeRows(t, res.rows), method };
    },
    async rawSQL(s: Session, body: Body) {
      requireAdminScope('admin:sql'); // (platform/admin-scopes.ts) end users, and client tokens without admin:sql, are refused: also inside a transaction
      const statements = await checkSqlScript(body.sql, s.caller.role.schemaName);
      if (statements.length > 1) return await script(s, statements, body.params);
      const guard = statements[0]!;
      if ((body.sql as string).length > 100_000) throw errors.validation('sql', 'at most 100000 characters');
      const params = body.params ?? [];
      if (!Array.isArray(params)) throw errors.validation('params', 'expected an array of values');
      if (params.length > 10_000) throw errors.validation('params', 'at most 10000 values');
      s.catalogChanged = true; // even a select may call a function that changes tables
      s.dirty = true;
      s.sent = true;
      const sql = body.sql as string;
      let res: LimitedResult;
      try {
        if (s.client) res = await s.client.readLimited(sql, params, limits);
        else res = await alone(s.autocommit!, sql, params, guard.transactional);
      } catch (err) {
        throw mapPgError(err);
      }
      if (guard.ddl) s.ddl = true;
      catalog.invalidate(s.caller.role.schemaName); // later operations of a transaction see its own changes
      return {
        rows: res.rows,
        rowCount: res.rowCount ?? res.rows.length,
        fields: fieldsOf(res),
        statements: [{ index: 0, line: guard.line, command: res.command ?? null, rowCount: res.rowCount ?? null }],
      };
    },
  };

  const fieldsOf = (res: LimitedResult) =>
    (res.fields ?? []).map((f) => ({ name: f.name, type: TYPE_NAMES[f.dataTypeID] ?? String(f.dataTypeID) }));

  /**
   * A script of several statements: one transaction, each statement through the row-limited cursor in order; the
   * answer is the last statement's rows with every statement's command tag and row count. A failing statement rolls
   * everything back and is named (1-based, with its line; `details.statement` is 0-based, `details.position` the
   * character offset in the script).
   */
  const script = async (s: Session, statements: ScriptStatement[], params: unknown) => {
    if (params !== undefined && params !== null && !(Array.isArray(params) && params.length === 0))
      throw errors.validation('params', 'a script of several statements takes no parameters: send one statement');
    const stuck = statements.findIndex((st) => !st.transactional);
    if (stuck >= 0)
      throw errors.validation(
        'sql',
        `statement ${stuck + 1} (line ${statements[stuck]!.line}) cannot run inside a transaction (VACUUM, CREATE INDEX CONCURRENTLY): send it alone`,
      );
    s.catalogChanged = true;
    s.dirty = true;
    s.sent = true;
    const runAll = async (client: ProjectClient) => {
      const done: { index: number; line: number; command: string | null; rowCount: number | null }[] = [];
      let last: LimitedResult | undefined;
      for (const [i, st] of statements.entries()) {
        try {
          last = await client.readLimited(st.sql, [], limits);
        } catch (err) {
          const mapped = mapPgError(err);
          if (!(mapped instanceof AppError)) throw mapped;
          throw new AppError(mapped.code, `statement ${i + 1} (line ${st.line}): ${mapped.message}`, {
            ...mapped.details,
            statement: i,
            line: st.line,
            position: st.offset,
          });
        }
        done.push({ index: i, line: st.line, command: last.command ?? null, rowCount: last.rowCount ?? null });
      }
      return { last: last!, done };
    };
    let out: Awaited<ReturnType<typeof runAll>>;
    if (s.client) out = await runAll(s.client);
    else {
      const client = await s.autocommit!.connect();
      let broken = false;
      try {
        await client.query('begin');
        out = await runAll(client);
        await client.query('commit');
      } catch (err) {
        await client.query('rollback').catch(() => {
          broken = true;
        });
        throw err;
      } finally {
        client.release(broken ? true : 'reset');
      }
    }
    if (statements.some((st) => st.ddl)) s.ddl = true;
    catalog.invalidate(s.caller.role.schemaName);
    return {
      rows: out.last.rows,
      rowCount: out.last.rowCount ?? out.last.rows.length,
      fields: fieldsOf(out.last),
      statements: out.done,
    };
  };

  /**
   * The project key's rawSQL statement on a connection of its own: in a transaction read through the row-limited
   * cursor (a statement past the limit is rolled back: nothing half done), or alone for the statements PostgreSQL
   * refuses in a transaction (VACUUM, CREATE INDEX CONCURRENTLY). The session is reset afterwards either way.
   */
  const alone = async (pool: ProjectPool, sql: string, params: unknown[], transactional: boolean) => {
    const client = await pool.connect();
    let broken = false;
    try {
      if (!transactional) {
        const r = await client.query(sql, params);
        return { rows: r.rows ?? [], rowCount: r.rowCount, command: r.command ?? null, fields: r.fields ?? [] };
      }
      await client.query('begin');
      const r = await client.readLimited(sql, params, limits);
      await client.query('commit');
      return r;
    } catch (err) {
      if (transactional) {
        await client.query('rollback').catch(() => {
          broken = true;
        });
      }
      throw err;
    } finally {
      client.release(broken ? true : 'reset');
    }
  };

  /**
   * Runs `fn` in a transaction on one connection, as the caller (end users switch to the end-user role);
   * with `rollback` nothing is kept even when `fn` succeeds (and its writes' hooks run as dry runs).
   * After-hooks get the committed rows once the transaction has committed and its connection is back.
   */
  const inTransaction = async <T>(
    caller: Caller,
    fn: (s: Session) => Promise<T>,
    opts: RunOptions & { rollback?: boolean; over?: AppError } = {},
  ): Promise<T> => {
    const rollback = opts.rollback === true;
    const client = await pools.get(caller.role).connect();
    const s: Session = { ...session(client, caller, hookContext(caller, opts, rollback)), client };
    let broken = false;
    let out: T;
    try {
      await client.query('begin');
      if (caller.user) {
        await client.query(`set local role ${ident(caller.role.userRoleName)}`);
        await client.query(
          `select set_config('request.user_id', $1, true), set_config('request.client_id', $2, true), set_config('request.scopes', $3, true),
                  set_config('request.role', 'authenticated', true)`,
          [caller.user.id, caller.user.clientId, caller.user.scopes.join(' ')],
        );
      } else if (caller.anonymous) {
        // No user: policies comparing request.user_id see an empty string (no row is owned by nobody, see README).
        await client.query(`set local role ${ident(caller.role.anonRoleName)}`);
        await client.query(
          `select set_config('request.user_id', '', true), set_config('request.client_id', '', true), set_config('request.scopes', '', true),
                  set_config('request.role', 'anon', true)`,
        );
      }
      const before = opts.over ? await writtenRows(client) : 0;
      out = await fn(s);
      // Past the database quota only reads and room-making statements were let in: nothing they set off may add rows.
      if (opts.over && (await writtenRows(client)) > before) throw opts.over;
      // The committed rows wait for their after-hooks in the outbox, added in this transaction (never for a rollback).
      if (!rollback && s.after.length > 0) s.outboxId = await outbox.add(client, s.hook, s.after);
      await client.query(rollback ? 'rollback' : 'commit');
    } catch (err) {
      await client.query('rollback').catch(() => {
        broken = true;
      });
      catalog.noteError(caller.role.schemaName, err);
      throw err;
    } finally {
      client.release(broken ? true : s.dirty ? 'reset' : false);
      // Committed or rolled back, what rawSQL did is settled now: every process forgets the schema's tables.
      if (s.catalogChanged) await announce(caller.role.schemaName);
      if (s.ddl) await realtime.sync(caller.role).catch(() => {});
    }
    if (!rollback && s.after.length > 0) await outbox.deliver(caller.role, s.hook, s.after, s.outboxId);
    return out;
  };

  /** Runs one action for the caller; with the project key a single statement runs without a transaction. */
  const perform = async (
    principal: Principal,
    action: Exclude<ActionName, 'transaction'>,
    body: Body,
    o: RunOptions = {},
  ): Promise<unknown> => {
    if (!READ_ACTIONS.has(action)) await holdOf(principal);
    const caller = await callerOf(principal);
    const fn = actions[action] as (s: Session, b: Body) => Promise<unknown>;
    const over = await quotaFor(caller, [{ ...body, action }]);
    if (!READ_ACTIONS.has(action)) quota?.wrote(caller.role.projectId);
    // VACUUM cannot run in a transaction; it makes no rows.
    const guarded = over && !(action === 'rawSQL' && /^\s*vacuum\b/i.test(String(body.sql)));
    if (underRls(caller) || guarded) {
      return await inTransaction(caller, (s) => fn(s, body), { ...o, over: guarded ? over : undefined }).catch(
        (err: unknown) => {
          throw underRls(caller) ? forEndUser(mapPgError(err)) : err;
        },
      );
    }
    const schema = caller.role.schemaName;
    const once = async (retry: boolean): Promise<unknown> => {
      const pool = pools.get(caller.role);
      const s: Session = { ...session(pool, caller, hookContext(caller, o, false)), autocommit: pool };
      try {
        const out = await fn(s, body);
        if (s.after.length > 0) await outbox.deliver(caller.role, s.hook, s.after, s.outboxId);
        return out;
      } catch (err) {
        // A column this process did not know may have been made by the project's own trigger or function:
        // look once more with a fresh catalog, unless something already ran.
        if (retry && !s.sent && catalog.isUnknownColumn(err)) {
          catalog.invalidate(schema);
          return await once(false);
        }
        if (err instanceof AppError && err.code === 'NOT_FOUND') catalog.invalidate(schema);
        catalog.noteError(schema, err);
        throw err;
      } finally {
        if (s.catalogChanged) await announce(schema);
        if (s.ddl) await realtime.sync(caller.role).catch(() => {});
      }
    };
    return await once(true);
  };

  /** Several actions, all or nothing (with `rollback`: nothing, whatever happens); an error names the failing operation's index. */
  const transaction = async (
    principal: Principal,
    operations: unknown,
    opts: RunOptions & { rollback?: boolean } = {},
  ): Promise<{ results: unknown[] }> => {
    if (!Array.isArray(operations) || operations.length === 0)
      throw errors.validation('operations', 'expected a non-empty array of {action, table, ...}');
    if (operations.length > MAX_OPERATIONS)
      throw errors.validation('operations', `at most ${MAX_OPERATIONS} operations`);
    operations.forEach((op, i) => {
      if (!isPlainObject(op)) throw errors.validation(`operations[${i}]`, 'expected an object with an action');
      if (!(TRANSACTION_ACTIONS as readonly unknown[]).includes(op.action)) {
        throw errors.validation(
          `operations[${i}].action`,
          `expected one of ${TRANSACTION_ACTIONS.join(', ')}, got ${JSON.stringify(op.action)}`,
        );
      }
      // A field the action does not define (a typo for `where`...) never passes silently: it could widen the write.
      const allowed = ['action', ...Object.keys(DATA_ACTIONS[op.action as DataActionName].args)];
      for (const key of Object.keys(op)) {
        if (!allowed.includes(key))
          throw new AppError(
            'VALIDATION_FAILED',
            `operations[${i}].${key}: unknown field; ${String(op.action)} takes ${allowed.join(', ')}`,
            { field: `operations[${i}].${key}`, allowed },
          );
      }
    });
    if ((operations as Body[]).some((op) => !READ_ACTIONS.has(op.action as string))) await holdOf(principal);
    const caller = await callerOf(principal);
    const over = await quotaFor(caller, operations as Body[]);
    if ((operations as Body[]).some((op) => !READ_ACTIONS.has(op.action as string)))
      quota?.wrote(caller.role.projectId);
    const run = inTransaction(
      caller,
      async (s) => {
        const results: unknown[] = [];
        for (const [i, op] of (operations as Body[]).entries()) {
          try {
            const fn = actions[op.action as (typeof TRANSACTION_ACTIONS)[number]] as (
              s: Session,
              b: Body,
            ) => Promise<unknown>;
            results.push(await fn(s, op));
          } catch (err) {
            const mapped = mapPgError(err);
            if (!(mapped instanceof AppError)) throw mapped;
            throw new AppError(mapped.code, `operations[${i}] (${String(op.action)}): ${mapped.message}`, {
              ...mapped.details,
              operation: i,
            });
          }
        }
        return { results };
      },
      { ...opts, over },
    );
    return underRls(caller) ? await run.catch((err: unknown) => Promise.reject(forEndUser(err))) : await run;
  };

  /**
   * Whether the end user (or anonymous visitor) of `s` could have read `old`, a row of `t` that was just deleted: the
   * table's SELECT policies that apply to its role (permissive ones or'ed, restrictive ones and'ed, as PostgreSQL does),
   * evaluated over the row as it was, as that user. No applicable policy: no.
   */
  const couldRead = async (s: Session, t: TableMeta, old: Record<string, unknown>): Promise<boolean> => {
    const schema = s.caller.role.schemaName;
    const { rows: policies } = await exec(s, {
      sql: `select p.polpermissive as permissive, pg_catalog.pg_get_expr(p.polqual, p.polrelid) as qual
              from pg_catalog.pg_policy p
              join pg_catalog.pg_class c on c.oid = p.polrelid
              join pg_catalog.pg_namespace n on n.oid = c.relnamespace
             where n.nspname = $1 and c.relname = $2 and p.polcmd in ('r', '*')
               and (p.polroles @> array[0::oid] or (select r.oid from pg_catalog.pg_roles r where r.rolname = $3) = any(p.polroles))`,
      params: [schema, t.name, s.caller.anonymous ? s.caller.role.anonRoleName : s.caller.role.userRoleName],
    });
    const quals = policies as { permissive: boolean; qual: string | null }[];
    const permissive = quals.filter((q) => q.permissive && q.qual).map((q) => `(${q.qual})`);
    const restrictive = quals.filter((q) => !q.permissive).map((q) => `(${q.qual ?? 'false'})`);
    if (permissive.length === 0) return false;
    const cond = [`(${permissive.join(' or ')})`, ...restrictive].join(' and ');
    // The policies' own text, over the old row: the alias is the table's name, so their column references resolve.
    const res = await exec(s, {
      sql: `select 1 from pg_catalog.jsonb_populate_record(null::${ident(schema)}.${ident(t.name)}, $1::jsonb) as ${ident(t.name)} where ${cond}`,
      params: [JSON.stringify(old)],
    });
    return res.rows.length > 0;
  };

  /**
   * What a realtime subscriber may receive: the project key everything, an end user or the publishable key what RLS lets it read (a
   * deleted row: what its policies would have let it read, and then only the row's key). `source` is the project's
   * change stream, listening once this resolves.
   */
  const subscriber = async (principal: Principal) => {
    const caller = await callerOf(principal);
    const schema = caller.role.schemaName;
    const source = await realtime.subscribe(caller.role);
    const tableOf = async (name: string) =>
      await catalog.table(pools.get(caller.role), schema, name).catch(() => undefined);
    if (!underRls(caller)) return { source, visible: async (_c: Change) => true, oldOf: (c: Change) => c.old ?? null };
    const keys = new Map<string, string[]>();
    return {
      source,
      visible: async (c: Change): Promise<boolean> => {
        if (c.op === 'gap') return true;
        const t = await tableOf(c.table);
        if (!t || !t.rls || t.primaryKey.length === 0) return false;
        keys.set(t.name, t.primaryKey);
        if (c.op === 'delete') {
          const old = c.old;
          if (!old) return false;
          return await inTransaction(caller, async (s) => await couldRead(s, t, old), { rollback: true }).catch(
            () => false,
          );
        }
        const row = c.row;
        if (!row) return false;
        return await inTransaction(
          caller,
          async (s) => {
            const p = new Params();
            const cond = t.primaryKey
              .map((k) => `${ident(k)} = ${p.add(bindValue(t.columns.get(k), row[k], k))}`)
              .join(' and ');
            const res = await exec(s, {
              sql: `select 1 from ${ident(schema)}.${ident(t.name)} where ${cond}`,
              params: p.values,
            });
            return res.rows.length > 0;
          },
          { rollback: true },
        ).catch(() => false);
      },
      // A deleted row is sent to end users as its key only.
      oldOf: (c: Change) => (c.old ? Object.fromEntries((keys.get(c.table) ?? []).map((k) => [k, c.old![k]])) : null),
    };
  };

  return { perform, transaction, subscriber };
}
