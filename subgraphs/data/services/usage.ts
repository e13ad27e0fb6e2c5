// How big a project's database is, against its plan's max_database_rows and max_database_bytes (issue 28).
// Measured by the platform on the project's own connection (never through the project's guarded SQL, which may not
// call pg_database_size): live rows = the sum of pg_stat_user_tables.n_live_tup (PostgreSQL's own statistics,
// counted as transactions commit, reported within about a second), bytes = pg_database_size(current_database()).
// Measured at most every FRESH_MS per project, again DIRTY_MS after a write (writes in between share the
// measurement), and always again before refusing (a refusal is never older than REFUSE_MS). The slack this leaves is
// documented in docs/architecture.md: a write admitted under the limit may take the project past it by its own size,
// and writes racing one measurement all pass; the next write after the measurement is refused.
import type pg from 'pg';
import { quotaExceeded } from '../../../platform/limit-errors.ts';
import type { PlanLimitsReader } from '../../../platform/plan-limits.ts';
import type { AppError } from '../../../platform/errors.ts';
import type { Db } from './pools.ts';
import type { ProjectRole } from './provisioning.ts';

/** A measurement under the limit is trusted this long. */
const FRESH_MS = 5_000;
/** After a write, the next check measures again once the measurement is this old. */
const DIRTY_MS = 1_000;
/** A refusal rests on a measurement at most this old (else it measures first). */
const REFUSE_MS = 1_000;
/** Projects whose measurement is kept (an inactive one is measured again when it writes). */
const MAX_KEPT = 10_000;

export type DatabaseUsage = {
  rows: number;
  bytes: number;
  maxRows: number | null;
  maxBytes: number | null;
  measuredAt: string;
};

type Measured = { rows: number; bytes: number; at: number; dirty: boolean };

/** Several projects' databases together; `unmeasured`: databases left out because they could not be measured now. */
export type DatabaseTotals = { rows: number; bytes: number; unmeasured: number };

/** Measurements for account totals running at once in a process (each takes a connection of its project). */
const TOTALS_AT_ONCE = 4;

/** Runs at most `n` of the given tasks at once, the others waiting in order. */
function gate(n: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finishing task hands its place to the next in line, so no newcomer slips in between.
    if (running >= n) await new Promise<void>((go) => waiting.push(go));
    else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** Statements a project past its quota may still run through rawSQL: they read or make room. */
export const ROOM_MAKING_STATEMENTS = new Set([
  'SelectStmt',
  'DeleteStmt',
  'TruncateStmt',
  'DropStmt',
  'VacuumStmt',
  'ExplainStmt',
  'VariableShowStmt',
]);

export type DatabaseQuota = ReturnType<typeof createDatabaseQuota>;

const MIB = 1024 * 1024;
const bytesText = (n: number) => (n >= MIB ? `${(n / MIB).toFixed(1)} MiB` : `${n} bytes`);

/** Creates the measurement and check over the project's own pool (`db(role)`) and the plan reader. */
export function createDatabaseQuota(deps: {
  db: (role: ProjectRole) => Db;
  planLimits: Pick<PlanLimitsReader, 'plan'>;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  const kept = new Map<string, Measured>();
  const totalsGate = gate(TOTALS_AT_ONCE);
  const inflight = new Map<string, Promise<Measured>>();

  const measure = async (role: ProjectRole): Promise<Measured> => {
    let pending = inflight.get(role.projectId);
    if (!pending) {
      pending = (async () => {
        // Qualified: the project's own objects never stand in for the catalog's.
        const { rows } = (await deps.db(role).query(
          `select (select coalesce(sum(n_live_tup), 0) from pg_catalog.pg_stat_user_tables)::float8 as rows,
                  pg_catalog.pg_database_size(pg_catalog.current_database())::float8 as bytes`,
        )) as pg.QueryResult<{ rows: number; bytes: number }>;
        const m = { rows: Number(rows[0]!.rows), bytes: Number(rows[0]!.bytes), at: now(), dirty: false };
        if (kept.size >= MAX_KEPT && !kept.has(role.projectId)) kept.delete(kept.keys().next().value!);
        kept.set(role.projectId, m);
        return m;
      })().finally(() => inflight.delete(role.projectId));
      inflight.set(role.projectId, pending);
    }
    return await pending;
  };

  /** Whether a kept measurement may still be trusted: under FRESH_MS old, and under DIRTY_MS once a write ran since. */
  const fresh = (m: Measured | undefined): m is Measured => {
    if (!m) return false;
    const age = now() - m.at;
    return age < FRESH_MS && !(m.dirty && age >= DIRTY_MS);
  };

  const overOf = (planId: string, m: Measured, maxRows: number | null, maxBytes: number | null): AppError | null => {
    if (maxRows !== null && m.rows >= maxRows)
      return quotaExceeded(planId, 'max_database_rows', maxRows, m.rows, (n) => `${n} database rows`);
    if (maxBytes !== null && m.bytes >= maxBytes)
      return quotaExceeded(planId, 'max_database_bytes', maxBytes, m.bytes, (n) => `${bytesText(n)} of database`);
    return null;
  };

  return {
    /**
     * The QUOTA_EXCEEDED error when the project is at or past max_database_rows or max_database_bytes, else null.
     * Without either limit it measures nothing.
     */
    async check(role: ProjectRole): Promise<AppError | null> {
      const plan = await deps.planLimits.plan(role.projectId);
      const maxRows = plan?.limits.maxDatabaseRows ?? null;
      const maxBytes = plan?.limits.maxDatabaseBytes ?? null;
      if (!plan || (maxRows === null && maxBytes === null)) return null;
      let m = kept.get(role.projectId);
      if (!fresh(m)) m = await measure(role);
      let over = overOf(plan.planId, m, maxRows, maxBytes);
      if (over && now() - m.at >= REFUSE_MS) over = overOf(plan.planId, (m = await measure(role)), maxRows, maxBytes);
      return over;
    },
    /** A write ran: the next check after DIRTY_MS measures again. */
    wrote(projectId: string): void {
      const m = kept.get(projectId);
      if (m) m.dirty = true;
    },
    /** The usage as measured now (the GraphQL `Project.databaseUsage`), with the plan's limits. */
    async usage(role: ProjectRole): Promise<DatabaseUsage> {
      const [m, plan] = await Promise.all([measure(role), deps.planLimits.plan(role.projectId)]);
      return {
        rows: m.rows,
        bytes: m.bytes,
        maxRows: plan?.limits.maxDatabaseRows ?? null,
        maxBytes: plan?.limits.maxDatabaseBytes ?? null,
        measuredAt: new Date(m.at).toISOString(),
      };
    },
    /**
     * Rows and bytes of several projects' databases together (an account's, for the operator). Each database is its
     * own (perhaps on another server), so each is measured on its own connection, as `check` does: a measurement still
     * fresh for `check` is reused, at most TOTALS_AT_ONCE run at once in this process (a page of accounts may name
     * hundreds of projects). A database that cannot be measured now (its server down) is left out and counted in
     * `unmeasured`, so one unreachable server does not take the operator's whole list down.
     */
    async totals(roles: readonly ProjectRole[]): Promise<DatabaseTotals> {
      const all = await Promise.all(
        roles.map(async (role) => {
          const m = kept.get(role.projectId);
          if (fresh(m)) return m;
          return await totalsGate(() => measure(role)).catch(() => null);
        }),
      );
      const measured = all.filter((m): m is Measured => m !== null);
      return {
        rows: measured.reduce((n, m) => n + m.rows, 0),
        bytes: measured.reduce((n, m) => n + m.bytes, 0),
        unmeasured: all.length - measured.length,
      };
    },
    /** Forgets a deleted project. */
    forget(projectId: string): void {
      kept.delete(projectId);
    },
  };
}

/**
 * Rows inserted or updated by this connection so far in every table of the database (PostgreSQL's per-backend pending
 * statistics: the current transaction's, plus earlier transactions' not yet reported, which only happens between
 * transactions). Taken at a guarded transaction's start and before its commit, the difference is what the transaction
 * itself wrote: a trigger, a function called by a SELECT, a data-modifying CTE, EXPLAIN ANALYZE of a write. The
 * project cannot write these statistics.
 */
export async function writtenRows(db: Db): Promise<number> {
  const { rows } = (await db.query(
    `select coalesce(sum(n_tup_ins + n_tup_upd), 0)::float8 as written from pg_catalog.pg_stat_xact_user_tables`,
  )) as pg.QueryResult<{ written: number }>;
  return Number(rows[0]!.written);
}
