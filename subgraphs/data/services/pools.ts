// Connections of the data API. Every connection logs in AS its project's own role (so no statement can reset its
// way back to the platform's role, and a connection never serves another project). They share one budget
// (TESSERA_DATA_MAX_CONNECTIONS) instead of a fixed number of per-project pools: a project holds up to
// TESSERA_DATA_POOL_SIZE connections, and when the budget is spent, the connection idle the longest (whatever its
// project) is closed to make room. With many quiet projects, each keeps its one warm connection as long as the
// budget allows; a busy project grows while the quiet ones' idle connections go first. Idle connections close
// after 30 s. A connection sends nothing but its role and password: its search path and timeouts are the role's own
// settings in this database (see provisioning.ts), and a connection that answered a statement error stays open.
import pg from 'pg';
import { errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { ProjectRole } from './provisioning.ts';

const INT8 = 20;
const NUMERIC = 1700;
const IDLE_TIMEOUT_MS = 30_000;

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

/** What runs SQL: a project's pool (one statement on any of its connections) or one checked-out connection. */
export type Db = {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(query: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult<R>>;
};
/** A checked-out connection: give it back with `release` (`true`: it is broken or in an unknown state, close it). */
export type ProjectClient = Db & { release(destroy?: boolean): void };
export type ProjectPool = Db & { connect(): Promise<ProjectClient> };
export type ProjectPools = ReturnType<typeof createProjectPools>;

type Project = { id: string; role: ProjectRole; open: number; idle: Conn[]; closed: boolean; pool: ProjectPool };
type Conn = { client: pg.Client; project: Project; idleSince: number; broken: boolean };
type Waiter = { project: Project; resolve: (c: Conn) => void; reject: (err: Error) => void };

/**
 * Whether a connection that answered `err` can serve the next statement: a statement error from the server
 * (it ran outside a transaction, or its transaction was rolled back) leaves the session as it was; a lost or
 * terminated connection does not.
 */
function survives(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError)) return false;
  const code = err.code ?? '';
  return !(code.startsWith('08') || code.startsWith('57P') || code.startsWith('XX') || code === '25P03');
}

/** The connection budget on a server with `maxConnections`, of which `reserve` are left to others (at least 10). */
export function budgetFor(configured: number, maxConnections: number, reserve: number): number {
  return Math.min(configured, Math.max(10, maxConnections - reserve));
}

/** Creates the connection budget for `databaseUrl`'s server and database. */

export function createProjectPools(opts: { databaseUrl: string; maxConnections: number; size: number; logger: Logger }) {
  let budget = opts.maxConnections;
  const projects = new Map<string, Project>();
  /** Every idle connection, the one idle the longest first (a Set keeps insertion order). */
  const idle = new Set<Conn>();
  const waiters: Waiter[] = [];
  const closing = new Set<Promise<void>>();
  let total = 0; // open and opening connections
  let stopped = false;
  const base = new URL(opts.databaseUrl);

  const close = (c: Conn): void => {
    idle.delete(c);
    const i = c.project.idle.indexOf(c);
    if (i >= 0) c.project.idle.splice(i, 1);
    total--;
    c.project.open--;
    forget(c.project);
    const done = c.client
      .end()
      .catch(() => {})
      .finally(() => closing.delete(done));
    closing.add(done);
  };

  /** A project with nothing open and nobody waiting is dropped from the map (thousands of projects stay cheap). */
  const forget = (p: Project): void => {
    if (p.open === 0 && projects.get(p.id) === p && !waiters.some((w) => w.project === p)) projects.delete(p.id);
  };

  const connect = async (p: Project): Promise<Conn> => {
    const url = new URL(base);
    url.username = encodeURIComponent(p.role.roleName);
    url.password = encodeURIComponent(p.role.password);
    const client = new pg.Client({
      connectionString: url.toString(),
      types,
      application_name: 'tessera-data',
    });
    const c: Conn = { client, project: p, idleSince: 0, broken: false };
    client.on('error', (err) => {
      c.broken = true;
      if (idle.has(c)) {
        opts.logger.warn({ err: err.message, project: p.id }, 'data: idle project connection failed');
        close(c);
        pump();
      }
    });
    await client.connect();
    return c;
  };

  /** Opens a connection for `p` (its slot already counted) and hands it to `resolve`; a failure frees the slot. */
  const open = (p: Project, resolve: (c: Conn) => void, reject: (err: Error) => void): void => {
    total++;
    p.open++;
    connect(p).then(
      (c) => {
        if (p.closed || stopped) {
          close(c);
          reject(errors.unavailable('The project was deleted'));
        } else resolve(c);
      },
      (err: Error) => {
        total--;
        p.open--;
        forget(p);
        reject(err);
        pump();
      },
    );
  };

  /** Room was made (a connection closed): serve the first waiter that may open one. */
  const pump = (): void => {
    while (waiters.length > 0) {
      const i = waiters.findIndex((w) => w.project.open < opts.size);
      if (i < 0) return;
      if (total >= budget) {
        const oldest = idle.values().next().value;
        if (!oldest) return;
        close(oldest);
      }
      const [w] = waiters.splice(i, 1);
      open(w!.project, w!.resolve, w!.reject);
    }
  };

  const acquire = (p: Project): Promise<Conn> => {
    if (!p.closed && !projects.has(p.id)) projects.set(p.id, p); // forgotten while it had nothing open
    const c = p.idle.pop(); // the most recently used: the warmest, and the others may age out
    if (c) {
      idle.delete(c);
      return Promise.resolve(c);
    }
    return new Promise<Conn>((resolve, reject) => {
      if (stopped) return reject(errors.unavailable('The data service is stopping'));
      if (p.open < opts.size) {
        if (total < budget) return open(p, resolve, reject);
        const oldest = idle.values().next().value; // another project's: this one has none idle
        if (oldest) {
          close(oldest);
          return open(p, resolve, reject);
        }
      }
      waiters.push({ project: p, resolve, reject });
    });
  };

  const release = (c: Conn, destroy: boolean): void => {
    const p = c.project;
    if (destroy || c.broken || p.closed || stopped) {
      close(c);
      pump();
      return;
    }
    const mine = waiters.findIndex((w) => w.project === p);
    if (mine >= 0) {
      const [w] = waiters.splice(mine, 1);
      w!.resolve(c);
      return;
    }
    if (waiters.some((w) => w.project.open < opts.size)) {
      // Another project is waiting for room in the budget: this connection makes it.
      close(c);
      pump();
      return;
    }
    c.idleSince = Date.now();
    p.idle.push(c);
    idle.add(c);
  };

  const checkout = (c: Conn): ProjectClient => {
    let released = false;
    return {
      query: (q, values) => c.client.query(q as string, values),
      release: (destroy = false) => {
        if (released) return;
        released = true;
        release(c, destroy);
      },
    } as ProjectClient;
  };

  const projectOf = (role: ProjectRole): Project => {
    const p = projects.get(role.projectId);
    if (p && p.role.roleName === role.roleName && p.role.password === role.password) return p;
    if (p) p.closed = true; // re-provisioned: its connections close as they come back
    const created: Project = {
      id: role.projectId,
      role,
      open: 0,
      idle: [],
      closed: false,
      pool: {
        query: async (q, values) => {
          const c = await acquire(created);
          try {
            const res = await c.client.query(q as string, values);
            release(c, false);
            return res;
          } catch (err) {
            release(c, !survives(err));
            throw err;
          }
        },
        connect: async () => checkout(await acquire(created)),
      } as ProjectPool,
    };
    if (p) for (const c of [...p.idle]) close(c);
    projects.set(role.projectId, created);
    return created;
  };

  const sweep = setInterval(() => {
    const before = Date.now() - IDLE_TIMEOUT_MS;
    for (const c of idle) {
      if (c.idleSince > before) break;
      close(c);
    }
  }, 5_000);
  sweep.unref();

  return {
    /** The connection budget in force (TESSERA_DATA_MAX_CONNECTIONS, or less when the server allows fewer). */
    budget: () => budget,
    /** Lowers (or restores) the budget; connections above it close as they become idle. */
    setBudget(n: number): void {
      budget = Math.max(1, Math.min(n, opts.maxConnections));
    },
    /** The project's pool (its connections are opened on demand, within the budget). */
    get(role: ProjectRole): ProjectPool {
      return projectOf(role).pool;
    },
    /** Closes the project's connections (project deleted): idle ones now, busy ones when they come back. */
    async close(projectId: string): Promise<void> {
      const p = projects.get(projectId);
      if (p) {
        p.closed = true;
        for (const c of [...p.idle]) close(c);
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (waiters[i]!.project === p) waiters.splice(i, 1)[0]!.reject(errors.unavailable('The project was deleted'));
        }
        projects.delete(projectId);
      }
      await Promise.all([...closing]);
    },
    /** Connections open (and opening), and how many of them are idle. */
    stats: () => ({ open: total, idle: idle.size, projects: projects.size, waiting: waiters.length }),
    async closeAll(): Promise<void> {
      stopped = true;
      clearInterval(sweep);
      for (const w of waiters.splice(0)) w.reject(errors.unavailable('The data service is stopping'));
      for (const p of projects.values()) p.closed = true;
      for (const c of [...idle]) close(c);
      await Promise.all([...closing]);
    },
  };
}
