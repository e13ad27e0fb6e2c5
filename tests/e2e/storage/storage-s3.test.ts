// The platform with the S3 blob driver (TESSERA_STORAGE_DRIVER=s3) against s3rver on loopback:
// upload, ranged download and delete go through the bucket, nothing lands in the data folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { STORAGE, client, download, newStorageProject, put } from './storage-fixtures.ts';

type S3rverServer = { run: () => Promise<AddressInfo>; close: () => Promise<void> };
const S3rver = createRequire(import.meta.url)('s3rver') as new (opts: Record<string, unknown>) => S3rverServer;

let s3: S3rverServer;
let dir: string;
let p: TestPlatform;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-s3-'));
  s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: [{ name: 'objects' }],
  });
  const { port } = await s3.run();
  p = await startOneProcess({
    TESSERA_STORAGE_DRIVER: 's3',
    TESSERA_S3_ENDPOINT: `http://127.0.0.1:${port}`,
    TESSERA_S3_BUCKET: 'objects',
    TESSERA_S3_ACCESS_KEY_ID: 'S3RVER',
    TESSERA_S3_SECRET_ACCESS_KEY: 'S3RVER',
  });
}, 60_000);

afterAll(async () => {
  await p?.close();
  await s3?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('stores, serves ranges of and deletes objects in an S3 bucket', async () => {
  const a = await newStorageProject(p.url);
  const content = 'stored in a bucket, not on the local disk';
  const id = (await put(p.url, a, 'docs', 's3.txt', content)).body.object.id as string;
  expect(fs.existsSync(path.join(p.dataDir, 'blobs', a.id))).toBe(false);
  const whole = await download(p.url, id, { apiKey: a.apiKey });
  expect([whole.status, whole.bytes.toString(), whole.headers.get('content-length')]).toEqual([
    200,
    content,
    String(content.length),
  ]);
  const part = await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=10-18' } });
  expect([part.status, part.bytes.toString()]).toEqual([206, content.slice(10, 19)]);
  expect((await client(p.url)('DELETE', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey })).status).toBe(204);
  expect((await download(p.url, id, { apiKey: a.apiKey })).status).toBe(404);
  expect((await client(p.url)('DELETE', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey })).status).toBe(404);
});
