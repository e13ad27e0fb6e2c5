// Split mode: the front door caches credentials in its own process. A credential ended through ANOTHER
// process (here the router process, which hands the change to the tenant subgraph's process) must be
// refused by the front door on the very next request: the change reaches it as a broadcast.
import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { SPLIT_START_HOOK_MS, startSplit, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';

type Layout = { router: { url: string } };

let counter = 0;

describe('split mode: credentials ended through another process stop working at the front door at once', () => {
  let p: TestPlatform;
  let front: ReturnType<typeof client>;
  let router: ReturnType<typeof client>;

  const signIn = async (): Promise<string> => {
    const email = `split-cache-${Date.now()}-${counter++}@example.com`;
    expect(
      (await front('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } })).status,
    ).toBe(201);
    const login = await front('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } });
    expect(login.status).toBe(200);
    return login.body.access_token as string;
  };
  const newProject = async (token: string): Promise<{ id: string; apiKey: string }> => {
    const res = await front('POST', '/auth/api/v1/projects', { token, body: { name: 'cached' } });
    expect(res.status).toBe(201);
    return { id: res.body.project.id, apiKey: res.body.project.api_key };
  };
  /** A mutation sent to the router process, not the front door. */
  const viaRouter = async (token: string, query: string, variables: Record<string, unknown> = {}): Promise<Res> => {
    const res = await router('POST', '/graphql', { token, body: { query, variables } });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    return res;
  };
  const twice = async (request: () => Promise<Res>): Promise<void> => {
    expect((await request()).status).toBe(200);
    expect((await request()).status).toBe(200);
  };

  beforeAll(async () => {
    p = await startSplit();
    front = client(p.url);
    const layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as Layout;
    router = client(layout.router.url);
  }, SPLIT_START_HOOK_MS);
  afterAll(async () => {
    await p?.close();
  }, 60_000);

  it('refuses an API key regenerated through the router process', async () => {
    const token = await signIn();
    const project = await newProject(token);
    await twice(() => front('GET', '/v1/publication', { apiKey: project.apiKey }));
    await viaRouter(token, 'mutation($id: ID!) { regenerateProjectKey(id: $id) { id } }', { id: project.id });
    const res = await front('GET', '/v1/publication', { apiKey: project.apiKey });
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 401, code: 'INVALID_API_KEY' });
  }, 30_000);

  it('refuses the API key of a project deleted through the router process', async () => {
    const token = await signIn();
    const project = await newProject(token);
    await twice(() => front('GET', '/v1/publication', { apiKey: project.apiKey }));
    await viaRouter(token, 'mutation($id: ID!) { deleteProject(id: $id) }', { id: project.id });
    const res = await front('GET', '/v1/publication', { apiKey: project.apiKey });
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 401, code: 'INVALID_API_KEY' });
  }, 30_000);

  it('refuses a tenant token whose session logged out through the router process', async () => {
    const token = await signIn();
    await twice(() => front('GET', '/auth/api/v1/projects', { token }));
    await viaRouter(token, 'mutation { logout }');
    const res = await front('GET', '/auth/api/v1/projects', { token });
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 401, code: 'INVALID_TOKEN' });
  }, 30_000);
});
