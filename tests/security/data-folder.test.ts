// The data folder (internal secret, embedded database, blobs) is private: 0700, its secret and blobs 0600, and no
// other user of the machine can list or read it — while the embedded PostgreSQL, which runs as the `postgres` user
// when Tessera runs as root, still reaches its own folder inside it (it starts, and keeps data across a restart).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startProcess, stopProcess } from '../support/platform.ts';
import { client, type Res } from '../support/http.ts';
import { freePort } from '../../platform/net.ts';
import { upload } from '../e2e/storage/storage-fixtures.ts';
import { attackTable } from './attack-table.ts';

const isRoot = process.getuid?.() === 0;
const NOBODY = { uid: 65534, gid: 65534 };

let dataDir: string;
let url: string;
let child: Awaited<ReturnType<typeof startProcess>>;
let env: Record<string, string>;

const mode = (p: string) => fs.statSync(p).mode & 0o777;

/** Runs `cmd` as another, unprivileged user of the machine (when this test runs as root). */
const asNobody = (cmd: string, args: string[]): Res => {
  const r = spawnSync(cmd, args, { ...NOBODY, encoding: 'utf8' });
  return { status: r.status ?? -1, body: `${r.stdout}${r.stderr}`, headers: new Headers() };
};

beforeAll(async () => {
  const base = path.resolve('.tessera', 'test-data');
  fs.mkdirSync(base, { recursive: true, mode: 0o755 });
  fs.chmodSync(base, 0o755);
  dataDir = path.join(base, `private-${process.pid}-${Date.now()}`);
  const port = await freePort();
  env = {
    PORT: String(port),
    DATABASE_URL: '',
    TESSERA_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    TESSERA_INTERNAL_SECRET: '',
  };
  url = `http://127.0.0.1:${port}`;
  child = await startProcess([path.resolve('main.ts')], env, `${url}/health`);
  const call = client(url);
  expect(
    (
      await call('POST', '/auth/api/v1/tenants/signup', {
        body: { email: 'owner@example.com', password: 'a long password' },
      })
    ).status,
  ).toBe(201);
  const token = (
    await call('POST', '/auth/api/v1/tenant/login', {
      body: { email: 'owner@example.com', password: 'a long password' },
    })
  ).body.access_token;
  const project = (await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Private' } })).body.project;
  const up = await upload(
    url,
    [
      { name: 'confirm', value: 'true' },
      { name: 'file', filename: 'secret.txt', contentType: 'text/plain', body: Buffer.from('private bytes') },
    ],
    { apiKey: project.api_key },
  );
  expect(up.status).toBe(201);
}, 120_000);

afterAll(async () => {
  if (child) await stopProcess(child);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const blobFiles = (): string[] => {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk(path.join(dataDir, 'blobs'));
  return out;
};

describe('the data folder', () => {
  it("is 0700, its secret and blobs 0600, their folders 0700; running as root it belongs to the embedded server's user", () => {
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(path.join(dataDir, 'internal.secret'))).toBe(0o600);
    expect(mode(path.join(dataDir, 'blobs'))).toBe(0o700);
    const blobs = blobFiles();
    expect(blobs.length).toBeGreaterThan(0);
    for (const b of blobs) expect({ b, mode: mode(b) }).toEqual({ b, mode: 0o600 });
    if (isRoot) {
      const owner = fs.statSync(dataDir).uid;
      expect(owner).toBe(Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()));
      // The secret and the blobs stay root's: the database server's user cannot read them.
      expect(fs.statSync(path.join(dataDir, 'internal.secret')).uid).toBe(0);
    }
  });

  it('lets the embedded PostgreSQL reach its own folder: it starts again on the same data', async () => {
    await stopProcess(child);
    child = await startProcess([path.resolve('main.ts')], env, `${url}/health`);
    const login = await client(url)('POST', '/auth/api/v1/tenant/login', {
      body: { email: 'owner@example.com', password: 'a long password' },
    });
    expect(login.status).toBe(200);
    expect(mode(dataDir)).toBe(0o700);
  }, 120_000);

  if (isRoot) {
    attackTable([
      {
        name: 'another user of the machine lists the data folder',
        attack: async () => asNobody('ls', [dataDir]),
        refused: { status: 2, notContaining: () => ['internal.secret', 'blobs'] },
      },
      {
        name: 'another user of the machine reads the internal secret',
        attack: async () => asNobody('cat', [path.join(dataDir, 'internal.secret')]),
        refused: { status: 1, notContaining: () => [fs.readFileSync(path.join(dataDir, 'internal.secret'), 'utf8')] },
      },
      {
        name: "the database server's user reads a blob",
        attack: async () => {
          const ids = {
            uid: Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout),
            gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout),
          };
          const r = spawnSync('cat', [blobFiles()[0]!], { ...ids, encoding: 'utf8' });
          return { status: r.status ?? -1, body: `${r.stdout}${r.stderr}`, headers: new Headers() };
        },
        refused: { status: 1, notContaining: () => ['private bytes'] },
      },
    ]);
  }
});
