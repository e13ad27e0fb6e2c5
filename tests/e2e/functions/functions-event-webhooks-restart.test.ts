// Deliveries are scheduler jobs: a Tessera killed (SIGKILL) while deliveries wait for their next attempt loses none.
// The receiver refuses the first attempt of every delivery; the process is killed right after those attempts, before
// any retry is due; a new process on the same database makes the retries, and every event arrives, signed.
import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { freePort } from '../../../platform/net.ts';
import { createTestDatabase } from '../../support/database.ts';
import { client } from '../../support/http.ts';
import { startProcess, stopProcess, TEST_SECRET, tmpDataDir } from '../../support/platform.ts';
import { startReceiver, verified, type Receiver } from './event-receiver.ts';
import type { ChildProcess } from 'node:child_process';
import { waitFor } from '../../support/wait-for.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let rx: Receiver;
let dataDir: string;
let child: ChildProcess | undefined;
let env: Record<string, string>;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase();
  rx = await startReceiver();
  dataDir = tmpDataDir();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  env = {
    PORT: String(port),
    DATABASE_URL: db.url,
    TESSERA_DATA_DIR: dataDir,
    TESSERA_INTERNAL_SECRET: TEST_SECRET,
    LOG_LEVEL: 'warn',
    TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true',
    // The first retry comes 3 s (±25%) after a failure: time enough to kill the process before it is due.
    TESSERA_EVENT_RETRY_BASE_MS: '3000',
  };
}, 60_000);

afterAll(async () => {
  if (child) await stopProcess(child);
  await rx?.close();
  await db?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('loses no delivery when the process is killed mid-retry and started again', async () => {
  child = await startProcess([path.resolve('main.ts')], env, `${url}/health`);
  const call = client(url);
  const email = `restart-${Date.now()}@example.com`;
  await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } });
  const token = (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } })).body
    .access_token as string;
  const apiKey = (await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Restart' } })).body.project
    .api_key as string;
  expect(
    (
      await call('POST', '/v1/rawSQL', {
        apiKey,
        body: { sql: 'create table items (id serial primary key, n int not null)' },
      })
    ).status,
  ).toBe(200);
  const sub = (
    await call('POST', '/edge/api/v1/event-subscriptions', {
      apiKey,
      body: { url: `${rx.url}/restart`, events: ['row.inserted'], tables: ['items'] },
    })
  ).body.event_subscription;
  // Every delivery's first attempt fails; later ones succeed.
  const seen = new Set<string>();
  rx.answer('/restart', (n) => {
    const r = rx.at('/restart')[n - 1]!;
    const id = r.headers['webhook-id']!;
    if (seen.has(id)) return { status: 200 };
    seen.add(id);
    return { status: 500, body: 'not yet' };
  });
  const rows = 5;
  const res = await call('POST', '/v1/insert', {
    apiKey,
    body: { table: 'items', values: Array.from({ length: rows }, (_, n) => ({ n })) },
  });
  expect(res.status).toBe(201);
  await rx.waitFor('/restart', rows);
  // Each first attempt is recorded as failed (pending, its retry scheduled) before the process goes.
  await waitFor(async () => {
    const log = await call('GET', `/edge/api/v1/event-subscriptions/${sub.id}/deliveries`, { apiKey });
    const list = log.body.deliveries as { status: string; attempts: number }[];
    return list.length === rows && list.every((d) => d.status === 'pending' && d.attempts === 1) ? true : undefined;
  });
  child.kill('SIGKILL');
  await new Promise((r) => child!.once('exit', r));
  const before = rx.at('/restart').length;
  child = await startProcess([path.resolve('main.ts')], env, `${url}/health`);
  // The retries come from the new process: every row arrives, verified, exactly the ones inserted.
  const got = await rx.waitFor('/restart', before + rows, 60_000);
  const delivered = got.slice(before).map((r) => verified(sub.secret as string, r));
  expect(delivered.map((d) => (d.data.row as { n: number }).n).sort()).toEqual([0, 1, 2, 3, 4]);
  await waitFor(
    async () => {
      const log = await call('GET', `/edge/api/v1/event-subscriptions/${sub.id}/deliveries`, { apiKey });
      const list = log.body.deliveries as { status: string; attempts: number }[];
      return list.length === rows && list.every((d) => d.status === 'succeeded' && d.attempts === 2) ? true : undefined;
    },
    { timeoutMs: 30_000 },
  );
}, 180_000);
