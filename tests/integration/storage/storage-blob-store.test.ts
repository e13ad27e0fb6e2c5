// The blob store contract, run against both drivers: the filesystem, and S3 over the wire against
// s3rver (an S3-protocol server) on loopback.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BlobNotFoundError,
  BlobTooLargeError,
  blobKeyOf,
  createFsBlobStore,
  createS3BlobStore,
  ensureStoreId,
  openBlobStore,
  readStoreId,
  type BlobStore,
} from '../../../platform/blob-store/index.ts';
import { loadConfig } from '../../../platform/config.ts';
import { S3_KEY, startS3, type TestS3 } from '../../support/s3.ts';

const P = crypto.randomUUID();
const key = () => blobKeyOf(P, crypto.randomUUID());
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

async function text(s: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** `size` bytes in `chunk`-sized pieces, generated (never held whole). */
function stream(size: number, chunk = 64 * 1024): Readable {
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(chunk, left);
      left -= n;
      this.push(Buffer.alloc(n, left % 251));
    },
  });
}

let tmp: string;
let s3: TestS3;
const stores: Record<string, BlobStore> = {};

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-blobs-'));
  s3 = await startS3('tessera-test');
  stores.fs = createFsBlobStore(path.join(tmp, 'fs'));
  // A small part size makes a few-MiB blob a real multipart upload.
  stores.s3 = createS3BlobStore({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    bucket: s3.bucket,
    accessKeyId: S3_KEY,
    secretAccessKey: S3_KEY,
    forcePathStyle: true,
    partSize: 5 * 1024 * 1024,
  });
});

afterAll(async () => {
  for (const s of Object.values(stores)) await s.close();
  await s3?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.each(['fs', 's3'])('the %s blob store', (driver) => {
  const store = () => stores[driver]!;

  it('stores a stream and answers its size and SHA-256, then reads it back whole and by range', async () => {
    const k = key();
    const body = Buffer.from('The quick brown fox jumps over the lazy dog');
    expect(
      await store().put(k, Readable.from([body.subarray(0, 10), body.subarray(10)]), { contentType: 'text/plain' }),
    ).toEqual({ size: body.length, sha256: sha(body) });
    expect(await store().stat(k)).toEqual({ size: body.length });
    expect(await text(await store().get(k))).toBe(body.toString());
    expect(await text(await store().get(k, { start: 4, end: 8 }))).toBe('quick');
    expect(await text(await store().get(k, { start: 40, end: 42 }))).toBe('dog');
  });

  it('streams a blob larger than one multipart part', async () => {
    const k = key();
    const size = 12 * 1024 * 1024 + 123;
    const expected = crypto.createHash('sha256');
    for await (const c of stream(size)) expected.update(c as Buffer);
    const info = await store().put(k, stream(size));
    expect(info).toEqual({ size, sha256: expected.digest('hex') });
    expect(await store().stat(k)).toEqual({ size });
    const tail = await store().get(k, { start: size - 10, end: size - 1 });
    let n = 0;
    for await (const c of tail) n += (c as Buffer).length;
    expect(n).toBe(10);
  }, 30_000);

  it('refuses a stream past maxBytes and keeps nothing of it', async () => {
    const k = key();
    await expect(store().put(k, stream(300_000), { maxBytes: 100_000 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await store().stat(k)).toBeNull();
    // Exactly the limit is fine.
    expect((await store().put(k, stream(100_000), { maxBytes: 100_000 })).size).toBe(100_000);
  });

  it('deletes idempotently and answers missing blobs as such', async () => {
    const k = key();
    await store().put(k, Readable.from([Buffer.from('x')]));
    expect(await store().delete(k)).toBe(true);
    expect(await store().delete(k)).toBe(false);
    expect(await store().stat(k)).toBeNull();
    await expect(store().get(k)).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('refuses keys it did not make (no path traversal through a key)', async () => {
    for (const bad of ['../etc/passwd', `${P}/../../x`, '/abs/olute', `${P}/x`, '']) {
      await expect(store().put(bad, Readable.from([Buffer.from('x')]))).rejects.toThrow(/not a blob key/);
      await expect(store().get(bad)).rejects.toThrow(/not a blob key/);
    }
    expect(() => blobKeyOf('../x', crypto.randomUUID())).toThrow();
  });
});

describe("a store's id (what a front door compares with the storage subgraph's)", () => {
  it('is made once per store, kept, and different in another store of either driver', async () => {
    const fresh = createFsBlobStore(path.join(tmp, 'id-a'));
    const other = createFsBlobStore(path.join(tmp, 'id-b'));
    try {
      expect(await readStoreId(fresh)).toBeNull();
      const id = await ensureStoreId(fresh);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await ensureStoreId(fresh)).toBe(id);
      // The same folder opened again (another process on the same volume) is the same store.
      expect(await readStoreId(createFsBlobStore(path.join(tmp, 'id-a')))).toBe(id);
      expect(await readStoreId(other)).toBeNull();
      expect(await ensureStoreId(other)).not.toBe(id);
      const inBucket = await ensureStoreId(stores.s3!);
      expect([inBucket === id, await readStoreId(stores.s3!)]).toEqual([false, inBucket]);
    } finally {
      await fresh.close();
      await other.close();
    }
  });
});

describe('the fs blob store with releaseChunks', () => {
  const fresh = (n: number, fill: number) => Buffer.from(new Uint8Array(n).fill(fill).buffer);

  it('releases each written chunk that alone spans its memory, and stores every byte of it', async () => {
    const chunks = [fresh(70_000, 1), fresh(65_536, 2), fresh(5_000, 3)];
    const whole = Buffer.concat(chunks);
    const k = key();
    expect(await stores.fs!.put(k, Readable.from(chunks), { releaseChunks: true })).toEqual({
      size: whole.length,
      sha256: sha(whole),
    });
    expect(chunks.map((c) => c.buffer.detached)).toEqual([true, true, true]);
    const back: Buffer[] = [];
    for await (const c of await stores.fs!.get(k)) back.push(c as Buffer);
    expect(Buffer.concat(back).equals(whole)).toBe(true);
  });

  it('leaves alone chunks that share their memory (slices of a bigger buffer, the shared Buffer pool)', async () => {
    const big = fresh(200_000, 7);
    const slices = [big.subarray(0, 100_000), big.subarray(100_000)];
    const pooled = Buffer.from('small pooled chunk');
    const neighbour = Buffer.from('its neighbour in the pool');
    expect(pooled.buffer).toBe(neighbour.buffer);
    const info = await stores.fs!.put(key(), Readable.from([...slices, pooled]), { releaseChunks: true });
    expect(info.size).toBe(200_000 + pooled.length);
    expect(big.buffer.detached).toBe(false);
    expect(big.every((b) => b === 7)).toBe(true);
    expect(pooled.buffer.detached).toBe(false);
    expect(neighbour.toString()).toBe('its neighbour in the pool');
  });

  it('releases nothing unless asked, nor when the upload is refused', async () => {
    const kept = [fresh(10_000, 4), fresh(10_000, 5)];
    await stores.fs!.put(key(), Readable.from(kept));
    expect(kept.some((c) => c.buffer.detached)).toBe(false);
    const refused = [fresh(60_000, 6), fresh(60_000, 6)];
    await expect(
      stores.fs!.put(key(), Readable.from(refused), { maxBytes: 100_000, releaseChunks: true }),
    ).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(refused[1]!.buffer.detached).toBe(false);
  });
});

describe('driver selection', () => {
  it('uses the filesystem under the data folder by default, and S3 when configured', async () => {
    const fsStore = openBlobStore(loadConfig({ TESSERA_DATA_DIR: path.join(tmp, 'data') }));
    expect(fsStore.driver).toBe('fs');
    expect(fs.existsSync(path.join(tmp, 'data', 'blobs', '.partial'))).toBe(true);
    const s3Store = openBlobStore(loadConfig(s3.env));
    expect(s3Store.driver).toBe('s3');
    const k = key();
    await s3Store.put(k, Readable.from([Buffer.from('via config')]));
    expect(await text(await s3Store.get(k))).toBe('via config');
    await s3Store.close();
    expect(() => openBlobStore(loadConfig({ TESSERA_STORAGE_DRIVER: 's3' }))).toThrow(/TESSERA_S3_BUCKET/);
    expect(() => loadConfig({ TESSERA_STORAGE_DRIVER: 'ftp' })).toThrow(/TESSERA_STORAGE_DRIVER/);
  });
});
