// The data API's connection budget on a real server: every connection logs in as its own project's role, the
// budget is shared by all projects, the connection idle the longest goes first when it is spent, a project waits
// (rather than failing) while every connection is busy, and a statement error does not cost the connection.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createLogger } from '../../platform/logger.ts';
import { budgetFor, createProjectPools, type ProjectPools } from '../../subgraphs/data/services/pools.ts';
import { scramVerifier, type ProjectRole } from '../../subgraphs/data/services/provisioning.ts';
import { createTestDatabase } from '../support/database.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let admin: pg.Client;
let pools: ProjectPools;
const suffix = crypto.randomBytes(4).toString('hex');
const roles: ProjectRole[] = ['a', 'b', 'c'].map((x) => ({
  projectId: `pool-${x}`,
  schemaName: `pool_${x}_${suffix}`,
  roleName: `pool_${x}_${suffix}`,
  userRoleName: `pool_${x}_${suffix}_u`,
  password: crypto.randomBytes(24).toString('base64url'),
}));
const [A, B, C] = roles as [ProjectRole, ProjectRole, ProjectRole];

/** Roles logged in to the test database through the data API's connections. */
async function loggedIn(): Promise<string[]> {
  const { rows } = await admin.query<{ usename: string }>(`select usename from pg_stat_activity where application_name = 'tessera-data' and datname = current_database() order by usename`);
  return rows.map((r) => r.usename);
}

async function who(role: ProjectRole): Promise<string> {
  return (await pools.get(role).query<{ who: string }>('select current_user::text as who')).rows[0]!.who;
}

beforeAll(async () => {
  db = await createTestDatabase();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const database = (await admin.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
  for (const r of roles) {
    // The verifier the data API stores: few SCRAM iterations, still checked by the server like any password.
    await admin.query(`create role "${r.roleName}" login password '${scramVerifier(r.password)}'`);
    await admin.query(`grant connect on database "${database}" to "${r.roleName}"`);
  }
  pools = createProjectPools({ databaseUrl: db.url, maxConnections: 2, size: 2, logger: createLogger('silent') });
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
    await new Promise((r) => setTimeout(r, 200)); // the closed backend ends
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
    await new Promise((r) => setTimeout(r, 200));
    expect(answered).toBe(false);
    expect(pools.stats().waiting).toBe(1);
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

  it("closes a project's connections when it is deleted", async () => {
    await who(B);
    await pools.close(B.projectId);
    await new Promise((r) => setTimeout(r, 200));
    expect(await loggedIn()).not.toContain(B.roleName);
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
