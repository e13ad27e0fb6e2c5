// Storage over HTTP in one-process mode: every row of the seed's Storage table, its failure paths,
// and the byte-level details (Range, ETag, Content-Disposition, bytes gone from disk on delete).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { STORAGE, client, download, newStorageProject, put, upload, type StorageProject } from './storage-fixtures.ts';
import { objectLifecycle } from './storage-flows.ts';
import { waitFor } from '../../support/wait-for.ts';

let p: TestPlatform;
let call: ReturnType<typeof client>;
let a: StorageProject;
let b: StorageProject;

const sha = (s: string | Buffer) => crypto.createHash('sha256').update(s).digest('hex');
const blobFile = (projectId: string, id: string) => path.join(p.dataDir, 'blobs', projectId, id);

beforeAll(async () => {
  p = await startOneProcess({ TESSERA_STORAGE_MAX_UPLOAD_BYTES: String(20 * 1024 * 1024) });
  call = client(p.url);
  a = await newStorageProject(p.url);
  b = await newStorageProject(p.url);
}, 60_000);

afterAll(async () => {
  await p?.close();
});

describe('upload, confirm and download', () => {
  objectLifecycle(() => p); // the same in split mode: storage-split.test.ts

  it('keeps an upload pending (not listed, not downloadable) until it is confirmed', async () => {
    const startedAt = Math.floor(Date.now() / 1000) * 1000; // Last-Modified has whole seconds
    const up = await upload(
      p.url,
      [
        { name: 'folder', value: 'docs' },
        { name: 'file', filename: 'hello.txt', contentType: 'text/plain', body: Buffer.from('hello world') },
      ],
      { apiKey: a.apiKey },
    );
    expect(up.status).toBe(201);
    expect(up.body.object).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      project_id: a.id,
      folder: 'docs',
      name: 'hello.txt',
      path: 'docs/hello.txt',
      content_type: 'text/plain',
      size: 11,
      sha256: sha('hello world'),
      etag: `"${sha('hello world')}"`,
      status: 'pending',
      owner_id: null,
      confirmed_at: null,
      download_url: `/storage/api/v1/storage/download/${up.body.object.id}`,
    });
    const id = up.body.object.id as string;
    expect(fs.readFileSync(blobFile(a.id, id), 'utf8')).toBe('hello world');

    expect((await download(p.url, id, { apiKey: a.apiKey })).status).toBe(404);
    const listed = await call('GET', `${STORAGE}/objects?folder=docs`, { apiKey: a.apiKey });
    expect(listed.body.objects.map((o: { id: string }) => o.id)).not.toContain(id);
    const pending = await call('GET', `${STORAGE}/objects?status=pending`, { apiKey: a.apiKey });
    expect(pending.body.objects.map((o: { id: string }) => o.id)).toContain(id);

    const confirmed = await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, body: { id } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.object).toMatchObject({ id, status: 'ready', confirmed_at: expect.any(String) });
    // Confirming again changes nothing.
    expect(
      (await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, body: { id } })).body.object.status,
    ).toBe('ready');

    const got = await download(p.url, id, { apiKey: a.apiKey });
    expect(got.status).toBe(200);
    expect(got.bytes.toString()).toBe('hello world');
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('content-length')).toBe('11');
    expect(got.headers.get('etag')).toBe(`"${sha('hello world')}"`);
    // Stamped during this test (one clock: the server runs on this machine).
    expect(new Date(got.headers.get('last-modified')!).getTime()).toBeGreaterThanOrEqual(startedAt);
    expect(new Date(got.headers.get('last-modified')!).getTime()).toBeLessThanOrEqual(Date.now());
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="hello.txt"; filename*=UTF-8''hello.txt`);
    expect(got.headers.get('accept-ranges')).toBe('bytes');
  });

  it('confirms at upload time when asked, and takes fields from the query string too', async () => {
    const up = await upload(p.url, [{ name: 'file', filename: 'x.bin', body: Buffer.from([1, 2, 3]) }], {
      apiKey: a.apiKey,
      query: 'folder=q/deep&name=renamed.bin&confirm=true&content_type=application/x-thing',
    });
    expect(up.status).toBe(201);
    expect(up.body.object).toMatchObject({
      folder: 'q/deep',
      name: 'renamed.bin',
      status: 'ready',
      content_type: 'application/x-thing',
      size: 3,
    });
    const got = await download(p.url, up.body.object.id, { apiKey: a.apiKey });
    expect([...got.bytes]).toEqual([1, 2, 3]);
  });

  it('stores an empty file and a UTF-8 name, and names it exactly in Content-Disposition', async () => {
    const up = await upload(
      p.url,
      [
        { name: 'folder', value: 'names' },
        { name: 'name', value: 'résumé "final".txt' },
        { name: 'confirm', value: 'true' },
        { name: 'file', filename: 'x', body: Buffer.alloc(0) },
      ],
      { apiKey: a.apiKey },
    );
    expect(up.status).toBe(201);
    const got = await download(p.url, up.body.object.id, { apiKey: a.apiKey });
    expect(got.status).toBe(200);
    expect(got.bytes.length).toBe(0);
    expect(got.headers.get('content-disposition')).toBe(
      `attachment; filename="r_sum_ _final_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt`,
    );
  });

  it('answers Range requests with 206, suffix ranges, 416 outside the file, and 304 for a matching If-None-Match', async () => {
    const content = 'abcdefghijklmnopqrstuvwxyz';
    const id = (await put(p.url, a, 'ranges', 'alpha.txt', content)).body.object.id as string;
    const r1 = await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=2-5' } });
    expect(r1.status).toBe(206);
    expect(r1.bytes.toString()).toBe('cdef');
    expect(r1.headers.get('content-range')).toBe('bytes 2-5/26');
    expect(r1.headers.get('content-length')).toBe('4');
    const r2 = await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=-3' } });
    expect([r2.status, r2.bytes.toString(), r2.headers.get('content-range')]).toEqual([206, 'xyz', 'bytes 23-25/26']);
    const r3 = await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=20-' } });
    expect([r3.status, r3.bytes.toString()]).toEqual([206, 'uvwxyz']);
    const r4 = await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=10-1000' } });
    expect([r4.status, r4.bytes.toString()]).toEqual([206, content.slice(10)]);
    const bad = await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=26-30' } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get('content-range')).toBe('bytes */26');
    expect(bad.json.error.code).toBe('RANGE_NOT_SATISFIABLE');
    // Several ranges, or a malformed header: the whole file.
    expect((await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=0-1,4-5' } })).status).toBe(200);
    expect((await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'lines=1-2' } })).bytes.toString()).toBe(
      content,
    );
    // A stale If-Range ignores the range.
    expect(
      (await download(p.url, id, { apiKey: a.apiKey, headers: { range: 'bytes=0-1', 'if-range': '"other"' } })).status,
    ).toBe(200);

    const etag = r1.headers.get('etag')!;
    const cached = await download(p.url, id, { apiKey: a.apiKey, headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(cached.bytes.length).toBe(0);
    expect(
      (await download(p.url, id, { apiKey: a.apiKey, headers: { 'if-none-match': '"nope", W/' + etag } })).status,
    ).toBe(304);
    expect((await download(p.url, id, { apiKey: a.apiKey, headers: { 'if-none-match': '"nope"' } })).status).toBe(200);
  });

  it('replaces an object of the same path only with upsert, and refuses otherwise with 409', async () => {
    const first = await put(p.url, a, 'dup', 'same.txt', 'one');
    const again = await put(p.url, a, 'dup', 'same.txt', 'two');
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { path: 'dup/same.txt' } });
    // A pending upload of the same path may exist, but confirming it clashes.
    const pending = await put(p.url, a, 'dup', 'same2.txt', 'p', { confirm: false });
    await put(p.url, a, 'dup', 'same2.txt', 'q');
    const clash = await call('POST', `${STORAGE}/upload/confirm`, {
      apiKey: a.apiKey,
      body: { id: pending.body.object.id },
    });
    expect(clash.status).toBe(409);

    const replaced = await upload(
      p.url,
      [
        { name: 'folder', value: 'dup' },
        { name: 'upsert', value: 'true' },
        { name: 'confirm', value: 'true' },
        { name: 'file', filename: 'same.txt', body: Buffer.from('three') },
      ],
      { apiKey: a.apiKey },
    );
    expect(replaced.status).toBe(201);
    expect((await download(p.url, replaced.body.object.id, { apiKey: a.apiKey })).bytes.toString()).toBe('three');
    expect((await download(p.url, first.body.object.id, { apiKey: a.apiKey })).status).toBe(404);
    expect(fs.existsSync(blobFile(a.id, first.body.object.id))).toBe(false);
  });

  it('takes concurrent uploads without mixing their bytes', async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => crypto.randomBytes(256 * 1024 + i * 1000));
    const results = await Promise.all(
      bodies.map((body, i) =>
        upload(
          p.url,
          [
            { name: 'folder', value: 'parallel' },
            { name: 'confirm', value: 'true' },
            { name: 'file', filename: `f${i}.bin`, body },
          ],
          { apiKey: a.apiKey },
        ),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    for (const [i, r] of results.entries()) {
      expect(r.body.object.sha256).toBe(sha(bodies[i]!));
      const got = await download(p.url, r.body.object.id, { apiKey: a.apiKey });
      expect(got.bytes.equals(bodies[i]!)).toBe(true);
    }
  });
});

describe('listing, folders and usage', () => {
  let c: StorageProject;
  beforeAll(async () => {
    c = await newStorageProject(p.url);
    for (const [folder, name, body] of [
      ['', 'root.txt', 'r'],
      ['img', 'b.png', 'bb'],
      ['img', 'a.png', 'a'],
      ['img/thumbs', 'a.png', 'tiny'],
      ['docs', 'report_100%.pdf', '12345'],
      ['docs', 'notes.txt', '1234567'],
    ] as const) {
      expect((await put(p.url, c, folder, name, body)).status).toBe(201);
      await new Promise((r) => setTimeout(r, 5)); // distinct creation times: the listings' order is asserted
    }
    await put(p.url, c, 'img', 'unconfirmed.png', 'xxxxxxxxxx', { confirm: false });
  });

  const names = (r: { body: { objects: { path: string }[] } }) => r.body.objects.map((o) => o.path);

  it('lists ready objects by path, filtered by folder, recursively, and by name prefix', async () => {
    expect(names(await call('GET', `${STORAGE}/objects`, { apiKey: c.apiKey }))).toEqual([
      'docs/notes.txt',
      'docs/report_100%.pdf',
      'img/a.png',
      'img/b.png',
      'img/thumbs/a.png',
      'root.txt',
    ]);
    expect(names(await call('GET', `${STORAGE}/objects?folder=img`, { apiKey: c.apiKey }))).toEqual([
      'img/a.png',
      'img/b.png',
    ]);
    expect(names(await call('GET', `${STORAGE}/objects?folder=img&recursive=true`, { apiKey: c.apiKey }))).toEqual([
      'img/a.png',
      'img/b.png',
      'img/thumbs/a.png',
    ]);
    expect(names(await call('GET', `${STORAGE}/objects?folder=`, { apiKey: c.apiKey }))).toEqual(['root.txt']);
    expect(names(await call('GET', `${STORAGE}/objects?prefix=a`, { apiKey: c.apiKey }))).toEqual([
      'img/a.png',
      'img/thumbs/a.png',
    ]);
    // LIKE wildcards in a prefix match themselves.
    expect(names(await call('GET', `${STORAGE}/objects?prefix=report_100%25`, { apiKey: c.apiKey }))).toEqual([
      'docs/report_100%.pdf',
    ]);
    expect(names(await call('GET', `${STORAGE}/objects?prefix=%25`, { apiKey: c.apiKey }))).toEqual([]);
  });

  it('sorts by size, creation time and name in both directions, and pages with a cursor', async () => {
    expect(names(await call('GET', `${STORAGE}/objects?sort=-size&first=2`, { apiKey: c.apiKey }))).toEqual([
      'docs/notes.txt',
      'docs/report_100%.pdf',
    ]);
    expect(names(await call('GET', `${STORAGE}/objects?sort=created_at`, { apiKey: c.apiKey }))[0]).toBe('root.txt');
    expect(names(await call('GET', `${STORAGE}/objects?sort=-name`, { apiKey: c.apiKey }))[0]).toBe('root.txt');
    for (const sort of ['name', '-name', 'size', '-size', 'created_at', '-created_at', 'updated_at']) {
      const seen: string[] = [];
      let after: string | null = null;
      do {
        const page: { status: number; body: { objects: { path: string }[]; next_cursor: string | null } } = await call(
          'GET',
          `${STORAGE}/objects?sort=${sort}&first=2${after ? `&after=${after}` : ''}`,
          { apiKey: c.apiKey },
        );
        expect(page.status).toBe(200);
        seen.push(...page.body.objects.map((o) => o.path));
        after = page.body.next_cursor;
      } while (after);
      expect(seen.sort()).toEqual([
        'docs/notes.txt',
        'docs/report_100%.pdf',
        'img/a.png',
        'img/b.png',
        'img/thumbs/a.png',
        'root.txt',
      ]);
    }
  });

  it('refuses a bad sort, a foreign cursor, a bad page size and a bad status with 400', async () => {
    const first = await call('GET', `${STORAGE}/objects?first=1`, { apiKey: c.apiKey });
    for (const q of [
      'sort=owner',
      'first=0',
      'first=5000',
      'first=abc',
      'status=deleted',
      'after=garbage',
      `sort=size&after=${first.body.next_cursor}`,
      'folder=../etc',
      'recursive=maybe',
    ]) {
      const r = await call('GET', `${STORAGE}/objects?${q}`, { apiKey: c.apiKey });
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
      expect(r.body.error.message.length).toBeGreaterThan(5);
    }
  });

  it('lists folders with the count and bytes of their objects', async () => {
    const r = await call('GET', `${STORAGE}/folders`, { apiKey: c.apiKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      folders: [
        { folder: '', objects: 1, bytes: 1 },
        { folder: 'docs', objects: 2, bytes: 12 },
        { folder: 'img', objects: 2, bytes: 3 },
        { folder: 'img/thumbs', objects: 1, bytes: 4 },
      ],
      next_cursor: null,
    });
    const page1 = await call('GET', `${STORAGE}/folders?first=1`, { apiKey: c.apiKey });
    expect(page1.body.folders).toEqual([{ folder: '', objects: 1, bytes: 1 }]);
    const page2 = await call('GET', `${STORAGE}/folders?first=2&after=${page1.body.next_cursor}`, { apiKey: c.apiKey });
    expect(page2.body.folders.map((f: { folder: string }) => f.folder)).toEqual(['docs', 'img']);
    expect(
      (await call('GET', `${STORAGE}/folders?prefix=img`, { apiKey: c.apiKey })).body.folders.map(
        (f: { folder: string }) => f.folder,
      ),
    ).toEqual(['img', 'img/thumbs']);
    expect((await call('GET', `${STORAGE}/folders?after=nope`, { apiKey: c.apiKey })).status).toBe(400);
  });

  it("reports usage per folder against the plan's quota, pending uploads included", async () => {
    const r = await call('GET', `${STORAGE}/usage`, { apiKey: c.apiKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      usage: {
        objects: 6,
        bytes: 20,
        pending_objects: 1,
        pending_bytes: 10,
        quota_bytes: 1024 ** 3,
        remaining_bytes: 1024 ** 3 - 30,
        max_upload_bytes: 20 * 1024 * 1024,
        folders: [
          { folder: '', objects: 1, bytes: 1 },
          { folder: 'docs', objects: 2, bytes: 12 },
          { folder: 'img', objects: 2, bytes: 3 },
          { folder: 'img/thumbs', objects: 1, bytes: 4 },
        ],
      },
    });
  });
});

describe('deleting objects', () => {
  it('removes the bytes from the blob store, and a second delete answers 404', async () => {
    const id = (await put(p.url, a, 'trash', 'gone.txt', 'bye')).body.object.id as string;
    expect(fs.existsSync(blobFile(a.id, id))).toBe(true);
    expect((await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey })).status).toBe(204);
    expect(fs.existsSync(blobFile(a.id, id))).toBe(false);
    const again = await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');
    expect((await download(p.url, id, { apiKey: a.apiKey })).status).toBe(404);
    expect((await call('GET', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey })).status).toBe(404);
  });

  it('deletes a pending upload too, and answers 404 for unknown and malformed ids', async () => {
    const id = (await put(p.url, a, 'trash', 'pending.txt', 'p', { confirm: false })).body.object.id as string;
    expect((await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey })).status).toBe(204);
    expect(fs.existsSync(blobFile(a.id, id))).toBe(false);
    expect((await call('DELETE', `${STORAGE}/objects/${crypto.randomUUID()}`, { apiKey: a.apiKey })).status).toBe(404);
    expect((await call('DELETE', `${STORAGE}/objects/not-a-uuid`, { apiKey: a.apiKey })).status).toBe(404);
    expect((await call('DELETE', `${STORAGE}/objects/..%2F..%2Fetc%2Fpasswd`, { apiKey: a.apiKey })).status).toBe(404);
    expect((await download(p.url, 'not-a-uuid', { apiKey: a.apiKey })).status).toBe(404);
  });
});

describe('policies', () => {
  it('are created, listed and deleted with the API key (id as ?id=, in the body, or in the path)', async () => {
    const c = await newStorageProject(p.url);
    const mk = (name: string) =>
      call('POST', `${STORAGE}/policies`, {
        apiKey: c.apiKey,
        body: { name, folder: 'pub', operations: ['read', 'list'], principal: 'public' },
      });
    const one = await mk('one');
    expect(one.status).toBe(201);
    expect(one.body.policy).toEqual({
      id: expect.any(String),
      name: 'one',
      folder: 'pub',
      operations: ['read', 'list'],
      principal: 'public',
      content_types: null,
      created_at: expect.any(String),
    });
    const withTypes = await call('POST', `${STORAGE}/policies`, {
      apiKey: c.apiKey,
      body: {
        name: 'avatars',
        folder: 'avatars/',
        operations: ['write'],
        principal: 'authenticated',
        content_types: ['image/*', 'application/pdf'],
      },
    });
    expect(withTypes.body.policy).toMatchObject({ folder: 'avatars', content_types: ['image/*', 'application/pdf'] });
    const two = await mk('two');
    expect((await mk('one')).status).toBe(409);

    const list = await call('GET', `${STORAGE}/policies`, { apiKey: c.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.policies.map((x: { name: string }) => x.name)).toEqual(['one', 'avatars', 'two']);
    expect(list.body.next_cursor).toBeNull();
    const page = await call('GET', `${STORAGE}/policies?first=2`, { apiKey: c.apiKey });
    expect(page.body.policies).toHaveLength(2);
    expect(
      (await call('GET', `${STORAGE}/policies?after=${page.body.next_cursor}`, { apiKey: c.apiKey })).body.policies.map(
        (x: { name: string }) => x.name,
      ),
    ).toEqual(['two']);

    expect((await call('DELETE', `${STORAGE}/policies?id=${one.body.policy.id}`, { apiKey: c.apiKey })).status).toBe(
      204,
    );
    expect(
      (await call('DELETE', `${STORAGE}/policies`, { apiKey: c.apiKey, body: { id: two.body.policy.id } })).status,
    ).toBe(204);
    expect((await call('DELETE', `${STORAGE}/policies/${withTypes.body.policy.id}`, { apiKey: c.apiKey })).status).toBe(
      204,
    );
    expect((await call('DELETE', `${STORAGE}/policies?id=${one.body.policy.id}`, { apiKey: c.apiKey })).status).toBe(
      404,
    );
    expect((await call('GET', `${STORAGE}/policies`, { apiKey: c.apiKey })).body.policies).toEqual([]);
  });

  it('refuses bad policy bodies with 400 naming the field', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ folder: 'x', operations: ['read'], principal: 'public' }, 'name'],
      [{ name: 'a', operations: ['read'], principal: 'everyone' }, 'principal'],
      [{ name: 'a', operations: [], principal: 'public' }, 'operations'],
      [{ name: 'a', operations: ['execute'], principal: 'public' }, 'operations'],
      [{ name: 'a', folder: '../up', operations: ['read'], principal: 'public' }, 'folder'],
      [{ name: 'a', folder: '/abs', operations: ['read'], principal: 'public' }, 'folder'],
      [{ name: 'a', operations: ['write'], principal: 'public', content_types: ['not a type'] }, 'content_types'],
      [{ name: 'a', operations: ['read'], principal: 'role:' }, 'principal'],
    ];
    for (const [body, field] of bad) {
      const r = await call('POST', `${STORAGE}/policies`, { apiKey: a.apiKey, body });
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(r.body.error.message).toContain(field);
    }
    expect((await call('POST', `${STORAGE}/policies`, { apiKey: a.apiKey, raw: '[1,2]' })).status).toBe(400);
    expect((await call('DELETE', `${STORAGE}/policies`, { apiKey: a.apiKey })).status).toBe(400);
    expect((await call('DELETE', `${STORAGE}/policies?id=nope`, { apiKey: a.apiKey })).status).toBe(404);
  });

  it("are managed only with the project's own API key", async () => {
    const body = { name: 'x', operations: ['read'], principal: 'public' };
    expect((await call('POST', `${STORAGE}/policies`, { body })).status).toBe(401);
    expect((await call('GET', `${STORAGE}/policies`)).status).toBe(401);
    expect((await call('GET', `${STORAGE}/policies`, { apiKey: 'tsk_garbage' })).status).toBe(401);
    expect((await call('GET', `${STORAGE}/policies`, { token: a.tenantToken })).status).toBe(403);
    const mine = await call('POST', `${STORAGE}/policies`, { apiKey: a.apiKey, body: { ...body, name: 'mine' } });
    expect((await call('DELETE', `${STORAGE}/policies?id=${mine.body.policy.id}`, { apiKey: b.apiKey })).status).toBe(
      404,
    );
    expect(
      (await call('GET', `${STORAGE}/policies`, { apiKey: b.apiKey })).body.policies.map(
        (x: { name: string }) => x.name,
      ),
    ).not.toContain('mine');
    expect((await call('DELETE', `${STORAGE}/policies?id=${mine.body.policy.id}`, { apiKey: a.apiKey })).status).toBe(
      204,
    );
  });
});

describe('anonymous callers', () => {
  it('download, list and upload exactly where a public policy allows, naming the project for listing', async () => {
    const c = await newStorageProject(p.url);
    const pub = (await put(p.url, c, 'public/img', 'logo.txt', 'LOGO')).body.object.id as string;
    const priv = (await put(p.url, c, 'private', 'secret.txt', 'SECRET')).body.object.id as string;
    expect((await download(p.url, pub)).status).toBe(401);

    await call('POST', `${STORAGE}/policies`, {
      apiKey: c.apiKey,
      body: { name: 'public read', folder: 'public', operations: ['read', 'list'], principal: 'public' },
    });
    const got = await download(p.url, pub);
    expect([got.status, got.bytes.toString()]).toEqual([200, 'LOGO']);
    const denied = await download(p.url, priv);
    expect(denied.status).toBe(401);
    expect(denied.json.error.code).toBe('UNAUTHENTICATED');

    expect((await call('GET', `${STORAGE}/objects`)).status).toBe(401);
    const listed = await call('GET', `${STORAGE}/objects?project_id=${c.id}`);
    expect(listed.status).toBe(200);
    expect(listed.body.objects.map((o: { path: string }) => o.path)).toEqual(['public/img/logo.txt']);
    expect((await call('GET', `${STORAGE}/folders?project_id=${c.id}`)).body.folders).toEqual([
      { folder: 'public/img', objects: 1, bytes: 4 },
    ]);
    expect((await call('GET', `${STORAGE}/objects?project_id=${b.id}`)).status).toBe(401);
    expect((await call('GET', `${STORAGE}/objects?project_id=not-a-uuid`)).status).toBe(400);
    expect((await call('GET', `${STORAGE}/usage?project_id=${c.id}`)).status).toBe(401);

    const noWrite = await upload(p.url, [
      { name: 'project_id', value: c.id },
      { name: 'folder', value: 'public' },
      { name: 'file', filename: 'a.txt', body: Buffer.from('a') },
    ]);
    expect(noWrite.status).toBe(401);
    await call('POST', `${STORAGE}/policies`, {
      apiKey: c.apiKey,
      body: {
        name: 'drop box',
        folder: 'inbox',
        operations: ['write'],
        principal: 'public',
        content_types: ['text/plain'],
      },
    });
    const dropped = await upload(p.url, [
      { name: 'project_id', value: c.id },
      { name: 'folder', value: 'inbox' },
      { name: 'confirm', value: 'true' },
      { name: 'file', filename: 'a.txt', contentType: 'text/plain', body: Buffer.from('a') },
    ]);
    expect(dropped.status).toBe(201);
    expect(dropped.body.object).toMatchObject({ project_id: c.id, owner_id: null, status: 'ready' });
    const wrongType = await upload(p.url, [
      { name: 'project_id', value: c.id },
      { name: 'folder', value: 'inbox' },
      { name: 'file', filename: 'a.html', contentType: 'text/html', body: Buffer.from('<b>') },
    ]);
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    // Write does not grant read, nor delete.
    expect((await download(p.url, dropped.body.object.id)).status).toBe(401);
    expect((await call('DELETE', `${STORAGE}/objects/${dropped.body.object.id}`)).status).toBe(401);
  });
});

describe('credentials', () => {
  it("refuses missing, garbage and tenant credentials, and hides other projects' objects", async () => {
    const id = (await put(p.url, a, 'mine', 'a.txt', 'A')).body.object.id as string;
    const file = [{ name: 'file', filename: 'a.txt', body: Buffer.from('a') }];
    expect((await upload(p.url, file)).status).toBe(401);
    expect((await upload(p.url, file, { apiKey: 'tsk_garbage' })).status).toBe(401);
    expect((await upload(p.url, file, { token: 'not-a-jwt' })).status).toBe(401);
    expect((await upload(p.url, file, { token: a.tenantToken })).status).toBe(403);
    expect((await download(p.url, id, { apiKey: 'tsk_garbage' })).status).toBe(401);
    expect((await download(p.url, id, { token: a.tenantToken })).status).toBe(403);
    // Another project's key: the object does not exist for it.
    expect((await download(p.url, id, { apiKey: b.apiKey })).status).toBe(404);
    expect((await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey: b.apiKey })).status).toBe(404);
    expect((await call('POST', `${STORAGE}/upload/confirm`, { apiKey: b.apiKey, body: { id } })).status).toBe(404);
    expect(
      (await call('GET', `${STORAGE}/objects`, { apiKey: b.apiKey })).body.objects.map((o: { id: string }) => o.id),
    ).not.toContain(id);
    expect((await call('GET', `${STORAGE}/objects?project_id=${a.id}`, { apiKey: b.apiKey })).status).toBe(404);
    expect((await upload(p.url, [{ name: 'project_id', value: a.id }, ...file], { apiKey: b.apiKey })).status).toBe(
      404,
    );
    expect((await call('GET', `${STORAGE}/usage`, { token: a.tenantToken })).status).toBe(403);
    expect((await call('GET', `${STORAGE}/usage`)).status).toBe(401);
  });
});

describe('bad uploads', () => {
  const file = (filename: string) => ({ name: 'file', filename, body: Buffer.from('x') });

  it('refuses path traversal, absolute paths, NUL bytes, control characters and overlong names', async () => {
    const cases: [string, { folder?: string; name?: string }][] = [
      ['dot-dot name', { name: '..' }],
      ['traversal in name', { name: '../../etc/passwd' }],
      ['slash in name', { name: 'a/b.txt' }],
      ['backslash in name', { name: '..\\..\\win.ini' }],
      ['absolute name', { name: '/etc/passwd' }],
      ['windows absolute name', { name: 'C:\\boot.ini' }],
      ['NUL in name', { name: 'a\u0000.txt' }],
      ['newline in name', { name: 'a\nb.txt' }],
      ['escape in name', { name: 'a\u001b[31m.txt' }],
      ['DEL in name', { name: 'a\u007f.txt' }],
      ['overlong name', { name: 'n'.repeat(256) }],
      ['overlong UTF-8 name', { name: 'é'.repeat(128) }],
      ['blank name', { name: '   ' }],
      ['traversal in folder', { folder: 'a/../../b' }],
      ['dot folder', { folder: './a' }],
      ['absolute folder', { folder: '/etc' }],
      ['double slash folder', { folder: 'a//b' }],
      ['NUL in folder', { folder: 'a\u0000b' }],
      ['backslash folder', { folder: 'a\\..\\b' }],
      ['overlong folder', { folder: 'f'.repeat(600) }],
      ['too deep folder', { folder: Array(20).fill('d').join('/') }],
    ];
    for (const [what, { folder, name }] of cases) {
      // Through the query string (the multipart header cannot carry every byte).
      const q = new URLSearchParams({
        ...(folder !== undefined ? { folder } : {}),
        ...(name !== undefined ? { name } : {}),
      }).toString();
      const r = await upload(p.url, [file('ok.txt')], { apiKey: a.apiKey, query: q });
      expect({ what, status: r.status, code: r.body?.error?.code }).toEqual({
        what,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    // Through the file part's own name and form fields as well.
    expect((await upload(p.url, [file('../../escape.txt')], { apiKey: a.apiKey })).status).toBe(400);
    expect(
      (await upload(p.url, [{ name: 'folder', value: '../up' }, file('a.txt')], { apiKey: a.apiKey })).status,
    ).toBe(400);
    // Nothing was stored for the project outside its own blob folder.
    const root = path.join(p.dataDir, 'blobs');
    expect(fs.readdirSync(root).every((d) => d === '.partial' || /^[0-9a-f-]{36}$/.test(d))).toBe(true);
    expect(fs.existsSync(path.join(p.dataDir, 'escape.txt'))).toBe(false);
  });

  it('refuses bodies that are not a proper multipart upload with a clear 4xx', async () => {
    const json = await call('POST', `${STORAGE}/upload`, { apiKey: a.apiKey, body: { file: 'abc' } });
    expect(json.status).toBe(415);
    expect((await upload(p.url, [{ name: 'folder', value: 'x' }], { apiKey: a.apiKey })).body.error.message).toContain(
      'file',
    );
    expect(
      (await upload(p.url, [{ name: 'other', filename: 'a.txt', body: Buffer.from('a') }], { apiKey: a.apiKey }))
        .status,
    ).toBe(400);
    const late = await upload(p.url, [file('a.txt'), { name: 'folder', value: 'late' }], { apiKey: a.apiKey });
    expect(late.status).toBe(400);
    expect(late.body.error.message).toContain('before the file');
    expect((await upload(p.url, [file('a.txt'), file('b.txt')], { apiKey: a.apiKey })).status).toBe(400);
    expect(
      (await upload(p.url, [{ name: 'confirm', value: 'perhaps' }, file('a.txt')], { apiKey: a.apiKey })).status,
    ).toBe(400);
    expect(
      (await upload(p.url, [{ name: 'content_type', value: 'text/html\r\nx: y' }, file('a.txt')], { apiKey: a.apiKey }))
        .status,
    ).toBe(400);
    const noBoundary = await fetch(`${p.url}${STORAGE}/upload`, {
      method: 'POST',
      headers: { 'x-api-key': a.apiKey, 'content-type': 'multipart/form-data' },
      body: 'x',
    });
    expect(noBoundary.status).toBe(400);
    const truncated = await fetch(`${p.url}${STORAGE}/upload`, {
      method: 'POST',
      headers: { 'x-api-key': a.apiKey, 'content-type': 'multipart/form-data; boundary=abc' },
      body: '--abc\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\npartial',
    });
    expect(truncated.status).toBe(400);
    // None of the refused uploads left an object behind.
    const pending = await call('GET', `${STORAGE}/objects?status=pending&prefix=a.txt`, { apiKey: a.apiKey });
    expect(pending.body.objects).toEqual([]);
  });

  it('refuses an upload past the largest upload with 413 and keeps nothing', async () => {
    const count = () =>
      fs.existsSync(path.join(p.dataDir, 'blobs', a.id))
        ? fs.readdirSync(path.join(p.dataDir, 'blobs', a.id)).length
        : 0;
    const before = count();
    const r = await upload(p.url, [{ name: 'file', filename: 'big.bin', body: Buffer.alloc(20 * 1024 * 1024 + 1) }], {
      apiKey: a.apiKey,
    });
    expect(r.status).toBe(413);
    expect(r.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { max_bytes: 20 * 1024 * 1024 } });
    expect(count()).toBe(before);
    expect(fs.readdirSync(path.join(p.dataDir, 'blobs', '.partial'))).toEqual([]);
  });

  it('refuses a bad confirm body', async () => {
    expect((await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, body: {} })).status).toBe(400);
    expect((await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, body: { id: ['x'] } })).status).toBe(
      400,
    );
    expect(
      (await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, body: { id: crypto.randomUUID() } })).status,
    ).toBe(404);
    expect((await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, raw: 'not json' })).status).toBe(400);
  });
});

describe('the project life cycle', () => {
  it("removes a deleted project's objects and bytes", async () => {
    const c = await newStorageProject(p.url);
    const id = (await put(p.url, c, 'x', 'a.txt', 'A')).body.object.id as string;
    await put(p.url, c, 'x', 'b.txt', 'B', { confirm: false });
    expect(fs.existsSync(path.join(p.dataDir, 'blobs', c.id))).toBe(true);
    expect((await call('DELETE', `/auth/api/v1/projects/${c.id}`, { token: c.tenantToken })).status).toBe(204);
    await waitFor(() => !fs.existsSync(path.join(p.dataDir, 'blobs', c.id)), {
      message: "the project's blob folder to go",
    });
    expect(fs.existsSync(blobFile(c.id, id))).toBe(false);
  }, 30_000);
});
