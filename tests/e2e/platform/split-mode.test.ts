import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { SPLIT_START_HOOK_MS, startSplit, type TestPlatform } from '../../support/platform.ts';
import { tenantScenario } from '../tenant/tenant-scenario.ts';
import { client } from '../../support/http.ts';
import { signContext } from '../../../platform/auth.ts';
import { newProject } from '../identity/identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

type Layout = { subgraphs: Record<string, { url: string; pid: number }>; router: { url: string; pid: number } };

describe('split mode (each subgraph, the router and the front door in its own process)', () => {
  let p: TestPlatform;
  let layout: Layout;
  beforeAll(async () => {
    p = await startSplit();
    layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as Layout;
  }, SPLIT_START_HOOK_MS);
  afterAll(async () => {
    await p?.close();
  }, 60_000);

  it('runs the whole tenant journey over HTTP', async () => {
    await tenantScenario(p.url);
  }, 60_000);

  it("has subgraphs that refuse calls without the router's signed context", async () => {
    const url = layout.subgraphs.tenant!.url;
    const body = JSON.stringify({ query: '{ plans { id } }' });
    const bare = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(bare.status).toBe(401);
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-tessera-context': await signContext(
          { requestId: 'x', principal: { kind: 'internal' } },
          'a-different-secret-of-enough-length!!',
        ),
      },
      body,
    });
    expect(forged.status).toBe(401);
  });

  it('answers GraphQL through the separate router process', async () => {
    const res = await client(layout.router.url)('POST', '/graphql', { body: { query: '{ plans { id name } }' } });
    expect(res.status).toBe(200);
    expect(res.body.data.plans.length).toBeGreaterThan(0);
  });

  it('serves a browser across processes: CORS rules reach the front door, the publishable key is refused admin calls', async () => {
    const call = client(p.url);
    const project = await newProject(p.url);
    const pk = (await call('GET', `/auth/api/v1/projects/${project.id}`, { token: project.tenantToken })).body.project
      .publishable_key as string;
    const origin = 'https://app.example.com';
    expect(
      (
        await call('PUT', `/auth/api/v1/projects/${project.id}/cors`, {
          token: project.tenantToken,
          body: { allowed_origins: [origin] },
        })
      ).status,
    ).toBe(200);
    const preflight = await fetch(`${p.url}/register`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key, content-type',
      },
    });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, origin]);
    const reg = await call('POST', '/register', {
      apiKey: pk,
      headers: { origin },
      body: { email: `split-${Date.now()}@example.com`, password: 'a long enough password' },
    });
    expect([reg.status, reg.headers.get('access-control-allow-origin')]).toEqual([201, origin]);
    const sql = await call('POST', '/v1/rawSQL', { apiKey: pk, body: { sql: 'select 1' } });
    expect([sql.status, sql.body.error?.details?.key_kind]).toEqual([403, 'publishable']);
  }, 60_000);

  it('shows a stopped subgraph as down with 503, and the others still up', async () => {
    const call = client(p.url);
    expect((await call('GET', '/health/storage/readyz')).status).toBe(200);
    process.kill(layout.subgraphs.storage!.pid, 'SIGKILL');
    const down = await waitFor(
      async () => {
        const r = await call('GET', '/health/storage/readyz');
        return r.status !== 200 && r;
      },
      { message: 'the storage subgraph to show as down' },
    );
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('down');
    const all = await call('GET', '/health');
    expect(all.status).toBe(503);
    expect(all.body.services.storage.status).toBe('down');
    expect(all.body.services.auth.status).toBe('ok');
    expect((await call('GET', '/health/auth/readyz')).status).toBe(200);
  });
});
