// Backup and restore round trip (scripts/backup.ts): make data in every domain, back the installation up (platform
// database, each project's database, blobs, the internal secret from the data folder), wipe it all (databases,
// project roles, blobs, data folder), restore into a new database and a new data folder, and find everything readable:
// the tenant's access token and the project's API key still valid, the function's sealed secret still usable,
// the project's rows and files still there, and a new project can still be made.
// pg_dump/pg_restore must be of the server's major version or newer: CI's PostgreSQL 15 run has them (Debian's
// client); the embedded PostgreSQL 18 ships none, so there the round trip is skipped (and says so).
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTessera, type Tessera } from '../../../main.ts';
import { createTestDatabase, dropInstallation, serverUrl } from '../../support/database.ts';
import { PG15_BIN, pg15Available, startPgServers, type TestPgServer } from '../../support/pg-servers.ts';
import { addProjectServer, placeOn, projectServer } from '../../support/fleet.ts';
import { TEST_SECRET } from '../../support/platform.ts';
import { createProject, dataCall, signIn, type DataProject } from '../data/data-support.ts';
import { client } from '../../support/http.ts';
import { createBackup, restoreBackup } from '../../../scripts/backup.ts';
import { download, put, type StorageProject } from '../storage/storage-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

const F = '/edge/api/v1';

async function pgDumpFits(): Promise<string | undefined> {
  const v = spawnSync('pg_dump', ['--version'], { encoding: 'utf8' });
  if (v.status !== 0) return 'no pg_dump on the PATH';
  const tool = Number(/(\d+)(?:\.\d+)?/.exec(v.stdout)?.[1]);
  const c = new pg.Client({ connectionString: await serverUrl() });
  await c.connect();
  const server = Math.floor(Number((await c.query('show server_version_num')).rows[0].server_version_num) / 10000);
  await c.end();
  return tool >= server ? undefined : `pg_dump ${tool} cannot dump PostgreSQL ${server}`;
}

describe('backup and restore', () => {
  let skip: string | undefined;
  const base = path.resolve('.tessera', 'test-data');
  let dirs: string[] = [];
  let tessera: Tessera | undefined;
  const dbs: { url: string; drop: () => Promise<void> }[] = [];

  const dir = (prefix: string) => {
    fs.mkdirSync(base, { recursive: true, mode: 0o755 });
    const d = fs.mkdtempSync(path.join(base, prefix));
    dirs.push(d);
    return d;
  };
  const start = async (databaseUrl: string, dataDir: string) =>
    (tessera = await startTessera({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: databaseUrl,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_PUBLIC_URL: 'https://backup.example.com',
    }));

  beforeAll(async () => {
    skip = await pgDumpFits();
  });

  afterAll(async () => {
    await tessera?.close().catch(() => {});
    for (const d of dbs) await d.drop().catch(() => {});
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    dirs = [];
  }, 60_000);

  it('brings back keys, secrets, files, rows and tokens after a wipe', async () => {
    if (skip) {
      console.warn(`backup round trip skipped: ${skip}`);
      return;
    }
    // 1. An installation with data in every domain; its internal secret generated into the data folder.
    const db1 = await createTestDatabase();
    dbs.push(db1);
    const data1 = dir('backup-a-');
    let t = await start(db1.url, data1);
    let call = client(t.url);
    const email = `backup-${Date.now()}@example.com`;
    expect(
      (await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'correct horse battery' } }))
        .status,
    ).toBe(201);
    const token = (
      await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'correct horse battery' } })
    ).body.access_token as string;
    const made = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'kept' } });
    const project: StorageProject = { id: made.body.project.id, apiKey: made.body.project.api_key, tenantToken: token };
    const as = { apiKey: project.apiKey };
    await waitFor(async () => (await call('POST', '/v1/rawSQL', { ...as, body: { sql: 'select 1' } })).status === 200, {
      timeoutMs: 20_000,
      message: 'the project database',
    });
    expect(
      (await call('POST', '/v1/rawSQL', { ...as, body: { sql: 'create table notes (id int primary key, body text)' } }))
        .status,
    ).toBe(200);
    expect(
      (await call('POST', '/v1/insert', { ...as, body: { table: 'notes', values: [{ id: 1, body: 'kept' }] } })).status,
    ).toBe(201);
    expect(
      (await call('POST', `${F}/secrets`, { ...as, body: { name: 'TOKEN', value: 'sealed-with-the-internal-secret' } }))
        .status,
    ).toBeLessThan(300);
    expect(
      (
        await call('POST', `${F}/functions`, {
          ...as,
          body: {
            name: 'peek',
            steps: [{ name: 'out', kind: 'Transform', expression: { len: '{{ secrets.TOKEN.length }}' } }],
          },
        })
      ).status,
    ).toBe(201);
    const file = (await put(t.url, project, 'docs', 'kept.txt', 'bytes to keep', { confirm: true })).body.object
      .id as string;
    const platform = new pg.Client({ connectionString: db1.url });
    await platform.connect();
    const roles = (
      await platform.query<{ database_name: string; role_name: string; user_role_name: string }>(
        'select database_name, role_name, user_role_name from data_project_roles',
      )
    ).rows;
    await platform.end();
    expect(roles).toHaveLength(1);
    await t.close();
    tessera = undefined;

    // 2. Back up.
    const backup = dir('backup-files-');
    fs.rmSync(backup, { recursive: true });
    const manifest = await createBackup(backup, {
      DATABASE_URL: db1.url,
      TESSERA_DATA_DIR: data1,
      LOG_LEVEL: 'silent',
    });
    expect(manifest).toMatchObject({
      secret: 'file',
      blobs: 1,
      projects: [{ projectId: project.id, database: roles[0]!.database_name }],
    });

    // 3. Wipe: the project's database and roles, the platform database, the data folder (blobs, secret).
    const admin = new pg.Client({ connectionString: await serverUrl() });
    await admin.connect();
    try {
      for (const r of roles) {
        await admin.query(`drop database if exists "${r.database_name}" with (force)`);
        await admin.query(`drop role if exists "${r.role_name}"`);
        await admin.query(`drop role if exists "${r.user_role_name}"`);
      }
    } finally {
      await admin.end();
    }
    await db1.drop();
    fs.rmSync(data1, { recursive: true, force: true });

    // 4. Restore into a new database and a new data folder; start on them.
    const db2 = await createTestDatabase();
    dbs.push(db2);
    const data2 = dir('backup-b-');
    await restoreBackup(backup, { DATABASE_URL: db2.url, TESSERA_DATA_DIR: data2, LOG_LEVEL: 'silent' });
    expect(fs.readFileSync(path.join(data2, 'internal.secret'), 'utf8')).toBe(
      fs.readFileSync(path.join(backup, 'internal.secret'), 'utf8'),
    );
    t = await start(db2.url, data2);
    call = client(t.url);

    // 5. Everything readable.
    const me = await call('GET', '/auth/api/v1/tenant', { token });
    expect({ status: me.status, email: me.body?.tenant?.email, body: me.status === 200 ? undefined : me.body }).toEqual(
      { status: 200, email, body: undefined },
    );
    expect((await call('POST', '/v1/find', { ...as, body: { table: 'notes' } })).body.rows).toEqual([
      { id: 1, body: 'kept' },
    ]);
    expect((await call('POST', `${F}/invoke/peek`, { ...as, body: {} })).body).toEqual({
      len: 'sealed-with-the-internal-secret'.length,
    });
    expect((await download(t.url, file, { apiKey: project.apiKey })).bytes.toString()).toBe('bytes to keep');
    const again = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'after the restore' } });
    expect(again.status).toBe(201);
    await waitFor(
      async () =>
        (await call('POST', '/v1/rawSQL', { apiKey: again.body.project.api_key, body: { sql: 'select 1 as one' } }))
          .status === 200,
      { timeoutMs: 20_000, message: "the new project's database" },
    );
  }, 180_000);

  it('refuses to restore over a platform database that is not empty', async () => {
    if (skip) return;
    const db = await createTestDatabase();
    dbs.push(db);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query('create table something (id int)');
    await c.end();
    const folder = dir('backup-bad-');
    fs.writeFileSync(
      path.join(folder, 'manifest.json'),
      JSON.stringify({ format: 'tessera-backup/1', projects: [], secret: 'environment', platformRole: 'x' }),
    );
    await expect(
      restoreBackup(folder, { DATABASE_URL: db.url, TESSERA_INTERNAL_SECRET: 'y'.repeat(40), LOG_LEVEL: 'silent' }),
    ).rejects.toThrow(/not empty/);
    await expect(restoreBackup(dir('backup-none-'), { DATABASE_URL: db.url, LOG_LEVEL: 'silent' })).rejects.toThrow(
      /manifest/,
    );
  });
});

// A fleet (issue 29): each project is dumped from the server its `data_project_roles` row names and restored there;
// `--server ID=URL` restores a server's projects on another host and registers that URL. Three PostgreSQL 15 servers
// of tests/support/pg-servers.ts (so this runs wherever their binaries are, the embedded server's version aside):
// the platform's (and default projects server), `pg-a`, and a new host for `pg-a`.
describe('backup and restore over a fleet of project servers', () => {
  const available = pg15Available();
  let servers: TestPgServer[] = [];
  let running: Tessera | undefined;
  const folders: string[] = [];

  const folder = (prefix: string) => {
    const base = path.resolve('.tessera', 'test-data');
    fs.mkdirSync(base, { recursive: true, mode: 0o755 });
    const d = fs.mkdtempSync(path.join(base, prefix));
    folders.push(d);
    return d;
  };
  const sql = async <T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<T>(text, params)).rows;
    } finally {
      await c.end();
    }
  };
  const envOf = (databaseUrl: string, dataDir: string) => ({
    DATABASE_URL: databaseUrl,
    TESSERA_DATA_DIR: dataDir,
    TESSERA_INTERNAL_SECRET: TEST_SECRET,
    TESSERA_PG_BIN: PG15_BIN,
    LOG_LEVEL: 'silent',
  });
  const startOn = async (env: Record<string, string>) =>
    (running = await startTessera({ ...env, PORT: '0', TESSERA_PUBLIC_URL: 'https://fleet-backup.example.com' }));
  const stop = async () => {
    await running?.close();
    running = undefined;
  };
  /** Drops the project databases, templates and roles of the installation on platform database `name`, on every server. */
  const wipe = async (name: string) => {
    for (const s of servers) {
      const c = new pg.Client({ connectionString: s.url });
      await c.connect();
      try {
        await dropInstallation(c, name);
      } finally {
        await c.end();
      }
    }
  };

  afterAll(async () => {
    await stop().catch(() => {});
    await Promise.all(servers.map((s) => s.stop()));
    for (const d of folders) fs.rmSync(d, { recursive: true, force: true });
  }, 60_000);

  it("dumps each project from its own server and brings it back there (or to a server's new host)", async () => {
    if (!available) {
      console.warn('fleet backup round trip skipped: no PostgreSQL 15 binaries (tests/support/pg-servers.ts)');
      return;
    }
    servers = await startPgServers(3);
    const [main, second, newHost] = servers as [TestPgServer, TestPgServer, TestPgServer];
    for (const db of ['fleet_a', 'fleet_b', 'fleet_c']) await sql(main.url, `create database ${db}`);
    const env = envOf(main.urlOf('fleet_a'), folder('fleet-a-'));
    const target = { databaseUrl: env.DATABASE_URL };

    // 1. Two projects: one on the default server, one on pg-a.
    let t = await startOn(env);
    let call = client(t.url);
    await addProjectServer(target, 'pg-a', second.url);
    const token = await signIn(call);
    const made: Record<string, DataProject> = {};
    for (const id of ['default', 'pg-a']) {
      await placeOn(target, id);
      const p = await createProject(call, token, `kept on ${id}`);
      const data = dataCall(call, p.apiKey);
      expect((await data('rawSQL', { sql: 'create table notes (id int primary key, body text)' })).status).toBe(200);
      expect((await data('insert', { table: 'notes', values: { id: 1, body: `on ${id}` } })).status).toBe(201);
      expect((await projectServer(target, p.id))?.serverId).toBe(id);
      made[id] = p;
    }
    const databases = Object.fromEntries(
      await Promise.all(
        Object.entries(made).map(async ([id, p]) => [id, (await projectServer(target, p.id))!.database] as const),
      ),
    );
    await stop();

    // 2. Back up: the manifest says where each project was.
    const backup = folder('fleet-files-');
    fs.rmSync(backup, { recursive: true });
    const manifest = await createBackup(backup, env);
    expect(
      manifest.projects.map((p) => ({ id: p.projectId, server: p.server })).sort((a, b) => a.id.localeCompare(b.id)),
    ).toEqual(
      Object.entries(made)
        .map(([server, p]) => ({ id: p.id, server }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    );

    /** Starts on the restored `env`, reads both projects, and checks with SQL which server holds each database. */
    const checkRestored = async (restored: Record<string, string>, pgA: TestPgServer) => {
      const where = { default: main, 'pg-a': pgA } as Record<string, TestPgServer>;
      for (const [id, p] of Object.entries(made)) {
        const rows = await sql(
          where[id]!.urlOf(databases[id]!),
          `select body from "p_${p.id.replace(/-/g, '')}".notes`,
        );
        expect(rows).toEqual([{ body: `on ${id}` }]);
        for (const s of servers.filter((x) => x !== where[id]))
          expect(await sql(s.url, 'select 1 from pg_database where datname = $1', [databases[id]])).toEqual([]);
      }
      t = await startOn(restored);
      call = client(t.url);
      for (const [id, p] of Object.entries(made)) {
        const data = dataCall(call, p.apiKey);
        expect((await data('find', { table: 'notes', select: ['body'] })).body.rows).toEqual([{ body: `on ${id}` }]);
        expect((await data('insert', { table: 'notes', values: { id: 2, body: 'after' } })).status).toBe(201);
      }
      await stop();
    };

    // 3. Wipe every server; restore: each project on its own server again.
    await wipe('fleet_a');
    await sql(main.url, 'drop database fleet_a with (force)');
    const envB = envOf(main.urlOf('fleet_b'), folder('fleet-b-'));
    await restoreBackup(backup, envB);
    await checkRestored(envB, second);

    // 4. Wipe again; restore with pg-a on a new host.
    await wipe('fleet_a');
    const envC = envOf(main.urlOf('fleet_c'), folder('fleet-c-'));
    await expect(restoreBackup(backup, envC, { servers: { 'pg-z': newHost.url } })).rejects.toThrow(
      /no project server/,
    );
    await sql(main.url, 'drop database fleet_c with (force)');
    await sql(main.url, 'create database fleet_c');
    await restoreBackup(backup, envC, { servers: { 'pg-a': newHost.url } });
    await checkRestored(envC, newHost);
  }, 240_000);
});
