// Connections of the data API. Every connection logs in AS its project's own role (so no statement can reset its
// way back to the platform's role, and a connection never serves another project). They share one budget
// (TESSERA_DATA_MAX_CONNECTIONS) instead of a fixed number of per-project pools: a project holds up to
// TESSERA_DATA_POOL_SIZE connections, and when the budget is spent, the connection idle the longest (whatever its
// project) is closed to make room. With many quiet projects, each keeps its one warm connection as long as the
// budget allows; a busy project grows while the quiet ones' idle connections go first. Idle connections close
// after 30 s. A connection sends nothing but its role and password: its search path and timeouts are the role's own
// settings in its database (see provisioning.ts), and a connection that answered a statement error stays open.
// The statements the data API builds run as named statements on a pool's connections (parsed and planned once per
// connection, then only bound: see MAX_PREPARED_PER_CONNECTION); a connection where the project's own SQL ran after
// them is closed rather than reused.
// Each project has a database of its own: a connection reaches only its project's database.
//
// Limits a project cannot lift: the statement timeout is the role's setting, which the project's own code could
// change on its session, so the pool also cancels any statement running past it (plus a second) itself, and a
// session that ran rawSQL is reset (RESET ALL) before it serves again. A request waiting for a connection of a busy
// project waits at most TESSERA_DATA_POOL_WAIT_MS, then gets 503 with Retry-After; the role's CONNECTION LIMIT caps
// what all instances together may open.
//
// Fair shares (see docs/architecture.md "Fair shares of the shared database"): a project holds at most its plan's
// max_database_connections (never more than TESSERA_DATA_POOL_SIZE); when the budget is contended, the next
// connection goes to the waiting project holding the fewest (./fair-share.ts), so a project under its fair share is
// served before one at or above it; and the time each project's statements take is booked per project over a sliding
// minute: past the plan's database_cpu_seconds_per_minute a request is refused with 429 before it takes a connection.
import pg from 'pg';
import Cursor from 'pg-cursor';
import { AppError, errors, isDatabaseUnavailable } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { PlanLimitValues } from '../../../platform/plan-limits.ts';
import { createStatementClock, nextWaiter } from './fair-share.ts';
import type { ProjectRole } from './provisioning.ts';
import { awayFromLane } from '../../../platform/request-lane.ts';
import { LONG_STATEMENT_MS, type BackendPriority } from './backend-priority.ts';

/**
 * The project's server refused or dropped a new connection (stopped, restarting, out of slots): 503 with Retry-After.
 * Said here, not left to the error renderer: the socket's error may come from another realm than the GraphQL
 * executor's (a test runner's sandbox), which then sees a non-Error and masks it as a 500.
 */
function serverUnavailable(cause: Error): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    "The project's database server is unavailable; retry shortly",
    { retry_after: 1, reason: 'server_unavailable' },
    { cause },
  );
}

/**
 * Longest a new connection may take to log in. A project server that accepts the TCP connection and never answers
 * (hung, or its host gone behind a still-open port) would otherwise hold the request, and a slot of the budget,
 * for as long as the socket lives: after this its projects answer 503 (serverUnavailable) and the slot is free.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

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
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    query: string | pg.QueryConfig,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
};
/**
 * A checked-out connection: give it back with `release` (`true`: it is broken or in an unknown state, close it;
 * `'reset'`: the project's own SQL ran on it, reset its session first).
 */
export type ProjectClient = Db & {
  release(how?: boolean | 'reset'): void;
  /** Runs one statement through a cursor, reading at most `maxRows` rows and about `maxBytes` bytes: more is a 413. */
  readLimited(text: string, values: unknown[], limits: ResultLimits): Promise<LimitedResult>;
};
export type ResultLimits = { maxRows: number; maxBytes: number };
export type LimitedResult = {
  rows: Record<string, unknown>[];
  rowCount: number | null;
  /** The statement's command tag (`SELECT`, `INSERT`, `CREATE`, ...). */
  command?: string | null;
  fields: { name: string; dataTypeID: number }[];
};

const CURSOR_BATCH = 500;

/** About how many bytes a row takes as JSON (cheap: strings by length, objects by their JSON). */
function sizeOf(row: Record<string, unknown>): number {
  let n = 2;
  for (const k in row) {
    const v = row[k];
    n += k.length + 4;
    if (typeof v === 'string') n += v.length;
    else if (v === null || typeof v !== 'object') n += 8;
    else if (Buffer.isBuffer(v)) n += v.length * 2;
    else n += JSON.stringify(v)?.length ?? 4;
  }
  return n;
}
export type ProjectPool = Db & { connect(): Promise<ProjectClient> };
export type ProjectPools = ReturnType<typeof createProjectPools>;
/** What reaches a project's pool by its role: one server's pools, or the fleet's (fleet.ts `createFleetPools`). */
export type RolePools = Pick<ProjectPools, 'get'>;

type Project = {
  id: string;
  role: ProjectRole;
  open: number;
  idle: Conn[];
  closed: boolean;
  pool: ProjectPool;
  /** Its open connections (for the time of statements still running). */
  conns: Set<Conn>;
  /**
   * Until when its statements start at the lowered CPU priority (backend-priority.ts): it ran a long statement (one
   * that used LONG_STATEMENT_MS of CPU time) within the last HEAVY_MS. A project running heavy statements back to
   * back would otherwise take the CPU at full priority for the first LONG_STATEMENT_MS of each.
   */
  heavyUntil: number;
};
/**
 * `busySince`: when the statement on the wire was sent (0: none); `cancelled`: the `busySince` a cancel was sent for;
 * `prepared`: the named statements this connection's server session has parsed and keeps (see `run`).
 */
type Conn = {
  client: pg.Client;
  project: Project;
  idleSince: number;
  broken: boolean;
  busySince: number;
  cancelled: number;
  prepared: Set<string>;
  /** Its backend's CPU priority was lowered for a long statement (backend-priority.ts). */
  lowered: boolean;
  /**
   * The CPU time of its backend (ms) when the watch first saw the statement of `cpuFor` (its `busySince`) running, and
   * when it was last read; `cpuFor` is -`busySince` once that statement was found long (nothing more to read).
   */
  cpuAt: number;
  cpuFor: number;
  cpuReadAt: number;
};
type Waiter = {
  projectId: string;
  project: Project;
  resolve: (c: Conn) => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
  /**
   * A connection is being opened for this request: it waits in line too and takes whichever comes first, a connection
   * its project releases or the new one (which, if not needed by then, goes to the next waiter or idle). Without a
   * timer: the open ends its wait (CONNECT_TIMEOUT_MS at most), as when the request waited for the open alone.
   */
  opening?: boolean;
};

/** The plan limits the pools enforce, read without a round trip when known (platform/plan-limits.ts's reader). */
export type PoolPlanLimits = {
  peek: (projectId: string) => PlanLimitValues | null | undefined;
  get: (projectId: string) => Promise<PlanLimitValues | null>;
};

/**
 * Named statements a connection keeps at most. A statement the data API builds may carry a name (`QueryConfig.name`,
 * derived from its text): on a pool's single statement it is parsed and planned once per connection and only bound
 * and executed after that, which halves what PostgreSQL spends on a short find or insert. Past this many distinct
 * statements on one connection the others run unnamed (a project cannot grow its sessions' memory without bound);
 * a connection closes after 30 s idle, and its statements with it. On a checked-out connection (transactions, end
 * users under RLS, rawSQL) statements always run unnamed.
 */
export const MAX_PREPARED_PER_CONNECTION = 32;

/**
 * Whether a named statement's error may come from the session's copy being stale or gone rather than from the
 * statement: its parameters' types were fixed when it was parsed, so a column whose type changed since (through
 * another instance, before this one's catalog heard of it) fails as bad input (class 22) or a type mismatch (42);
 * a changed result type fails with 0A000 ("cached plan must not change result type"); the project's own SQL may have
 * dropped (26000) or taken (42P05) its name. The pool then runs the same statement once more, unnamed, on the same
 * connection (a single statement that failed had no effect): if that succeeds the named copy was stale and the
 * connection is closed with it; if it fails, that is the statement's own error and the connection stays.
 */
function mayBeStale(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError)) return false;
  const code = err.code ?? '';
  return code.startsWith('22') || code.startsWith('42') || code === '26000' || code === '0A000';
}

const unnamed = (q: string | pg.QueryConfig): string | pg.QueryConfig =>
  typeof q === 'object' && q.name ? { ...q, name: undefined } : q;

/** How long past the statement timeout the pool waits before it cancels a statement itself. */
const CANCEL_GRACE_MS = 1000;
/**
 * How often the watch looks at statements in flight (the timeout, and long statements). Short, because a long
 * statement takes the CPU at the default priority until the watch finds it: with 25 ms and a first CPU reading after
 * 100 ms, a neighbour's six heavy statements starting together each kept the default priority for 100-400 ms and
 * held the machine's two cores for seconds (bench N1's scheduler trace, 2026-12-07).
 */
const WATCH_INTERVAL_MS = 10;
/**
 * How often the watch reads the CPU time of a statement's backend: every look during its first
 * CPU_READ_SLOW_AFTER_MS (a long statement is found within a look or two of using LONG_STATEMENT_MS), then less
 * often (a statement that has run that long without using the CPU is waiting: a lock, a sleep, I/O).
 */
const CPU_READ_INTERVAL_MS = 50;
const CPU_READ_SLOW_AFTER_MS = 100;
/** How long a project that ran a long statement has its next statements start at the lowered priority. */
const HEAVY_MS = 10_000;

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

/**
 * How many connections the server would be short of if this instance filled its budget (0: it fits), counting what
 * is already open there: the other processes of the install (other data instances' project connections included)
 * and other clients. One instance cannot see the others' budgets, only what they hold now, so this is a floor.
 */
export function shortfallOf(budget: number, maxConnections: number, reserved: number, openByOthers: number): number {
  return Math.max(0, openByOthers + budget - (maxConnections - reserved));
}

/** Creates the connection budget for `databaseUrl`'s server and database. */

export function createProjectPools(opts: {
  /** The projects' server (each connection's database is its project's own). */
  databaseUrl: string;
  maxConnections: number;
  size: number;
  logger: Logger;
  /** Longest wait for a connection of a busy project before 503 (default 5 s). */
  waitMs?: number;
  /** The statement timeout the pool enforces itself (default 5 s). */
  statementTimeoutMs?: number;
  /** Cancels the statement running on a backend (pg_cancel_backend on a platform connection). */
  cancelBackend?: (pid: number) => Promise<void>;
  /** Each project's plan (max_database_connections, database_cpu_seconds_per_minute); without it: no plan limits. */
  limits?: PoolPlanLimits;
  /** The clock of the statement-time window (tests move it). */
  now?: () => number;
  /** Hears each statement's time booked to a project here (to tell the other processes: statement-time-sharing.ts). */
  onBooked?: (projectId: string, ms: number) => void;
  /** Lowers the CPU priority of backends running long statements (backend-priority.ts); absent: never. */
  priority?: BackendPriority | null;
  /** How long a project that ran a long statement starts its statements lowered (default HEAVY_MS; tests shorten it). */
  heavyMs?: number;
}) {
  const waitMs = opts.waitMs ?? 5000;
  const statementTimeoutMs = opts.statementTimeoutMs ?? 5000;
  /** Every open connection (for the statement watch). */
  const all = new Set<Conn>();
  let budget = opts.maxConnections;
  const projects = new Map<string, Project>();
  /** Every idle connection, the one idle the longest first (a Set keeps insertion order). */
  const idle = new Set<Conn>();
  const waiters: Waiter[] = [];
  const closing = new Set<Promise<void>>();
  let total = 0; // open and opening connections
  let stopped = false;
  const base = new URL(opts.databaseUrl);
  const now = opts.now ?? Date.now;
  const clock = createStatementClock(now);

  /**
   * The project's plan as known now, without waiting: unknown, it is asked in the background and this request goes
   * by the configured limits (a single well-behaved project never waits for its plan).
   */
  const planOf = (p: Project): PlanLimitValues | null => {
    if (!opts.limits) return null;
    const known = opts.limits.peek(p.id);
    if (known !== undefined) return known;
    opts.limits.get(p.id).catch(() => {});
    return null;
  };
  /** Most connections the project may hold: its plan's, never more than TESSERA_DATA_POOL_SIZE. */
  const capOf = (p: Project): number => Math.min(planOf(p)?.maxDatabaseConnections ?? opts.size, opts.size);
  /** Time (ms) of the project's statements running now. */
  const runningOf = (p: Project): number => {
    let ms = 0;
    const t = now();
    for (const c of p.conns) if (c.busySince > 0) ms += t - c.busySince;
    return ms;
  };
  /** Books the statement that just ended on `c` to its project's time. */
  const book = (c: Conn): void => {
    if (c.busySince > 0) {
      const ms = now() - c.busySince;
      clock.add(c.project.id, ms);
      opts.onBooked?.(c.project.id, ms);
    }
    c.busySince = 0;
  };
  /** RATE_LIMITED when the project's statements took its plan's time in the last minute (running ones included). */
  const checkTime = (p: Project): void => {
    const seconds = planOf(p)?.databaseCpuSecondsPerMinute;
    if (seconds === null || seconds === undefined) return;
    const over = clock.over(p.id, seconds * 1000, runningOf(p));
    if (!over) return;
    throw new AppError(
      'RATE_LIMITED',
      `The project's plan allows ${seconds} s of database statement time per minute (database_cpu_seconds_per_minute); it is used up: retry after ${over.retryAfter} s, or ask the operator to raise the limit`,
      {
        retry_after: over.retryAfter,
        limit: 'database_cpu_seconds_per_minute',
        max: seconds,
        used: Math.round(over.usedMs) / 1000,
      },
    );
  };

  const close = (c: Conn): void => {
    all.delete(c);
    c.project.conns.delete(c);
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

  /**
   * The waiter to serve next (fewest connections held first, FIFO within a project; see fair-share.ts): with `released`,
   * the one that gets a connection `released` hands on (any of its own project's, or one of another project's that
   * room is made for); without, the one a new connection is opened for. A waiter of another project whose connection
   * is opening already needs no room.
   */
  const next = (released?: Project): number =>
    nextWaiter(
      waiters,
      (w) => (w.project === released ? w.project.open - 1 : w.project.open),
      (w) => w.project === released || (!w.opening && w.project.open < capOf(w.project)),
    );

  const connect = async (p: Project): Promise<Conn> => {
    const url = new URL(base);
    url.username = encodeURIComponent(p.role.roleName);
    url.password = encodeURIComponent(p.role.password);
    url.pathname = `/${encodeURIComponent(p.role.databaseName)}`;
    const client = new pg.Client({
      connectionString: url.toString(),
      types,
      application_name: 'tessera-data',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    const c: Conn = {
      client,
      project: p,
      idleSince: 0,
      broken: false,
      busySince: 0,
      cancelled: 0,
      prepared: new Set(),
      lowered: false,
      cpuAt: 0,
      cpuFor: 0,
      cpuReadAt: 0,
    };
    client.on('error', (err) => {
      c.broken = true;
      if (idle.has(c)) {
        opts.logger.warn({ err: err.message, project: p.id }, 'data: idle project connection failed');
        close(c);
        pump();
      }
    });
    await client.connect();
    all.add(c);
    p.conns.add(c);
    return c;
  };

  const pidOf = (c: Conn): number | null => (c.client as unknown as { processID: number | null }).processID;
  /**
   * Whether another project has a statement in flight on this server now: the only time lowering a backend serves
   * anyone. A project alone keeps its statements at the default priority whatever they cost, so on a machine busy with
   * other work (a build, another service) its long statement is not starved into its timeout by the lowering meant for
   * its neighbours. Read only where a statement is about to be lowered (rare): one pass over the connections.
   */
  const othersBusy = (project: Project): boolean => {
    for (const o of all) if (o.busySince > 0 && o.project !== project) return true;
    return false;
  };
  /**
   * A statement starts on `c`: its start is noted (statement time, the timeout), and its backend runs at the lowered
   * priority from the start while its project is heavy and another project has a statement in flight, at the default
   * one otherwise.
   */
  const startStatement = (c: Conn): void => {
    c.busySince = Date.now();
    if (!opts.priority) return;
    const heavy = c.project.heavyUntil > c.busySince && (c.lowered || othersBusy(c.project));
    if (heavy === c.lowered) return;
    const pid = pidOf(c);
    if (!pid) return;
    if (heavy) c.lowered = opts.priority.lower(pid);
    else if (opts.priority.restore(pid)) c.lowered = false;
    else c.broken = true; // may not raise it again here: closed when it comes back
  };

  /** Reads a statement's rows through a cursor within `limits` (see ProjectClient.readLimited). */
  const readLimited = async (
    c: Conn,
    text: string,
    values: unknown[],
    limits: ResultLimits,
  ): Promise<LimitedResult> => {
    startStatement(c);
    const cursor = c.client.query(new Cursor(text, values, { types }));
    const rows: Record<string, unknown>[] = [];
    let bytes = 0;
    let result: pg.QueryResult | undefined;
    // After a server error the cursor has already sent its Sync: closing it then would wait for an answer that came.
    let failed = false;
    try {
      for (;;) {
        const want = Math.min(CURSOR_BATCH, limits.maxRows + 1 - rows.length);
        const batch = await awayFromLane(
          () =>
            new Promise<Record<string, unknown>[]>((resolve, reject) =>
              cursor.read(want, (err, r, res) => {
                if (err) {
                  failed = true;
                  return reject(err);
                }
                result = res;
                resolve(r);
              }),
            ),
        );
        for (const r of batch) {
          rows.push(r);
          bytes += sizeOf(r);
        }
        if (rows.length > limits.maxRows) {
          throw new AppError(
            'PAYLOAD_TOO_LARGE',
            `The statement answers more than ${limits.maxRows} rows (TESSERA_DATA_MAX_ROWS); it was rolled back: add a LIMIT or page with OFFSET`,
            {
              limit: 'TESSERA_DATA_MAX_ROWS',
              max: limits.maxRows,
            },
          );
        }
        if (bytes > limits.maxBytes) {
          throw new AppError(
            'PAYLOAD_TOO_LARGE',
            `The statement answers more than ${limits.maxBytes} bytes (TESSERA_DATA_MAX_RESULT_BYTES); it was rolled back: select fewer columns or rows`,
            {
              limit: 'TESSERA_DATA_MAX_RESULT_BYTES',
              max: limits.maxBytes,
            },
          );
        }
        if (batch.length < want) break;
      }
    } finally {
      if (!failed) await cursor.close().catch(() => {});
      book(c);
    }
    // A SELECT's command tag counts the rows of its last fetch only; a write's counts them all.
    const rowCount = !result || result.command === 'SELECT' ? rows.length : result.rowCount;
    return {
      rows,
      rowCount,
      command: result?.command ?? null,
      fields: (result?.fields ?? []) as LimitedResult['fields'],
    };
  };

  /**
   * Runs one statement on `c`, watched by the statement timeout. A named statement keeps its name only with `named`
   * (a pool's single statement) and while the connection has room for it (MAX_PREPARED_PER_CONNECTION).
   */
  const run = async (
    c: Conn,
    q: string | pg.QueryConfig,
    values?: unknown[],
    named = false,
  ): Promise<pg.QueryResult> => {
    const name = typeof q === 'object' ? q.name : undefined;
    if (name && !(named && (c.prepared.has(name) || c.prepared.size < MAX_PREPARED_PER_CONNECTION))) q = unnamed(q);
    startStatement(c);
    try {
      // The request's turn at the front door does not count while its statement runs (platform/request-lane.ts).
      const res = await awayFromLane(() => c.client.query(q as string, values));
      if (name && typeof q === 'object' && q.name) c.prepared.add(name);
      return res;
    } finally {
      book(c);
    }
  };

  /**
   * A request waiting for a connection of a project whose connections were closed (deleted, or moved to another server:
   * the request may be sent again at once, and then reaches the project where it lives now).
   */
  const closedUnderfoot = (): AppError =>
    new AppError(
      'SERVICE_UNAVAILABLE',
      "The project's connections were closed (the project was deleted or moved to another server); retry",
      { retry_after: 1 },
    );

  /** Opens a connection for `p` (its slot already counted) and hands it to `resolve`; a failure frees the slot. */
  const open = (p: Project, resolve: (c: Conn) => void, reject: (err: Error) => void): void => {
    total++;
    p.open++;
    connect(p).then(
      (c) => {
        if (p.closed || stopped) {
          close(c);
          reject(closedUnderfoot());
        } else resolve(c);
      },
      (err: Error) => {
        total--;
        p.open--;
        forget(p);
        // pg's own connect timeout says only "timeout expired".
        reject(isDatabaseUnavailable(err) || err.message === 'timeout expired' ? serverUnavailable(err) : err);
        pump();
      },
    );
  };

  /**
   * Opens a connection for a request of `p` that found none idle, the request waiting in line meanwhile (a Waiter
   * `opening`): opening one costs the server a new backend (a fork and a login, 100-200 ms on a busy machine, bench N1),
   * while the project's busy connections are often released within milliseconds, so the request takes whichever comes
   * first, as HikariCP's pool does. The new connection then serves the next waiter (or goes idle); a failed open fails
   * the request that asked for it if it still waits.
   */
  const openFor = (p: Project, resolve: (c: Conn) => void, reject: (err: Error) => void): void => {
    const w: Waiter = { projectId: p.id, project: p, resolve, reject, opening: true };
    waiters.push(w);
    const waiting = (): number => waiters.indexOf(w);
    open(
      p,
      (c) => {
        const i = waiting();
        if (i >= 0) take(i).resolve(c);
        else release(c, false);
      },
      (err) => {
        const i = waiting();
        if (i >= 0) take(i).reject(err);
        forget(p);
      },
    );
  };

  /** Room was made (a connection closed): serve the next waiter that may open one (fair-share.ts). */
  const pump = (): void => {
    while (waiters.length > 0) {
      const i = next();
      if (i < 0) return;
      if (total >= budget) {
        const oldest = idle.values().next().value;
        if (!oldest) return;
        close(oldest);
      }
      const w = take(i);
      open(w.project, w.resolve, w.reject);
    }
  };

  const acquire = (p: Project): Promise<Conn> => {
    if (!p.closed && !projects.has(p.id)) projects.set(p.id, p); // forgotten while it had nothing open
    try {
      checkTime(p);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const c = p.idle.pop(); // the most recently used: the warmest, and the others may age out
    if (c) {
      idle.delete(c);
      return Promise.resolve(c);
    }
    return new Promise<Conn>((resolve, reject) => {
      if (stopped) return reject(errors.unavailable('The data service is stopping'));
      if (p.open < capOf(p)) {
        let room = total < budget;
        const oldest = room ? undefined : idle.values().next().value; // another project's: this one has none idle
        if (oldest) {
          close(oldest);
          room = true;
        }
        if (room) return openFor(p, resolve, reject);
      }
      const w: Waiter = { projectId: p.id, project: p, resolve, reject };
      w.timer = setTimeout(() => {
        const i = waiters.indexOf(w);
        if (i < 0) return;
        waiters.splice(i, 1);
        forget(p);
        reject(busy(p));
      }, waitMs);
      w.timer.unref();
      waiters.push(w);
    });
  };

  const busy = (p: Project) => {
    const cap = capOf(p);
    const byPlan = cap < opts.size;
    return new AppError(
      'SERVICE_UNAVAILABLE',
      byPlan
        ? `The project's database connections are all busy (its plan allows ${cap} at once, max_database_connections; the operator can raise it); retry in a moment`
        : `The project's database connections are all busy (at most ${cap} per project, or the server's connections are shared by many projects right now); retry in a moment`,
      { retry_after: 1, limit: byPlan ? 'max_database_connections' : 'TESSERA_DATA_POOL_SIZE', max: cap },
    );
  };

  /** Takes a waiter off the queue (its timer stopped). */
  const take = (i: number): Waiter => {
    const [w] = waiters.splice(i, 1);
    clearTimeout(w!.timer);
    return w!;
  };

  const release = (c: Conn, how: boolean | 'reset'): void => {
    const p = c.project;
    if (c.lowered && how !== true && !c.broken && p.heavyUntil <= Date.now()) {
      // Back to the default priority for the next statement, or closed where this process may not raise it again. A
      // heavy project's connection stays lowered (its next statement would be lowered at once).
      const pid = pidOf(c);
      if (pid && opts.priority?.restore(pid)) c.lowered = false;
      else how = true;
    }
    if (how === true || c.broken || p.closed || stopped) {
      close(c);
      pump();
      return;
    }
    if (how === 'reset' && c.prepared.size > 0) {
      // The project's own SQL ran where the pool's named statements live: it may have dropped or replaced them
      // (DEALLOCATE, PREPARE), and the driver would still bind them by name. Such a connection is not reused.
      close(c);
      pump();
      return;
    }
    if (how === 'reset') {
      // The project's own SQL may have changed session settings (its statement timeout, its role, ...): back to the
      // role's defaults before anything else runs here. A failed reset closes the connection.
      run(c, 'reset all').then(
        () => release(c, false),
        () => release(c, true),
      );
      return;
    }
    if (p.open > capOf(p)) {
      // Its plan allows fewer connections now (an operator lowered it): this one goes.
      close(c);
      pump();
      return;
    }
    const i = waiters.length > 0 ? next(p) : -1;
    if (i >= 0 && waiters[i]!.project === p) {
      take(i).resolve(c);
      return;
    }
    if (i >= 0) {
      // A project holding fewer connections is waiting (for room in the budget): this connection makes it.
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
      query: (q, values) => run(c, q as string, values),
      readLimited: (text, values, limits) => readLimited(c, text, values, limits),
      release: (how = false) => {
        if (released) return;
        released = true;
        release(c, how);
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
      conns: new Set(),
      heavyUntil: 0,
      pool: {
        query: async (q, values) => {
          const c = await acquire(created);
          try {
            const res = await run(c, q as string, values, true);
            release(c, false);
            return res;
          } catch (err) {
            if (typeof q === 'object' && q.name && mayBeStale(err)) {
              let res: pg.QueryResult;
              try {
                res = await run(c, unnamed(q), values);
              } catch (again) {
                release(c, !survives(again));
                throw again;
              }
              release(c, true); // its named copy is stale: the connection goes with it
              return res;
            }
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
    clock.sweep();
  }, 5_000);
  sweep.unref();

  /**
   * Long statements yield the CPU: a statement that has used LONG_STATEMENT_MS of CPU time since the watch first saw it
   * running makes its project heavy for a while (its next statements start lowered) and is lowered itself, while
   * another project has a statement in flight (othersBusy; alone it is looked at again at the next read). Its time
   * on the clock alone says nothing (waiting for a lock, a sleep or a CPU on a busy machine takes nothing from anyone).
   * The CPU time is read once a statement has run WATCH_INTERVAL_MS (most never do), then at every look during its
   * first CPU_READ_SLOW_AFTER_MS and every CPU_READ_INTERVAL_MS after that.
   */
  const longStatement = (c: Conn, now: number): void => {
    if (c.cpuFor === -c.busySince) {
      c.project.heavyUntil = now + (opts.heavyMs ?? HEAVY_MS);
      return;
    }
    const pid = pidOf(c);
    if (!pid) return;
    if (c.cpuFor !== c.busySince) {
      if (now - c.busySince < WATCH_INTERVAL_MS) return;
      c.cpuFor = c.busySince;
      c.cpuAt = opts.priority!.cpuMs(pid);
      c.cpuReadAt = now;
      return;
    }
    if (c.busySince < now - CPU_READ_SLOW_AFTER_MS && now - c.cpuReadAt < CPU_READ_INTERVAL_MS) return;
    c.cpuReadAt = now;
    if (!(opts.priority!.cpuMs(pid) - c.cpuAt >= LONG_STATEMENT_MS)) return;
    c.project.heavyUntil = now + (opts.heavyMs ?? HEAVY_MS);
    // Alone on the server, it keeps its priority and is looked at again (another project may start meanwhile).
    if (!c.lowered && !othersBusy(c.project)) return;
    c.cpuFor = -c.busySince;
    if (!c.lowered) c.lowered = opts.priority!.lower(pid);
  };

  // The statement timeout, enforced here whatever the session's own setting says; and long statements yield the CPU.
  const watch = setInterval(() => {
    const now = Date.now();
    const late = now - statementTimeoutMs - CANCEL_GRACE_MS;
    for (const c of all) {
      if (opts.priority && c.busySince > 0) longStatement(c, now);
      if (c.busySince === 0 || c.busySince > late || c.cancelled === c.busySince) continue;
      c.cancelled = c.busySince;
      const pid = pidOf(c);
      if (!opts.cancelBackend || !pid) continue;
      opts.logger.warn(
        { project: c.project.id, pid },
        'data: a statement ran past the statement timeout; cancelled by the pool',
      );
      opts.cancelBackend(pid).catch((err: Error) => {
        opts.logger.warn(
          { err: err.message, project: c.project.id },
          'data: could not cancel a statement past the timeout; closing its connection',
        );
        c.broken = true;
        void c.client.end().catch(() => {});
      });
    }
  }, WATCH_INTERVAL_MS);
  watch.unref();

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
          if (waiters[i]!.project === p) take(i).reject(closedUnderfoot());
        }
        projects.delete(projectId);
      }
      await Promise.all([...closing]);
    },
    /** Connections open (and opening), and how many of them are idle. */
    stats: () => ({ open: total, idle: idle.size, projects: projects.size, waiting: waiters.length }),
    /** Books statement time another process spent for the project (at `at`, its clock). */
    addRemoteTime(projectId: string, ms: number, at: number): void {
      clock.add(projectId, ms, at);
    },
    /** Connections the project holds now (open and opening), and its statement time in the last minute (ms). */
    projectStats(projectId: string): { open: number; statementMs: number } {
      return { open: projects.get(projectId)?.open ?? 0, statementMs: clock.used(projectId) };
    },
    async closeAll(): Promise<void> {
      stopped = true;
      clearInterval(sweep);
      clearInterval(watch);
      while (waiters.length > 0) take(0).reject(errors.unavailable('The data service is stopping'));
      for (const p of projects.values()) p.closed = true;
      for (const c of [...idle]) close(c);
      await Promise.all([...closing]);
    },
  };
}
