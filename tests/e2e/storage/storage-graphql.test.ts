// Storage through /graphql in one-process mode: object metadata queries and mutations, usage with the
// plan's quota (federated from tenant management), and uploads with the GraphQL multipart request spec.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { newStorageProject, put, type StorageProject } from './storage-fixtures.ts';
import { graphqlUploads } from './storage-flows.ts';

let p: TestPlatform;
let a: StorageProject;

beforeAll(async () => {
  p = await startOneProcess();
  a = await newStorageProject(p.url);
}, 60_000);

afterAll(async () => {
  await p?.close();
});

async function gql(query: string, variables: Record<string, unknown> = {}, apiKey: string | undefined = a.apiKey) {
  const res = await fetch(`${p.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: res.status,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    body: (await res.json()) as { data?: any; errors?: { message: string; extensions: { code: string } }[] },
  };
}

describe('storage over GraphQL', () => {
  it('lists, reads, confirms and deletes objects, and reports usage against the plan', async () => {
    const id = (await put(p.url, a, 'gql', 'one.txt', 'one', { confirm: false })).body.object.id as string;
    const confirmed = await gql('mutation($id: ID!) { confirmStorageUpload(id: $id) { id status confirmedAt } }', {
      id,
    });
    expect(confirmed.body.data.confirmStorageUpload).toMatchObject({ id, status: 'ready' });
    const listed = await gql(
      '{ storageObjects(folder: "gql") { items { id path size downloadUrl } nextCursor } storageFolders { items { folder objects bytes } } }',
    );
    expect(listed.body.data.storageObjects).toEqual({
      items: [{ id, path: 'gql/one.txt', size: 3, downloadUrl: `/storage/api/v1/storage/download/${id}` }],
      nextCursor: null,
    });
    expect(listed.body.data.storageFolders.items).toContainEqual({ folder: 'gql', objects: 1, bytes: 3 });
    const usage = await gql('{ storageProject { id storageUsage { objects bytes quotaBytes maxUploadBytes } } }');
    expect(usage.body.data.storageProject).toEqual({
      id: a.id,
      storageUsage: { objects: 1, bytes: 3, quotaBytes: 1024 ** 3, maxUploadBytes: 50 * 1024 ** 2 },
    });
    expect((await gql('mutation($id: ID!) { deleteStorageObject(id: $id) }', { id })).body.data).toEqual({
      deleteStorageObject: true,
    });
    const again = await gql('mutation($id: ID!) { deleteStorageObject(id: $id) }', { id });
    expect(again.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('does not expose the front-door-only upload operations', async () => {
    const r = await gql('mutation { _beginStorageUpload(input: { name: "x" }) { id } }');
    expect(r.status).toBe(400);
    expect(r.body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const c = await gql(
      'mutation { _completeStorageUpload(id: "00000000-0000-0000-0000-000000000000", size: 1, sha256: "x") { id } }',
    );
    expect(c.body.errors?.[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  graphqlUploads(() => p); // the same in split mode: storage-graphql-split.test.ts
});
