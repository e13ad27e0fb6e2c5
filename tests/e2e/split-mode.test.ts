import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startSplit, type TestPlatform } from '../support/platform.ts';
import { tenantScenario } from './tenant-scenario.ts';
import { client } from '../support/http.ts';
import { signContext } from '../../platform/auth.ts';

type Layout = { subgraphs: Record<string, { url: string; pid: number }>; router: { url: string; pid: number } };

describe('split mode (each subgraph, the router and the front door in its own process)', () => {
  let p: TestPlatform;
  let layout: Layout;
  beforeAll(async () => {
    p = await startSplit();
    layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as Layout;
  }, 120_000);
  afterAll(async () => {
    await p?.close();
  }, 60_000);

  it('runs the whole tenant journey over HTTP', async () => {
    await tenantScenario(p.url);
  }, 60_000);

  it('has subgraphs that refuse calls without the router\'s signed context', async () => {
    const url = layout.subgraphs.tenant!.url;
    const body = JSON.stringify({ query: '{ plans { id } }' });
    const bare = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(bare.status).toBe(401);
    const forged = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tessera-context': await signContext({ requestId: 'x', principal: { kind: 'internal' } }, 'a-different-secret-of-enough-length!!') },
      body,
    });
    expect(forged.status).toBe(401);
  });

  it('answers GraphQL through the separate router process', async () => {
    const res = await client(layout.router.url)('POST', '/graphql', { body: { query: '{ plans { id name } }' } });
    expect(res.status).toBe(200);
    expect(res.body.data.plans.length).toBeGreaterThan(0);
  });

  it('shows a stopped subgraph as down with 503, and the others still up', async () => {
    const call = client(p.url);
    expect((await call('GET', '/health/storage/readyz')).status).toBe(200);
    process.kill(layout.subgraphs.storage!.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const down = await call('GET', '/health/storage/readyz');
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('down');
    const all = await call('GET', '/health');
    expect(all.status).toBe(503);
    expect(all.body.services.storage.status).toBe('down');
    expect(all.body.services.auth.status).toBe('ok');
    expect((await call('GET', '/health/auth/readyz')).status).toBe(200);
  });
});
