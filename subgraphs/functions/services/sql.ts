// SQL through the subgraph's own MikroORM connection. The functions tables are reached with plain SQL
// (set-oriented upserts, JSON columns, percentiles), so they have no entity classes.
import type { SubgraphDatabase } from '../../../platform/database.ts';
import { createPgPool } from '../../../platform/pg-pool.ts';
import type { Logger } from '../../../platform/logger.ts';

export type Sql = {
  /** Rows of a query (`?` placeholders). */
  rows: <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;
  /** Rows affected by a statement. */
  run: (sql: string, params?: unknown[]) => Promise<number>;
  /** Runs `fn` in one transaction. */
  tx: <T>(fn: (sql: Sql) => Promise<T>) => Promise<T>;
};

type Em = ReturnType<SubgraphDatabase['em']>;

function over(em: Em, db: SubgraphDatabase): Sql {
  return {
    rows: async <T>(sql: string, params: unknown[] = []) => (await em.execute(sql, params as never[], 'all')) as T[],
    run: async (sql, params = []) =>
      ((await em.execute(sql, params as never[], 'run')) as { affectedRows: number }).affectedRows,
    tx: async (fn) => await db.em().transactional(async (tx) => await fn(over(tx as Em, db))),
  };
}

/** SQL helpers over a subgraph database (a fresh EntityManager per call). */
export function createSql(db: SubgraphDatabase): Sql {
  return {
    rows: async (sql, params) => await over(db.em(), db).rows(sql, params),
    run: async (sql, params) => await over(db.em(), db).run(sql, params),
    tx: async (fn) => await over(db.em(), db).tx(fn),
  };
}

/** JSON for a `?::jsonb` parameter (undefined → SQL null). */
export function jsonParam(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v);
}

/** True when `err` is PostgreSQL's unique violation. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return (
    e?.code === '23505' || e?.cause?.code === '23505' || /duplicate key value/.test(String((err as Error)?.message))
  );
}

/**
 * The hot statements (the execution record of every run, the webhook lookup on a cache miss) on a small pool
 * of plain pg connections, as named prepared statements: each connection parses and plans a statement once
 * and then only executes it, and parameters travel apart from the text (no escaping of large JSON values
 * into the SQL, as the ORM's `execute` does). `$1`, `$2` placeholders.
 */
export type HotSql = {
  rows: <T = Record<string, unknown>>(name: string, text: string, values: unknown[]) => Promise<T[]>;
  run: (name: string, text: string, values: unknown[]) => Promise<number>;
  close: () => Promise<void>;
};

/** Most connections of the hot pool (batched writes use at most two at a time). */
export const HOT_POOL_MAX = 4;

export function createHotSql(url: string, logger: Pick<Logger, 'warn'>, max = HOT_POOL_MAX): HotSql {
  // A connection that fails (server restart) must not take the process down; the pool drops it.
  const pool = createPgPool({ connectionString: url, max, application_name: 'tessera-functions' }, logger, 'functions');
  return {
    rows: async <T>(name: string, text: string, values: unknown[]) =>
      (await pool.query({ name, text, values })).rows as T[],
    run: async (name, text, values) => (await pool.query({ name, text, values })).rowCount ?? 0,
    close: async () => await pool.end(),
  };
}
