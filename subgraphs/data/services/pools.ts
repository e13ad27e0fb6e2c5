// Connections per project: a bounded LRU of pools (TESSERA_DATA_POOL_SIZE each), each connecting AS the project's own role
// (so no statement can reset its way back to the platform's role). Evicted pools are closed.
import pg from 'pg';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../../platform/logger.ts';
import type { ProjectRole } from './provisioning.ts';
import { EXTENSIONS_SCHEMA } from './names.ts';

export type ProjectPools = ReturnType<typeof createProjectPools>;

const INT8 = 20;
const NUMERIC = 1700;

/** int8 and numeric as JSON numbers unless their integer part is beyond 2^53 (then as exact strings). */
function numberOrString(value: string): number | string {
  const n = Number(value);
  return Number.isFinite(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER ? n : value;
}

const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return numberOrString;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Creates the pool cache for `databaseUrl`'s server and database. */
export function createProjectPools(opts: { databaseUrl: string; max: number; size: number; statementTimeoutMs: number; logger: Logger }) {
  const closing = new Set<Promise<void>>();
  const pools = new LRUCache<string, pg.Pool>({
    max: opts.max,
    dispose: (pool) => {
      const done = pool
        .end()
        .catch((err: Error) => opts.logger.warn({ err: err.message }, 'data: closing a project pool failed'))
        .finally(() => closing.delete(done));
      closing.add(done);
    },
  });

  const open = (role: ProjectRole): pg.Pool => {
    const url = new URL(opts.databaseUrl);
    url.username = encodeURIComponent(role.roleName);
    url.password = encodeURIComponent(role.password);
    const pool = new pg.Pool({
      connectionString: url.toString(),
      max: opts.size,
      idleTimeoutMillis: 30_000,
      options: `-c search_path=${role.schemaName},${EXTENSIONS_SCHEMA} -c statement_timeout=${opts.statementTimeoutMs} -c idle_in_transaction_session_timeout=${opts.statementTimeoutMs * 2}`,
      types,
      application_name: 'tessera-data',
    });
    pool.on('error', (err) => opts.logger.warn({ err: err.message, project: role.projectId }, 'data: idle project connection failed'));
    return pool;
  };

  return {
    /** The project's pool, opened on first use. */
    get(role: ProjectRole): pg.Pool {
      let pool = pools.get(role.projectId);
      if (!pool) {
        pool = open(role);
        pools.set(role.projectId, pool);
      }
      return pool;
    },
    /** Closes the project's pool (project deleted). */
    async close(projectId: string): Promise<void> {
      pools.delete(projectId); // dispose ends it
      await Promise.all([...closing]);
    },
    size: () => pools.size,
    async closeAll(): Promise<void> {
      pools.clear();
      await Promise.all([...closing]);
    },
  };
}
