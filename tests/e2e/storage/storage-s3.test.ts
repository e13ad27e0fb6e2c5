// The platform with the S3 blob driver (TESSERA_STORAGE_DRIVER=s3) against s3rver on loopback:
// upload, ranged download and delete go through the bucket, nothing lands in the data folder.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { startS3, type TestS3 } from '../../support/s3.ts';
import { STORAGE, client, download, newStorageProject, put } from './storage-fixtures.ts';

let s3: TestS3;
let p: TestPlatform;

beforeAll(async () => {
  s3 = await startS3('objects');
  p = await startOneProcess(s3.env);
}, 60_000);

afterAll(async () => {
  await p?.close();
  await s3?.close();
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
