// The data API's connection budget on a real server: every connection logs in as its own project's role, the
// budget is shared by all projects, the connection idle the longest goes first when it is spent, a project waits
// (a bounded time, then 503) while every connection is busy, and a statement error does not cost the connection.
// Limits the project cannot lift: statements past the timeout are cancelled by the pool whatever the session says,
// a session released for reset gets its settings back, and a cursor read stops past its row or byte limit.
// A request that finds no idle connection takes whichever comes first: one its project releases, or the one opened for
// it (a new backend costs the server a fork and a login, slow on a busy machine; bench N1).
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createLogger } from '../../../platform/logger.ts';
import {
  budgetFor,
  createProjectPools,
  shortfallOf,
  type ProjectPools,
} from '../../../subgraphs/data/services/pools.ts';
import { scramVerifier, type ProjectRole } from '../../../subgraphs/data/services/provisioning.ts';
import { createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/wait-for.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let admin: pg.Client;
let pools: ProjectPools;
const suffix = crypto.randomBytes(4).toString('hex');
let database = '';
const roles: ProjectRole[] = ['a', 'b', 'c'].map((x) => ({
  projectId: `pool-${x}`,
  serverId: 'default',
  get databaseName() {
    return database;
  },
  schemaName: `pool_${x}_${suffix}`,
  roleName: `pool_${x}_${suffix}`,
  userRoleName: `pool_${x}_${suffix}_u`,
  anonRoleName: `pool_${x}_${suffix}_a`,
  anonReady: false,
  password: crypto.randomBytes(24).toString('base64url'),
}));
const [A, B, C] = roles as [ProjectRole, ProjectRole, ProjectRole];

/** Roles logged in to the test database through the data API's connections. */
async function loggedIn(): Promise<string[]> {
  const { rows } = await admin.query<{ usename: string }>(
    `select usename from pg_stat_activity where application_name = 'tessera-data' and datname = current_database() order by usename`,
  );
  return rows.map((r) => r.usename);
}

async function who(role: ProjectRole): Promise<string> {
  return (await pools.get(role).query<{ who: string }>('select current_user::text as who')).rows[0]!.who;
}

beforeAll(async () => {
  db = await createTestDatabase();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  database = (await admin.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
  for (const r of roles) {
    // The verifier the data API stores: few SCRAM iterations, still checked by the server like any password.
    await admin.query(`create role "${r.roleName}" login password '${scramVerifier(r.password)}'`);
    await admin.query(`grant connect on database "${database}" to "${r.roleName}"`);
    await admin.query(`grant "${r.roleName}" to current_user`); // so it may cancel their statements, as the platform role does
  }
  pools = createProjectPools({
    databaseUrl: db.url,
    maxConnections: 2,
    size: 2,
    waitMs: 1500,
    statementTimeoutMs: 500,
    cancelBackend: async (pid) => void (await admin.query('select pg_cancel_backend($1)', [pid])),
    logger: createLogger('silent'),
  });
}, 60_000);

afterAll(async () => {
  await pools?.closeAll();
  for (const r of roles) await admin?.query(`drop role if exists "${r.roleName}"`).catch(() => {});
  await admin?.end();
  await db?.drop();
});

describe('the data connection budget', () => {
  it('logs each project in as its own role, and closes the connection idle the longest when the budget is spent', async () => {
    expect(await who(A)).toBe(A.roleName);
    expect(await who(B)).toBe(B.roleName);
    expect(pools.stats()).toMatchObject({ open: 2, idle: 2 });
    expect(await who(C)).toBe(C.roleName); // A's connection was idle the longest
    expect(pools.stats()).toMatchObject({ open: 2, idle: 2 });
    // The closed backend ends a moment after the pool lets it go.
    await waitFor(async () => (await loggedIn()).length === 2, { timeoutMs: 15_000, message: "A's backend to end" });
    expect(await loggedIn()).toEqual([B.roleName, C.roleName].sort());
  });

  it('makes a project wait while every connection is busy, and serves it when one comes back', async () => {
    const b = await pools.get(B).connect();
    const c = await pools.get(C).connect();
    let answered = false;
    const waiting = who(A).then((w) => {
      answered = true;
      return w;
    });
    await waitFor(() => pools.stats().waiting === 1, { timeoutMs: 15_000, message: 'A to queue for a connection' });
    expect(answered).toBe(false);
    b.release(); // B has nobody waiting: its connection is closed to make room for A
    expect(await waiting).toBe(A.roleName);
    c.release();
    expect(pools.stats()).toMatchObject({ open: 2, waiting: 0 });
  });

  it('keeps a connection that answered a statement error, and closes one released as broken', async () => {
    const pid = async () => (await pools.get(A).query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const before = await pid();
    await expect(pools.get(A).query('select 1/0')).rejects.toThrow(/division by zero/);
    expect(await pid()).toBe(before);
    const client = await pools.get(A).connect();
    client.release(true);
    expect(await pid()).not.toBe(before);
  });

  it('answers 503 with Retry-After to a request that waited its bounded time for a busy project', async () => {
    const a1 = await pools.get(A).connect();
    const a2 = await pools.get(A).connect();
    try {
      const started = Date.now();
      const err = await who(A).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { retry_after: 1 } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(pools.stats().waiting).toBe(0);
    } finally {
      a1.release();
      a2.release();
    }
    expect(await who(A)).toBe(A.roleName);
  });

  it('cancels a statement past the timeout even when the session lifted its own', async () => {
    const c = await pools.get(A).connect();
    try {
      await c.query(`select set_config('statement_timeout', '0', false)`);
      // 57014 (query_canceled) is the pool's cancel at the timeout: pg_sleep(30) left alone would succeed.
      await expect(c.query('select pg_sleep(30)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      c.release('reset');
    }
  }, 20_000);

  it('gives a session released for reset its settings back before it serves again', async () => {
    // Every connection back at rest first: a reset still running from the test before would otherwise land while
    // this one waits for its own, and the next connect could take that other connection.
    const atRest = () => pools.stats().idle === pools.stats().open;
    await waitFor(atRest, { timeoutMs: 15_000, intervalMs: 5, message: 'earlier connections back at rest' });
    const c = await pools.get(A).connect();
    const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    await c.query(`select set_config('work_mem', '1GB', false), set_config('search_path', 'nowhere', false)`);
    c.release('reset');
    await waitFor(atRest, { timeoutMs: 15_000, intervalMs: 5, message: 'the reset' });
    const d = await pools.get(A).connect();
    try {
      const { rows } = await d.query<{ pid: number; work_mem: string; search_path: string }>(
        `select pg_backend_pid() as pid, current_setting('work_mem') as work_mem, current_setting('search_path') as search_path`,
      );
      expect(rows[0]!.pid).toBe(pid); // the same connection, reset
      expect(rows[0]!.work_mem).not.toBe('1GB');
      expect(rows[0]!.search_path).not.toBe('nowhere');
    } finally {
      d.release();
    }
  });

  it('reads through a cursor up to its row and byte limits, and refuses past them', async () => {
    const c = await pools.get(A).connect();
    try {
      const ok = await c.readLimited('select g as n from generate_series(1, $1::int) g', [1200], {
        maxRows: 1200,
        maxBytes: 1_000_000,
      });
      expect(ok.rows).toHaveLength(1200);
      expect(ok.rowCount).toBe(1200);
      expect(ok.fields.map((f) => f.name)).toEqual(['n']);
      await expect(
        c.readLimited('select g from generate_series(1, 100000) g', [], { maxRows: 1000, maxBytes: 1_000_000 }),
      ).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { limit: 'TESSERA_DATA_MAX_ROWS' },
      });
      await expect(
        c.readLimited(`select repeat('x', 10000) from generate_series(1, 1000)`, [], {
          maxRows: 5000,
          maxBytes: 100_000,
        }),
      ).rejects.toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { limit: 'TESSERA_DATA_MAX_RESULT_BYTES' },
      });
      // The connection still serves (its portal was closed), and a statement error comes back as itself.
      await expect(c.readLimited('select 1/0', [], { maxRows: 10, maxBytes: 1000 })).rejects.toMatchObject({
        code: '22012',
      });
      expect((await c.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
    } finally {
      c.release();
    }
  });

  it("closes a project's connections when it is deleted", async () => {
    await who(B);
    await pools.close(B.projectId);
    await waitFor(async () => !(await loggedIn()).includes(B.roleName), {
      timeoutMs: 15_000,
      message: "B's backends to end",
    });
    expect(await who(B)).toBe(B.roleName); // (a project that comes back opens anew)
  });
});

describe('the budget on a server that allows fewer connections', () => {
  it('is held to max_connections minus what the platform and others need, never below 10, never above the setting', () => {
    expect(budgetFor(200, 300, 63)).toBe(200);
    expect(budgetFor(200, 100, 63)).toBe(37);
    expect(budgetFor(200, 50, 63)).toBe(10);
    expect(budgetFor(5, 100, 63)).toBe(5);
  });

  it('counts what other processes already hold: a second data instance whose budget cannot fit is short by the excess', () => {
    // The compose kit: 400 connections, 3 reserved; one data instance holding its 150 and 13 other processes' ~65.
    expect(shortfallOf(150, 400, 3, 150 + 65)).toBe(0);
    // The kit before: budgets of 200, the other data instance at 200.
    expect(shortfallOf(200, 400, 3, 200 + 65)).toBe(68);
    expect(shortfallOf(37, 100, 3, 60)).toBe(0);
    expect(shortfallOf(37, 100, 3, 61)).toBe(1);
  });

  it('can be lowered on a running budget, and never raised above the configured maximum', async () => {
    const p = createProjectPools({ databaseUrl: db.url, maxConnections: 50, size: 10, logger: createLogger('silent') });
    try {
      p.setBudget(2);
      expect(p.budget()).toBe(2);
      p.setBudget(500);
      expect(p.budget()).toBe(50); // never above TESSERA_DATA_MAX_CONNECTIONS
    } finally {
      await p.closeAll();
    }
  });
});

/**
 * A TCP proxy to the test server that holds each new connection `delayMs` before it reaches the server, or drops it
 * then (`drop`): a server slow to take new connections, or one refusing them, while the open ones keep working.
 */
async function slowDoor(
  target: URL,
): Promise<{ url: string; set: (o: { drop: boolean }) => void; close: () => Promise<void> }> {
  const delayMs = 1000;
  let drop = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.pause();
    setTimeout(() => {
      if (drop) return socket.destroy();
      const upstream = net.connect(Number(target.port || 5432), target.hostname, () => {
        socket.pipe(upstream).pipe(socket);
        socket.resume();
      });
      sockets.add(upstream);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
      socket.on('close', () => upstream.destroy());
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    set: (o) => void (drop = o.drop),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('a request that opens a connection', () => {
  let door: Awaited<ReturnType<typeof slowDoor>>;
  let slow: ProjectPools;
  const pidOf = async (q: Promise<pg.QueryResult<{ pid: number }>>) => (await q).rows[0]!.pid;
  /** Fresh pools whose every new connection goes through the slow door. */
  const throughDoor = () =>
    createProjectPools({
      databaseUrl: door.url,
      maxConnections: 4,
      size: 2,
      waitMs: 5000,
      logger: createLogger('silent'),
    });
  beforeAll(async () => {
    door = await slowDoor(new URL(db.url));
    slow = throughDoor();
  });
  afterAll(async () => {
    await slow?.closeAll();
    await door?.close();
  });

  it('takes a connection its project releases meanwhile, and the new one goes idle for the next', async () => {
    const first = await slow.get(A).connect(); // opened through the slow door
    const firstPid = await pidOf(first.query('select pg_backend_pid() as pid'));
    const asked = pidOf(slow.get(A).query('select pg_backend_pid() as pid')); // none idle: a second is opened (1 s)
    await new Promise((r) => setTimeout(r, 100));
    expect(slow.stats()).toMatchObject({ open: 2, waiting: 1 });
    first.release();
    expect(await asked).toBe(firstPid); // served by the released one, not held for the new backend
    expect(slow.stats()).toMatchObject({ waiting: 0 });
    await waitFor(() => slow.stats().idle === 2, { timeoutMs: 15_000, message: 'the new connection to go idle' });
    expect(slow.stats()).toMatchObject({ open: 2, idle: 2, waiting: 0 });
  });

  it("fails only a request still waiting when its connection cannot be opened, and keeps the pool's count", async () => {
    await slow.closeAll();
    slow = throughDoor();
    const first = await slow.get(B).connect();
    door.set({ drop: true });
    try {
      // Served by the released connection before the failed open ends: no error reaches anyone.
      const served = slow.get(B).query('select 1 as one');
      await new Promise((r) => setTimeout(r, 100));
      first.release();
      expect((await served).rows).toEqual([{ one: 1 }]);
      await waitFor(() => slow.stats().open === 1, { timeoutMs: 15_000, message: 'the failed open to be counted out' });
      // Nobody releases: the request that asked for the connection gets the server's refusal, not a hang.
      const held = await slow.get(B).connect();
      const err = await slow
        .get(B)
        .query('select 1')
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'server_unavailable' } });
      held.release();
      expect(slow.stats()).toMatchObject({ open: 1, idle: 1, waiting: 0 });
    } finally {
      door.set({ drop: false });
    }
  });
});
