// GraphQL multipart uploads through /graphql in split mode: the front door's gateway forwards the file
// as a stream (a multipart request of its own) to the storage subgraph's process, which hands the
// `Upload` scalar its stream; the bytes come back identical through the REST download.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startSplit, type TestPlatform } from '../support/platform.ts';
import { createTestDatabase } from '../support/database.ts';
import { download, generated, multipart, newStorageProject, type Part, type StorageProject } from './storage-fixtures.ts';

type GqlBody = { data?: any; errors?: { message: string; extensions: { code: string } }[]; error?: { code: string } }; // eslint-disable-line @typescript-eslint/no-explicit-any

const MB = 1024 * 1024;
let db: { url: string; drop: () => Promise<void> };
let p: TestPlatform;
let a: StorageProject;
let storageUrl: string;
let layout: { frontDoor: { pid: number }; subgraphs: Record<string, { url: string; pid: number }> };

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

beforeAll(async () => {
  // Our own database, so the plan can be raised for the large upload before anyone reads it.
  db = await createTestDatabase();
  p = await startSplit({ DATABASE_URL: db.url });
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  await c.query(`update plans set max_upload_bytes = $1, max_storage_bytes = $2 where id = 'free'`, [512 * MB, 1024 * MB]);
  await c.end();
  a = await newStorageProject(p.url);
  layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as typeof layout;
  storageUrl = layout.subgraphs.storage!.url;
}, 120_000);

afterAll(async () => {
  await p?.close();
  await db?.drop();
}, 60_000);

const UPLOAD = `mutation($file: Upload!, $folder: String, $confirm: Boolean) {
  uploadStorageObject(file: $file, folder: $folder, confirm: $confirm) { id name folder size sha256 status contentType }
}`;

/** A GraphQL multipart request (operations, map, then the file) to `url`. */
async function gqlUpload(url: string, file: Buffer | (() => AsyncIterable<Uint8Array>), variables: Record<string, unknown>, headers: Record<string, string>, filename = 'g.bin') {
  const parts: Part[] = [
    { name: 'operations', value: JSON.stringify({ query: UPLOAD, variables: { ...variables, file: null } }) },
    { name: 'map', value: JSON.stringify({ 0: ['variables.file'] }) },
    { name: '0', filename, contentType: 'application/octet-stream', body: file },
  ];
  const { body, contentType } = multipart(parts);
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body, duplex: 'half' } as RequestInit);
  return { status: res.status, body: (await res.json()) as GqlBody };
}

const withKey = () => ({ 'x-api-key': a.apiKey, 'apollo-require-preflight': 'true' });

describe('GraphQL uploads in split mode', () => {
  it('streams a file through /graphql to the storage process and downloads it back byte-identical', async () => {
    const content = crypto.randomBytes(3 * 1024 * 1024 + 17);
    const r = await gqlUpload(`${p.url}/graphql`, content, { folder: 'split-gql', confirm: true }, withKey(), 'données.bin');
    expect(r.body.errors).toBeUndefined();
    expect(r.status).toBe(200);
    expect(r.body.data.uploadStorageObject).toMatchObject({
      name: 'données.bin',
      folder: 'split-gql',
      size: content.length,
      status: 'ready',
      contentType: 'application/octet-stream',
      sha256: crypto.createHash('sha256').update(content).digest('hex'),
    });
    const got = await download(p.url, r.body.data.uploadStorageObject.id, { apiKey: a.apiKey });
    expect(got.status).toBe(200);
    expect(got.bytes.equals(content)).toBe(true);
  }, 60_000);

  it('carries 200 MiB while the front door and the storage process each grow by at most ~64 MB', async () => {
    const pids = [layout.frontDoor.pid, layout.subgraphs.storage!.pid];
    // Warm up (code paths compiled, connections open), then measure from a settled baseline.
    expect((await gqlUpload(`${p.url}/graphql`, generated(8 * MB), { folder: 'split-gql-warm' }, withKey(), 'warm.bin')).body.errors).toBeUndefined();
    await new Promise((r) => setTimeout(r, 500));
    const baseline = pids.map(rssOf);
    const peak = [...baseline];
    const sampler = setInterval(() => pids.forEach((pid, i) => (peak[i] = Math.max(peak[i]!, rssOf(pid)))), 25);
    const size = 200 * MB;
    const r = await gqlUpload(`${p.url}/graphql`, generated(size), { folder: 'split-gql-big', confirm: true }, withKey(), 'big.bin');
    clearInterval(sampler);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.uploadStorageObject).toMatchObject({ size, status: 'ready' });
    const expected = crypto.createHash('sha256');
    for await (const chunk of generated(size)()) expected.update(chunk);
    expect(r.body.data.uploadStorageObject.sha256).toBe(expected.digest('hex'));
    const growth = peak.map((v, i) => v - baseline[i]!);
    console.log(`GraphQL upload in split mode: 200 MiB, RSS growth front door ${(growth[0]! / MB).toFixed(1)} MB, storage ${(growth[1]! / MB).toFixed(1)} MB`);
    // The REST upload's bound (storage-memory.test.ts): garbage-collector slack, not the file's size.
    for (const g of growth) expect(g).toBeLessThanOrEqual(64 * MB);
  }, 120_000);

  it('answers the storage domain\'s refusals, missing credentials and a missing preflight header as in one process', async () => {
    const bad = await gqlUpload(`${p.url}/graphql`, Buffer.from('x'), { folder: '../etc' }, withKey());
    expect(bad.body.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');
    // Refused before its first byte is read, while the front door is still sending it.
    const badBig = await gqlUpload(`${p.url}/graphql`, generated(20 * MB), { folder: '../etc' }, withKey());
    expect(badBig.body.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');
    const anonymous = await gqlUpload(`${p.url}/graphql`, Buffer.from('x'), { folder: 'a' }, { 'apollo-require-preflight': 'true' });
    expect(anonymous.body.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    const garbage = await gqlUpload(`${p.url}/graphql`, Buffer.from('x'), { folder: 'a' }, { 'x-api-key': 'tsk_garbage', 'apollo-require-preflight': 'true' });
    expect(garbage.status).toBe(401);
    const noPreflight = await gqlUpload(`${p.url}/graphql`, Buffer.from('x'), {}, { 'x-api-key': a.apiKey });
    // /graphql answers GraphQL-shaped errors, also before execution.
    expect([noPreflight.status, noPreflight.body.errors?.[0]?.extensions?.code]).toEqual([400, 'BAD_REQUEST']);
    // Nothing was stored by the refused uploads.
    const listed = await fetch(`${p.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey },
      body: JSON.stringify({ query: '{ storageObjects(folder: "a") { items { id } } }' }),
    });
    expect(((await listed.json()) as GqlBody).data.storageObjects.items).toEqual([]);
  }, 60_000);

  it('has a storage process that refuses multipart requests without the router\'s signed context', async () => {
    const direct = await gqlUpload(storageUrl, Buffer.from('sneaky'), { folder: 'direct' }, withKey());
    expect([direct.status, direct.body.errors?.[0]?.extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
  });
});
