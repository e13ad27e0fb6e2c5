// Storage flows that must behave the same in one process and in split mode: each suite below is called by a
// one-process test file and by its split-mode sibling, each with its own platform, so Jest runs them in parallel.
import crypto from 'node:crypto';
import { expect, it } from '@jest/globals';
import {
  STORAGE,
  client,
  download,
  generated,
  multipart,
  newStorageProject,
  put,
  type Part,
  type StorageProject,
} from './storage-fixtures.ts';

/** The platform a suite runs against (read when the tests run, after the file's beforeAll). */
export type FlowTarget = () => { url: string };

export type GqlBody = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data?: any;
  errors?: { message: string; extensions: { code: string; http?: { status: number } } }[];
  error?: { code: string };
};

const UPLOAD = `mutation($file: Upload!, $folder: String, $confirm: Boolean) {
  uploadStorageObject(file: $file, folder: $folder, confirm: $confirm) { id name folder size sha256 status contentType }
}`;

/** A GraphQL multipart request (operations, map, then the file) to `url`. */
export async function gqlUpload(
  url: string,
  file: Buffer | (() => AsyncIterable<Uint8Array>),
  variables: Record<string, unknown>,
  headers: Record<string, string>,
  filename = 'g.bin',
) {
  const parts: Part[] = [
    { name: 'operations', value: JSON.stringify({ query: UPLOAD, variables: { ...variables, file: null } }) },
    { name: 'map', value: JSON.stringify({ 0: ['variables.file'] }) },
    { name: '0', filename, contentType: 'application/octet-stream', body: file },
  ];
  const { body, contentType } = multipart(parts);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, body: (await res.json()) as GqlBody };
}

/** The headers of a GraphQL upload with the project's key. */
export const withKey = (a: StorageProject) => ({ 'x-api-key': a.apiKey, 'apollo-require-preflight': 'true' });

/** REST: upload, confirm, list, a ranged download, usage and delete, on a fresh project. */
export function objectLifecycle(target: FlowTarget): void {
  it('uploads, confirms, lists, downloads a range of and deletes an object', async () => {
    const { url } = target();
    const call = client(url);
    const a = await newStorageProject(url);
    const up = await put(url, a, 'flow', 'a.txt', 'across processes', { confirm: false });
    expect({ status: up.status, body: up.body }).toMatchObject({ status: 201 });
    const id = up.body.object.id as string;
    expect(
      (await call('POST', `${STORAGE}/upload/confirm`, { apiKey: a.apiKey, body: { id } })).body.object.status,
    ).toBe('ready');
    expect(
      (await call('GET', `${STORAGE}/objects?folder=flow`, { apiKey: a.apiKey })).body.objects.map(
        (o: { id: string }) => o.id,
      ),
    ).toEqual([id]);
    const r = await download(url, id, { apiKey: a.apiKey, headers: { range: 'bytes=0-5' } });
    expect([r.status, r.bytes.toString()]).toEqual([206, 'across']);
    expect((await call('GET', `${STORAGE}/usage`, { apiKey: a.apiKey })).body.usage).toMatchObject({
      objects: 1,
      bytes: 16,
      quota_bytes: 1024 ** 3,
    });
    expect((await call('DELETE', `${STORAGE}/objects/${id}`, { apiKey: a.apiKey })).status).toBe(204);
    expect((await download(url, id, { apiKey: a.apiKey })).status).toBe(404);
  }, 60_000);
}

/** GraphQL multipart uploads: a file streamed through /graphql comes back byte-identical; refusals store nothing. */
export function graphqlUploads(target: FlowTarget): void {
  it('streams a file through /graphql to storage and downloads it back byte-identical', async () => {
    const { url } = target();
    const a = await newStorageProject(url);
    const content = crypto.randomBytes(3 * 1024 * 1024 + 17);
    const r = await gqlUpload(
      `${url}/graphql`,
      content,
      { folder: 'gql-up', confirm: true },
      withKey(a),
      'données.bin',
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.status).toBe(200);
    expect(r.body.data.uploadStorageObject).toMatchObject({
      name: 'données.bin',
      folder: 'gql-up',
      size: content.length,
      status: 'ready',
      contentType: 'application/octet-stream',
      sha256: crypto.createHash('sha256').update(content).digest('hex'),
    });
    const got = await download(url, r.body.data.uploadStorageObject.id, { apiKey: a.apiKey });
    expect(got.status).toBe(200);
    expect(got.bytes.equals(content)).toBe(true);
  }, 60_000);

  it("answers the storage domain's refusals, missing credentials and a missing preflight header, and stores nothing", async () => {
    const { url } = target();
    const a = await newStorageProject(url);
    const bad = await gqlUpload(`${url}/graphql`, Buffer.from('x'), { folder: '../etc' }, withKey(a));
    expect(bad.body.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');
    // Refused before its first byte is read, while the client is still sending it.
    const badBig = await gqlUpload(`${url}/graphql`, generated(20 * 1024 * 1024), { folder: '../etc' }, withKey(a));
    expect(badBig.body.errors?.[0]?.extensions.code).toBe('VALIDATION_FAILED');
    const anonymous = await gqlUpload(
      `${url}/graphql`,
      Buffer.from('x'),
      { folder: 'a' },
      { 'apollo-require-preflight': 'true' },
    );
    expect(anonymous.body.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    const garbage = await gqlUpload(
      `${url}/graphql`,
      Buffer.from('x'),
      { folder: 'a' },
      { 'x-api-key': 'tsk_garbage', 'apollo-require-preflight': 'true' },
    );
    expect(garbage.status).toBe(401);
    const noPreflight = await gqlUpload(`${url}/graphql`, Buffer.from('x'), {}, { 'x-api-key': a.apiKey });
    // /graphql answers GraphQL-shaped errors, also before execution.
    expect(noPreflight.status).toBe(400);
    expect(noPreflight.body).toMatchObject({
      errors: [{ extensions: { code: 'BAD_REQUEST', http: { status: 400 } } }],
    });
    const listed = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey },
      body: JSON.stringify({ query: '{ storageObjects(folder: "a") { items { id } } }' }),
    });
    expect(((await listed.json()) as GqlBody).data.storageObjects.items).toEqual([]);
  }, 60_000);
}
