// The floor: a plain node:http + pg handler running the same statements as the Tessera path it is
// compared with, on the same database. Anything Tessera adds on top is overhead to explain.
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.FLOOR_POOL ?? 10) });
/** A pool per project database (`?db=`: each project's tables live in a database of its own), as the platform user. */
const pools = new Map<string, pg.Pool>();
function poolOf(db: string | null): pg.Pool {
  if (!db) return pool;
  let p = pools.get(db);
  if (!p) {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${ident(db).slice(1, -1)}`;
    p = new pg.Pool({ connectionString: url.toString(), max: Number(process.env.FLOOR_POOL ?? 10) });
    pools.set(db, p);
  }
  return p;
}
const port = Number(process.env.PORT ?? 0);

type Handler = (req: http.IncomingMessage, url: URL) => Promise<[number, unknown]>;

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A quoted identifier; the floor only checks its shape (Tessera checks it against the live catalog). */
function ident(name: unknown): string {
  if (typeof name !== 'string' || !IDENT.test(name)) throw new Error(`bad identifier: ${String(name)}`);
  return `"${name}"`;
}

async function jsonBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

const routes: Record<string, Handler> = {
  // S1: an authenticated read of one project (session check + project row), as GET /auth/api/v1/projects/:id does.
  'GET /project': async (_req, url) => {
    const sid = url.searchParams.get('sid');
    const tenant = url.searchParams.get('tenant');
    const id = url.searchParams.get('id');
    const s = await pool.query(
      'select 1 as ok from tenant_sessions where id = $1 and tenant_id = $2 and revoked_at is null',
      [sid, tenant],
    );
    if (s.rowCount === 0) return [401, { error: 'unauthenticated' }];
    const r = await pool.query(
      'select id, name, created_at, updated_at from projects where id = $1 and tenant_id = $2',
      [id, tenant],
    );
    if (r.rowCount === 0) return [404, { error: 'not found' }];
    const p = r.rows[0];
    return [200, { project: { id: p.id, name: p.name, created_at: p.created_at, updated_at: p.updated_at } }];
  },
  // P1: POST /find?db=<project database>&schema=p_<hex> with the body of POST /v1/find restricted to equality on one column:
  // `{table, where: {col: value}, limit}` → the same `select * ... where "col" = $1 limit n`.
  'POST /find': async (req, url) => {
    const body = await jsonBody(req);
    const where = Object.entries((body.where ?? {}) as Record<string, unknown>);
    const limit = Number(body.limit ?? 100);
    const clause = where.map(([c], i) => `${ident(c)} = $${i + 1}`).join(' and ');
    const sql = `select * from ${ident(url.searchParams.get('schema'))}.${ident(body.table)}${clause ? ` where ${clause}` : ''} limit ${limit}`;
    const r = await poolOf(url.searchParams.get('db')).query(
      sql,
      where.map(([, v]) => v),
    );
    return [200, { rows: r.rows }];
  },
  // P2: POST /insert?db=<project database>&schema=p_<hex> with the body of POST /v1/insert (one row): `{table, values}` →
  // the same `insert into ... (cols) values ($1, ...) returning *`.
  'POST /insert': async (req, url) => {
    const body = await jsonBody(req);
    const values = Object.entries(body.values as Record<string, unknown>);
    const sql = `insert into ${ident(url.searchParams.get('schema'))}.${ident(body.table)} (${values.map(([c]) => ident(c)).join(', ')}) values (${values.map((_, i) => `$${i + 1}`).join(', ')}) returning *`;
    const r = await poolOf(url.searchParams.get('db')).query(
      sql,
      values.map(([, v]) => v),
    );
    return [201, { count: r.rowCount, rows: r.rows }];
  },
};

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const handler = routes[`${req.method} ${url.pathname}`];
  if (!handler) {
    res.writeHead(404).end();
    return;
  }
  handler(req, url).then(
    ([status, body]) => {
      const text = JSON.stringify(body);
      res
        .writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
        .end(text);
    },
    (err: Error) => res.writeHead(500).end(err.message),
  );
});
server.listen(port, '127.0.0.1', () => {
  const addr = server.address() as { port: number };
  process.stdout.write(`listening ${addr.port}\n`);
});
process.on('SIGTERM', () =>
  server.close(() => void Promise.all([pool, ...pools.values()].map((p) => p.end())).then(() => process.exit(0))),
);
