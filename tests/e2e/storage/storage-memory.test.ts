// A 200 MB upload streams: the platform process (a child process here, so its memory is its own) grows
// by no more than ~16 MB while the bytes go through it into the blob store (each body chunk is released as
// soon as it is written, so nothing waits for the garbage collector).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase } from '../../support/database.ts';
import { TEST_SECRET, startProcess, stopProcess } from '../../support/platform.ts';
import {
  download,
  generated,
  newStorageProject,
  raiseFreePlanForLargeUploads,
  upload,
  type StorageProject,
} from './storage-fixtures.ts';
import { freePort } from '../../../platform/net.ts';

const MB = 1024 * 1024;
let child: ChildProcess;
let url: string;
let dataDir: string;
let drop: () => Promise<void>;
let project: StorageProject;

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  const base = path.resolve('.tessera', 'test-data');
  fs.mkdirSync(base, { recursive: true });
  dataDir = fs.mkdtempSync(path.join(base, 'mem-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = await startProcess(
    [path.resolve('main.ts')],
    {
      PORT: String(port),
      DATABASE_URL: db.url,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_INTERNAL_SECRET: TEST_SECRET,
      LOG_LEVEL: 'warn',
    },
    `${url}/health`,
  );
  // Room for the upload on the free plan (nobody has read the plans yet).
  await raiseFreePlanForLargeUploads(db.url);
  project = await newStorageProject(url);
}, 120_000);

afterAll(async () => {
  if (child) await stopProcess(child);
  await drop?.();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('runs `node main.ts` with the platform V8 and malloc settings, re-executed in place (the same pid)', () => {
  const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
  expect(cmdline).toContain('--max-semi-space-size=16');
  expect(cmdline).toContain(path.resolve('main.ts'));
  // (glibc rewrites the GLIBC_TUNABLES string it parsed in place, so only its presence is checked.)
  const environ = fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
  expect(environ).toContain('TESSERA_NODE_TUNED=GLIBC_TUNABLES');
  expect(environ.some((v) => v.startsWith('GLIBC_TUNABLES=glibc.malloc.arena_max=2'))).toBe(true);
});

it('uploads 200 MB while the platform process grows by at most ~16 MB, and stores every byte', async () => {
  // Warm up (code paths compiled, pools open), then measure from a settled baseline.
  expect(
    (await upload(url, [{ name: 'file', filename: 'warm.bin', body: generated(32 * MB) }], { apiKey: project.apiKey }))
      .status,
  ).toBe(201);
  const baseline = rssOf(child.pid!);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(child.pid!))), 25);

  const size = 200 * MB;
  const expected = crypto.createHash('sha256');
  for await (const c of generated(size)()) expected.update(c);
  const r = await upload(
    url,
    [
      { name: 'confirm', value: 'true' },
      { name: 'file', filename: 'big.bin', body: generated(size) },
    ],
    { apiKey: project.apiKey },
  );
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(child.pid!));

  expect(r.status).toBe(201);
  expect(r.body.object).toMatchObject({ size, sha256: expected.digest('hex'), status: 'ready' });
  const growth = peak - baseline;
  console.log(
    `storage upload: 200 MB, platform RSS baseline ${(baseline / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB, growth ${(growth / MB).toFixed(1)} MB`,
  );
  expect(growth).toBeLessThanOrEqual(16 * MB);
  expect(fs.statSync(path.join(dataDir, 'blobs', project.id, r.body.object.id)).size).toBe(size);

  // The download streams too, and a range of it comes from the right place.
  const tail = await download(url, r.body.object.id, {
    apiKey: project.apiKey,
    headers: { range: `bytes=${size - 16}-` },
  });
  expect(tail.status).toBe(206);
  const all: Buffer[] = [];
  for await (const c of generated(size)()) all.push(Buffer.from(c));
  expect(tail.bytes.equals(Buffer.concat(all).subarray(size - 16))).toBe(true);
}, 180_000);
