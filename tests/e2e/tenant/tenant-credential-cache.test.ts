// The front door caches what the tenant subgraph says about an API key or a tenant token
// (router/credential-cache.ts). These tests warm the cache, check the credential really sits in it, end the
// credential through the API, and expect the very next request to be refused.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import type { CredentialCache } from '../../../router/credential-cache.ts';
import { waitFor } from '../../support/wait-for.ts';
import pg from 'pg';
import { REFRESH_REUSE_INTERVAL_SECONDS } from '../../../subgraphs/tenant/services/sessions.ts';

type Session = { access: string; refresh: string };

/** Moves every tenant session's last rotation past the refresh-token reuse interval. */
async function agePastReuseInterval(databaseUrl: string): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query('update tenant_sessions set last_refreshed_at = now() - make_interval(secs => $1)', [
      REFRESH_REUSE_INTERVAL_SECONDS + 1,
    ]);
  } finally {
    await c.end();
  }
}

let counter = 0;

function expectRefused(res: Res, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 401, code });
}

describe('cached credentials stop working on the very next request once ended (one process)', () => {
  let p: TestPlatform;
  let call: ReturnType<typeof client>;
  let cache: CredentialCache;

  const signIn = async (): Promise<Session> => {
    const email = `cache-${Date.now()}-${counter++}@example.com`;
    expect(
      (await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } })).status,
    ).toBe(201);
    const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } });
    expect(login.status).toBe(200);
    return { access: login.body.access_token, refresh: login.body.refresh_token };
  };
  const newProject = async (token: string): Promise<{ id: string; apiKey: string }> => {
    const res = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'cached' } });
    expect(res.status).toBe(201);
    return { id: res.body.project.id, apiKey: res.body.project.api_key };
  };
  /** Uses the credential twice and checks the second answer came with the credential in the cache. */
  const warm = async (creds: { apiKey?: string; bearer?: string }, request: () => Promise<Res>): Promise<void> => {
    expect((await request()).status).toBe(200);
    expect((await request()).status).toBe(200);
    expect(cache.peek(cache.keyOf(creds))).toBeDefined();
  };

  beforeAll(async () => {
    p = await startOneProcess();
    call = client(p.url);
    cache = p.tessera!.router.credentials;
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  it('refuses an API key on the request right after it was regenerated; the new key works', async () => {
    const s = await signIn();
    const project = await newProject(s.access);
    await warm({ apiKey: project.apiKey }, () => call('GET', '/v1/publication', { apiKey: project.apiKey }));
    const regenerated = await call('POST', `/auth/api/v1/projects/${project.id}/regenerate-key`, { token: s.access });
    expect(regenerated.status).toBe(200);
    expectRefused(await call('GET', '/v1/publication', { apiKey: project.apiKey }), 'INVALID_API_KEY');
    expect((await call('GET', '/v1/publication', { apiKey: regenerated.body.project.api_key })).status).toBe(200);
  });

  it("refuses a deleted project's API key on the next request, on the data API too", async () => {
    const s = await signIn();
    const project = await newProject(s.access);
    const find = () => call('POST', '/v1/rawSQL', { apiKey: project.apiKey, body: { sql: 'select 1 as one' } });
    await waitFor(async () => (await find()).status === 200, { message: 'project schema' });
    await warm({ apiKey: project.apiKey }, find);
    expect((await call('DELETE', `/auth/api/v1/projects/${project.id}`, { token: s.access })).status).toBe(204);
    expectRefused(await find(), 'INVALID_API_KEY');
    expectRefused(await call('GET', '/v1/publication', { apiKey: project.apiKey }), 'INVALID_API_KEY');
  });

  it('refuses a tenant access token on the request right after its session logged out', async () => {
    const s = await signIn();
    const project = await newProject(s.access);
    const other = await signIn(); // another session of another tenant stays signed in
    await warm({ bearer: s.access }, () => call('GET', `/auth/api/v1/projects/${project.id}`, { token: s.access }));
    await warm({ bearer: other.access }, () => call('GET', '/auth/api/v1/projects', { token: other.access }));
    expect((await call('POST', '/auth/api/v1/tenant/logout', { token: s.access })).status).toBe(204);
    expectRefused(await call('GET', `/auth/api/v1/projects/${project.id}`, { token: s.access }), 'INVALID_TOKEN');
    expect((await call('GET', '/auth/api/v1/projects', { token: other.access })).status).toBe(200);
  });

  it('refuses the access token of a session revoked for refresh-token reuse at once', async () => {
    const s = await signIn();
    await warm({ bearer: s.access }, () => call('GET', '/auth/api/v1/projects', { token: s.access }));
    expect((await call('POST', '/auth/api/v1/tenant/refresh', { body: { refresh_token: s.refresh } })).status).toBe(
      200,
    );
    // The rotated refresh token presented again after the reuse interval (within it, from the same address, it would get
    // the same new pair: two tabs refreshing at once): the session is revoked.
    await agePastReuseInterval(p.tessera!.config.databaseUrl!);
    expectRefused(
      await call('POST', '/auth/api/v1/tenant/refresh', { body: { refresh_token: s.refresh } }),
      'INVALID_TOKEN',
    );
    expectRefused(await call('GET', '/auth/api/v1/projects', { token: s.access }), 'INVALID_TOKEN');
  });

  it('never caches a wrong key: each attempt is checked and refused', async () => {
    const before = cache.size();
    for (let i = 0; i < 3; i++)
      expectRefused(await call('GET', '/v1/publication', { apiKey: 'tsk_not-a-real-key' }), 'INVALID_API_KEY');
    expect(cache.peek(cache.keyOf({ apiKey: 'tsk_not-a-real-key' }))).toBeUndefined();
    expect(cache.size()).toBe(before);
  });

  it('keeps every cached credential to its own tenant and project', async () => {
    const a = await signIn();
    const b = await signIn();
    const pa = await newProject(a.access);
    const pb = await newProject(b.access);
    await warm({ bearer: a.access }, () => call('GET', `/auth/api/v1/projects/${pa.id}`, { token: a.access }));
    await warm({ bearer: b.access }, () => call('GET', `/auth/api/v1/projects/${pb.id}`, { token: b.access }));
    expect((await call('GET', `/auth/api/v1/projects/${pb.id}`, { token: a.access })).status).toBe(404);
    expect((await call('GET', `/auth/api/v1/projects/${pa.id}`, { token: b.access })).status).toBe(404);
    await warm({ apiKey: pa.apiKey }, () => call('GET', '/v1/publication', { apiKey: pa.apiKey }));
    expect(cache.peek(cache.keyOf({ apiKey: pa.apiKey }))).toMatchObject({ kind: 'project', projectId: pa.id });
    expect((await call('GET', `/auth/api/v1/projects/${pb.id}`, { apiKey: pa.apiKey })).status).toBe(403);
  });
});
