// The operator's project servers in split mode (each subgraph, the router and the front door a process of its own):
// the operator fields of the data subgraph reached over HTTP with the operator's principal, a project's server on the
// admin project answer (and an account's usage totals) gathered from the data process (`_entities`), a project
// placed on a second real PostgreSQL server working through the data process, and the data process's /metrics by
// server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { SPLIT_START_HOOK_MS, startSplit, TEST_OPERATOR_KEY, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { startPgServer, type TestPgServer } from '../../support/pg-servers.ts';
import { waitFor } from '../../support/wait-for.ts';

type Layout = { subgraphs: Record<string, { url: string }> };

let p: TestPlatform;
let pg2: TestPgServer;
let call: ReturnType<typeof client>;
const op = (method: string, route: string, body?: unknown) =>
  call(method, `/admin/api/v1${route}`, { token: TEST_OPERATOR_KEY, body });

beforeAll(async () => {
  [p, pg2] = await Promise.all([startSplit({ TESSERA_DEFAULT_PLAN: 'self-hosted' }), startPgServer()]);
  call = client(p.url);
}, SPLIT_START_HOOK_MS);

afterAll(async () => {
  await p?.close();
  await pg2?.stop();
}, 60_000);

describe('project servers in split mode', () => {
  it('registers a server, places a project on it, and the project works through the data process', async () => {
    const added = await op('POST', '/servers', { id: 'pg2', url: pg2.url });
    expect(added.status).toBe(201);
    expect(added.body.health).toMatchObject({ reachable: true });
    expect((await op('PATCH', '/servers/default', { state: 'read-only' })).body.state).toBe('read-only');

    const account = { email: 'split-fleet@example.com', password: 'a long password' };
    await call('POST', '/auth/api/v1/tenants/signup', { body: account });
    const login = (await call('POST', '/auth/api/v1/tenant/login', { body: account })).body;
    const token = login.access_token as string;
    const created = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Split' } });
    const id = created.body.project.id as string;
    const apiKey = created.body.project.api_key as string;
    // The admin project answer gathers `server` from the data process.
    await waitFor(async () => (await op('GET', `/projects/${id}`)).body.server === 'pg2');

    const h = { apiKey };
    const sql = 'create table notes (id serial primary key, body text)';
    expect((await call('POST', '/v1/rawSQL', { ...h, body: { sql } })).status).toBe(200);
    const inserted = await call('POST', '/v1/insert', { ...h, body: { table: 'notes', values: { body: 'split' } } });
    expect(inserted.status).toBe(201);
    expect((await call('POST', '/v1/find', { ...h, body: { table: 'notes' } })).body.rows).toEqual([
      { id: 1, body: 'split' },
    ]);
    // The account's totals come from the data (measuring its database on pg2), storage and functions processes, each
    // handed the account's project ids over HTTP with the operator's principal.
    const row = await waitFor(
      async () => {
        const r = (await op('GET', `/tenants/${login.tenant.id}`)).body;
        return r.database_usage?.rows === 1 && r;
      },
      { timeoutMs: 30_000, message: "the account's row to count its one database row" },
    );
    expect(row).toMatchObject({
      project_count: 1,
      storage_usage: { objects: 0, bytes: 0 },
      database_usage: { unmeasured: 0 },
      function_usage: { runs_this_month: 0, running_now: 0, cron_jobs: 0 },
    });
    expect((await op('PATCH', '/servers/default', { state: 'active' })).status).toBe(200);
  });

  it("reports the servers on the data process's /metrics", async () => {
    const listed = await op('GET', '/servers');
    expect(listed.body.servers.map((s: { id: string; projects: number }) => [s.id, s.projects])).toEqual([
      ['default', 0],
      ['pg2', 1],
    ]);
    const layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as Layout;
    const data = new URL(layout.subgraphs.data!.url);
    const text = await (await fetch(`${data.origin}/metrics`)).text();
    const value = (name: string, server: string) =>
      Number(new RegExp(`^${name}\\{[^}]*server="${server}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('tessera_project_server_up', 'pg2')).toBe(1);
    expect(value('tessera_project_server_projects', 'pg2')).toBe(1);
    expect(value('tessera_project_server_connections', 'pg2')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/tessera_project_server_projects\{[^}]*role="subgraph:data"/);
  });
});
