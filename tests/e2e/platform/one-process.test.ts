import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { tenantScenario } from '../tenant/tenant-scenario.ts';
import { client } from '../../support/http.ts';
import { SEED_ENDPOINTS } from '../../unit/seed-rows.ts';

describe('one-process mode', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startOneProcess();
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  });

  it('runs the whole tenant journey over HTTP', async () => {
    await tenantScenario(p.url);
  }, 60_000);

  it('reports every service healthy, each with its database', async () => {
    const call = client(p.url);
    const h = await call('GET', '/health');
    expect(h.status).toBe(200);
    expect(h.body.status).toBe('ok');
    for (const s of ['auth', 'idp', 'core', 'storage']) {
      const r = await call('GET', `/health/${s}/readyz`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ service: s, status: 'ok', database: 'ok' });
    }
  });

  it('documents every endpoint of the seed in the OpenAPI document', async () => {
    const oa = (await client(p.url)('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const have = new Set(
      Object.entries(oa.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)),
    );
    expect(SEED_ENDPOINTS.filter((e) => !have.has(e))).toEqual([]);
  });

  it('serves the OpenAPI document and a human docs page', async () => {
    const call = client(p.url);
    const oa = await call('GET', '/openapi.json');
    expect(oa.status).toBe(200);
    expect(oa.body.openapi).toBe('3.1.0');
    expect(oa.body.paths['/auth/api/v1/projects/{id}'].put.operationId).toBeDefined();
    expect(
      oa.body.paths['/auth/api/v1/tenants/signup'].post.requestBody.content['application/json'].schema.required,
    ).toEqual(expect.arrayContaining(['email', 'password']));
    const docs = await fetch(`${p.url}/docs`);
    expect(docs.headers.get('content-type')).toContain('text/html');
    expect(await docs.text()).toContain('/auth/api/v1/tenants/signup');
  });

  it('lets a domain reach another through the router client, straight or through the gateway', async () => {
    const router = p.tessera!.router;
    const ctx = { requestId: 'test', principal: { kind: 'anonymous' as const } };
    const plans = await router.run('{ plans { id } }', {}, ctx);
    expect((plans.data as { plans: unknown[] }).plans.length).toBeGreaterThan(0);
    const bad = await router.run('{ nope }', {}, ctx);
    expect(bad.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('serves the data API at /v1/* and keeps /api/v1/* as an alias of it', async () => {
    const call = client(p.url);
    const r = await call('POST', '/api/v1/nothing-here', { body: {} });
    expect(r.status).toBe(404);
    // The 404 is the data API's own, listing its actions, and names the path as the caller wrote it.
    expect(r.body.error.message).toContain('No data action "nothing-here" (POST /api/v1/nothing-here)');
    expect((await call('POST', '/api/v1/find', { body: { table: 'x' } })).status).toBe(401);
  });
});
