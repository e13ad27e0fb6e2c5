// SQL through the subgraph's own MikroORM connection. The functions tables are reached with plain SQL
// (set-oriented upserts, JSON columns, percentiles), so they have no entity classes.
import type { SubgraphDatabase } from '../../../platform/database.ts';

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
    rows: async <T,>(sql: string, params: unknown[] = []) => (await em.execute(sql, params as never[], 'all')) as T[],
    run: async (sql, params = []) => ((await em.execute(sql, params as never[], 'run')) as { affectedRows: number }).affectedRows,
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
  return e?.code === '23505' || e?.cause?.code === '23505' || /duplicate key value/.test(String((err as Error)?.message));
}
