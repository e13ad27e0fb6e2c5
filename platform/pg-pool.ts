// The one way to make a node-postgres pool. A connection the server drops (PostgreSQL restarted, the backend
// terminated, the network gone) must never end the process. pg-pool listens for a client's errors only while the
// client is idle in the pool; a checked-out client that loses its connection between two queries (a transaction
// awaiting other work, a lock held across calls, a LISTEN) emits 'error' with nobody listening, which Node turns
// into an uncaught exception: the whole process exits. Every client made here has a listener for its whole life.
// The loss still reaches whoever uses it: the query in flight fails with it, the next one fails ("Client has
// encountered a connection error and is not queryable"), and the pool discards the client when it is released.
import pg from 'pg';
import type { Logger } from './logger.ts';

/** A pool whose lost connections, idle or checked out, are logged (`what` names it) and never crash the process. */
export function createPgPool(config: pg.PoolConfig, logger: Pick<Logger, 'warn'>, what: string): pg.Pool {
  const pool = new pg.Pool(config);
  // Idle clients: pg-pool removes the client and re-emits its error here.
  pool.on('error', (err) =>
    logger.warn({ err: err.message, pool: what }, `${what}: an idle database connection was lost`),
  );
  // Checked-out clients: their user sees the error through their queries; this listener only keeps it from being
  // an unhandled 'error' event.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/** Runs `fn` with one plain client of `url`, connected for it and ended after it (scripts, tools, benchmarks). */
export async function withPgClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // a lost connection fails the query in flight; it must not end the process
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs `fn` in a transaction on a connection of `pool`: committed when it resolves, rolled back when it throws. */
export async function inPgTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('begin');
    const out = await fn(c);
    await c.query('commit');
    return out;
  } catch (err) {
    await c.query('rollback').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}
