// Hive Gateway in front of Tessera's split-mode subgraphs (deploy/hive-gateway: the documented alternative to
// Tessera's own router), with Tessera's authentication as a gateway plugin. The main flows run through it as
// GraphQL operations: the route table's own documents with the variables the front door would build, so the
// gateway is asked exactly what Tessera's router is asked; reads are compared with the router process's answers.
// The gateway has its own install (deploy/hive-gateway/package.json), made here on first use (npm ci).
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startProcess,
  SPLIT_START_HOOK_MS,
  startSplit,
  stopProcess,
  TEST_SECRET,
  type TestPlatform,
} from '../../support/platform.ts';
import { ensureInstalled } from '../../../scripts/ensure-installed.ts';
import { freePort } from '../../../platform/net.ts';
import { signContext } from '../../../platform/auth.ts';
import { ROUTE_TABLE } from '../../../rest-compat/route-table.ts';
import { variablesFor, variableTypesOf, type RestRequest } from '../../../rest-compat/variables.ts';
import { waitFor } from '../../support/wait-for.ts';

type Creds = { token?: string; apiKey?: string; headers?: Record<string, string> };
type Answer = {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: { data?: Record<string, any> | null; errors?: { message: string; extensions?: { code?: string } }[] };
};

const GATEWAY_DIR = path.resolve('deploy', 'hive-gateway');

/** Runs route-table row `id` as GraphQL at `url`, with the variables the front door builds from this REST request. */
async function op(url: string, id: string, req: Partial<RestRequest>, creds: Creds = {}): Promise<Answer> {
  const row = ROUTE_TABLE.find((r) => r.id === id);
  if (!row) throw new Error(`no route row ${id}`);
  const variables = variablesFor(
    row,
    { body: req.body ?? {}, params: req.params ?? {}, query: req.query ?? {} },
    variableTypesOf(row),
  );
  const headers: Record<string, string> = { 'content-type': 'application/json', ...creds.headers };
  if (creds.token) headers.authorization = `Bearer ${creds.token}`;
  if (creds.apiKey) headers['x-api-key'] = creds.apiKey;
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query: row.operation, variables }),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function data(a: Answer): Record<string, any> {
  if (a.body.errors?.length) throw new Error(`GraphQL errors (${a.status}): ${JSON.stringify(a.body.errors)}`);
  return a.body.data!;
}

describe('Hive Gateway in front of the split-mode subgraphs', () => {
  let p: TestPlatform;
  let gateway: ChildProcess;
  let gw = '';
  let router = '';

  beforeAll(async () => {
    ensureInstalled(GATEWAY_DIR, { quiet: true });
    p = await startSplit();
    const layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as {
      router: { url: string };
      subgraphs: Record<string, { url: string }>;
    };
    router = layout.router.url;
    const port = await freePort();
    gw = `http://127.0.0.1:${port}`;
    gateway = await startProcess(
      [path.join(GATEWAY_DIR, 'gateway.ts')],
      {
        PORT: String(port),
        LOG_LEVEL: 'warn',
        TESSERA_INTERNAL_SECRET: TEST_SECRET,
        TESSERA_SUBGRAPH_URLS: Object.entries(layout.subgraphs)
          .map(([name, s]) => `${name}=${s.url}`)
          .join(','),
      },
      `${gw}/healthcheck`,
    );
  }, SPLIT_START_HOOK_MS);

  afterAll(async () => {
    if (gateway) await stopProcess(gateway);
    await p?.close();
  }, 60_000);

  it('runs the main flows: account, project, data API, storage across two subgraphs, edge functions', async () => {
    const email = `hive-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    expect(
      data(await op(gw, 'tenant.account.signup', { body: { email, password, name: 'Hive' } })).signup.tenant,
    ).toMatchObject({ email, name: 'Hive' });
    const session = data(await op(gw, 'tenant.session.login', { body: { email, password } })).login;
    expect(session.token_type).toBe('Bearer');
    const token = session.access_token as string;
    const project = data(await op(gw, 'tenant.project.create', { body: { name: 'through hive' } }, { token })).project;
    expect(project.api_key).toMatch(/^tsk_/);
    const apiKey = project.api_key as string;

    // Reads answer the same through the gateway and through Tessera's router process.
    const viaGateway = data(await op(gw, 'tenant.project.get', { params: { id: project.id } }, { token }));
    expect(viaGateway).toEqual(data(await op(router, 'tenant.project.get', { params: { id: project.id } }, { token })));

    // The data API, once the project's database is provisioned (an event away).
    let created: Answer | undefined;
    await waitFor(
      async () => {
        created = await op(
          gw,
          'data.rawSQL',
          { body: { sql: 'create table notes (id int primary key, body text)' } },
          { apiKey },
        );
        return !created.body.errors;
      },
      { timeoutMs: 20_000, intervalMs: 200, message: 'the project database' },
    ).catch(() => undefined); // data() below names the last error
    data(created!);
    expect(
      data(
        await op(
          gw,
          'data.insert',
          {
            body: {
              table: 'notes',
              values: [
                { id: 1, body: 'one' },
                { id: 2, body: 'two' },
              ],
            },
          },
          { apiKey },
        ),
      ).dataInsert.count,
    ).toBe(2);
    const found = data(await op(gw, 'data.find', { body: { table: 'notes', where: { id: { gte: 2 } } } }, { apiKey }));
    expect(found.dataFind.rows).toEqual([{ id: 2, body: 'two' }]);

    // Storage usage joins the storage and tenant subgraphs: the gateway plans and runs both fetches.
    const usage = data(await op(gw, 'storage.usage.get', {}, { apiKey }));
    expect(usage.storageProject.usage).toMatchObject({ objects: 0, bytes: 0, quota_bytes: expect.any(Number) });
    expect(usage).toEqual(data(await op(router, 'storage.usage.get', {}, { apiKey })));

    // Edge functions: define, invoke, read the execution.
    data(
      await op(
        gw,
        'functions.function.create',
        {
          body: {
            name: 'hello',
            steps: [{ name: 'say', kind: 'Transform', expression: { hi: '{{ input.body.who }}' } }],
          },
        },
        { apiKey },
      ),
    );
    const invoked = data(
      await op(gw, 'functions.invoke', { params: { name: 'hello' }, body: { who: 'hive' } }, { apiKey }),
    ).invokeEdgeFunction;
    expect(invoked).toMatchObject({ status: 200, body: { hi: 'hive' } });
  }, 90_000);

  it("answers invalid credentials with 401 and unauthenticated calls with the subgraph's refusal", async () => {
    const bad = await op(gw, 'storage.usage.get', {}, { apiKey: 'tsk_not_a_real_key_0000000000000000' });
    expect(bad.status).toBe(401);
    expect(bad.body.errors?.[0]?.extensions?.code).toMatch(/UNAUTHENTICATED|INVALID_API_KEY|INVALID_TOKEN/);
    const garbage = await op(gw, 'tenant.project.list', {}, { headers: { authorization: 'Basic abc' } });
    expect(garbage.status).toBe(401);
    const anonymous = await op(gw, 'tenant.project.list', {});
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('never passes on a context header sent by the client, even one signed with the real secret', async () => {
    // An attacker who somehow holds a signed internal context must not get it through the gateway: the header the
    // subgraphs see is the one the plugin signed for the request's own (here: no) credentials.
    const forged = await signContext({ requestId: 'forged', principal: { kind: 'internal' } }, TEST_SECRET);
    const res = await op(gw, 'tenant.project.list', {}, { headers: { 'x-tessera-context': forged } });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.body.data?.projects ?? null).toBeNull();
  });
});
