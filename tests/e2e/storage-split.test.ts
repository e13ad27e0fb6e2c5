// Storage in split mode: the front door streams uploads into the blob store and reaches the storage
// subgraph (its own process) over HTTP for the records, policies and plan limits.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startSplit, type TestPlatform } from '../support/platform.ts';
import { STORAGE, client, download, newStorageProject, put } from './storage-fixtures.ts';

let p: TestPlatform;

beforeAll(async () => {
  p = await startSplit();
}, 120_000);

afterAll(async () => {
  await p?.close();
});

it('uploads, confirms, lists, downloads a range of and deletes an object across processes', async () => {
  const call = client(p.url);
  const a = await newStorageProject(p.url);
  const up = await put(p.url, a, 'split', 'a.txt', 'across processes', { confirm: false });
  expect({ status: up.status, body: up.body }).toMatchObject({ status: 201 });
  const id = up.body.object.id as string;
  expect((await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, body: { id } })).body.object.status).toBe('ready');
  expect((await call('GET', `${STORAGE}/objects?folder=split`, { apiKey: a.apiKey })).body.objects.map((o: { id: string }) => o.id)).toEqual([id]);
  const r = await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=0-5' } });
  expect([r.status, r.bytes.toString()]).toEqual([206, 'across']);
  expect((await call('GET', `${STORAGE}/usage`, { apiKey: a.apiKey })).body.usage).toMatchObject({ objects: 1, bytes: 16, quota_bytes: 1024 ** 3 });
  expect((await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey })).status).toBe(204);
  expect((await download(p.url, id, { apiKey: a.apiKey })).status).toBe(404);
}, 60_000);
