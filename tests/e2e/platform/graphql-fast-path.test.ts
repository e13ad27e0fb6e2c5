// `/graphql` queries one subgraph answers alone go straight to that subgraph (the REST routes' fast path, router.ts
// `fastQuery`) instead of through @apollo/gateway. The caller cannot tell: each answer here is compared byte for
// byte, with its status and headers, to the gateway's answer to the same request (sent with `"extensions": {}`,
// which the fast path leaves to Apollo Server). What the fast path does not take — introspection, mutations, several
// subgraphs, invalid documents, answers with errors, other Accept types — goes to the gateway as before.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { newStorageProject, type StorageProject } from '../storage/storage-fixtures.ts';
import type { RequestContext } from '../../../platform/auth.ts';

let platform: TestPlatform;
let project: StorageProject;

beforeAll(async () => {
  platform = await startOneProcess();
  project = await newStorageProject(platform.url);
}, 120_000);
afterAll(async () => await platform?.close());

type Raw = { status: number; text: string; headers: Record<string, string> };
const VOLATILE = new Set(['date', 'x-request-id', 'content-length', 'connection', 'keep-alive']);

async function post(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await fetch(`${platform.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey, ...headers },
    body: JSON.stringify(body),
  });
  const kept = Object.fromEntries([...res.headers].filter(([k]) => !VOLATILE.has(k)));
  return { status: res.status, text: await res.text(), headers: kept };
}

/** The answer as a client gets it, and the gateway's answer to the same request. */
async function bothWays(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return { fast: await post(body, headers), gateway: await post({ ...body, extensions: {} }, headers) };
}

const ctx = (): RequestContext => ({
  requestId: 'fast-path-test',
  principal: { kind: 'project', projectId: project.id, tenantId: null } as unknown as RequestContext['principal'],
});

const ELIGIBLE: [string, string, Record<string, unknown> | undefined][] = [
  [
    'the benchmark query',
    'query P3($id: ID!) { project(id: $id) { id name apiKeyPrefix createdAt updatedAt } }',
    { id: '' },
  ],
  [
    'aliases and a fragment',
    'query A($id: ID!) { a: project(id: $id) { ...F } b: project(id: $id) { name } } fragment F on Project { id name }',
    { id: '' },
  ],
  [
    'a default value and @include',
    'query D($id: ID!, $more: Boolean = true, $less: Boolean = false) { project(id: $id) { id name @include(if: $more) apiKeyPrefix @include(if: $less) } }',
    { id: '' },
  ],
  ['another subgraph, no variables', '{ storageFolders { items { folder objects bytes } nextCursor } }', undefined],
  [
    'a page of functions, with an argument',
    'query { edgeFunctions(first: 5) { items { name } nextCursor } }',
    undefined,
  ],
];

describe('/graphql fast path', () => {
  it.each(ELIGIBLE)('answers %s exactly as the gateway does', async (_what, query, vars) => {
    const variables = vars && { ...vars, id: project.id };
    const { fast, gateway } = await bothWays({ query, ...(variables ? { variables } : {}) });
    expect(fast).toEqual(gateway);
    expect(fast.status).toBe(200);
    expect(JSON.parse(fast.text).errors).toBeUndefined();
    // And the router did take the fast path for it.
    expect(await platform.tessera!.router.fastQuery(query, undefined, variables, ctx())).toEqual(JSON.parse(fast.text));
  });

  it('gives the same answer with or without the operation name', async () => {
    const query = ELIGIBLE[0]![1];
    const variables = { id: project.id };
    const named = await post({ query, variables, operationName: 'P3' });
    const unnamed = await post({ query, variables, operationName: null });
    expect(named).toEqual(unnamed);
    expect(named.status).toBe(200);
  });

  it.each([
    ['introspection beside a field', '{ __schema { queryType { name } } storageFolders { nextCursor } }'],
    ['only __typename', '{ __typename }'],
    ['a mutation', 'mutation { deleteStorageObject(id: "00000000-0000-0000-0000-000000000000") }'],
    ['two subgraphs', 'query($id: ID!) { project(id: $id) { id storageUsage { bytes } } }'],
    ['an unknown field', '{ storageFolders { nope } }'],
    ['a syntax error', '{ storageFolders { '],
    ['an internal field', '{ _projectPlanLimits(projectId: "x") { maxRequestsPerMinute } }'],
    ['two operations', 'query A { storageFolders { nextCursor } } query B { plans { id } }'],
  ])('leaves %s to the gateway, whose answer is unchanged', async (_what, query) => {
    const variables = { id: project.id };
    expect(await platform.tessera!.router.fastQuery(query, undefined, variables, ctx())).toBeNull();
    const { fast, gateway } = await bothWays({ query, variables });
    expect(fast).toEqual(gateway);
  });

  it('leaves an answer with errors to the gateway: the caller gets its status and error shape', async () => {
    const query = 'query P3($id: ID!) { project(id: $id) { id name } }';
    const variables = { id: '00000000-0000-4000-8000-000000000000' };
    expect(await platform.tessera!.router.fastQuery(query, undefined, variables, ctx())).toBeNull();
    const { fast, gateway } = await bothWays({ query, variables });
    expect(fast).toEqual(gateway);
    expect(JSON.parse(fast.text).errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('leaves to Apollo Server what it alone decides: operation names, variables, Accept, content types', async () => {
    const query = ELIGIBLE[0]![1];
    const variables = { id: project.id };
    // An operation name the document does not define: 400 from the operation guard.
    const unknown = await post({ query, variables, operationName: 'Other' });
    expect(unknown.status).toBe(400);
    // Variables that are not an object, and a missing required variable.
    expect((await post({ query, variables: 'id' })).status).toBe(400);
    const missing = await post({ query });
    expect(JSON.parse(missing.text).errors[0].message).toMatch(/\$id/);
    // The GraphQL-over-HTTP media type, when asked for, is Apollo Server's to answer.
    const typed = await post({ query, variables }, { accept: 'application/graphql-response+json' });
    expect(typed.status).toBe(200);
    expect(typed.headers['content-type']).toMatch(/^application\/graphql-response\+json/);
    expect(JSON.parse(typed.text)).toEqual(JSON.parse((await post({ query, variables })).text));
  });
});
