// P3: a one-subgraph GraphQL query on Tessera's public /graphql (one-process mode: the router authenticates
// the X-Api-Key, then runs the operation on the in-process tenant subgraph) against Hive Gateway
// (@graphql-hive/gateway-runtime, bench/peers/hive-gateway.ts) serving the same composed supergraph over the
// same tenant subgraph code, run as a split-mode subgraph process (`main.ts --role subgraph:tenant`) on the
// same database. The gateway authenticates nobody: it signs, per call, the context of the project principal
// the key stands for (what Tessera's router hands its subgraphs after authenticating the key).
// The query reads the bench data project (`project(id)`: one SQL read of the projects table); both answers
// are checked to be the same before the load.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { BenchContext, HttpCase, Target } from './types.ts';
import { dataProject } from './p1-p2-data.ts';
import { freePort } from '../../platform/net.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const QUERY = 'query P3($id: ID!) { project(id: $id) { id name apiKeyPrefix createdAt updatedAt } }';

/**
 * The internal secret and data folder of the Tessera under test, from its environment: the harness starts
 * it with TESSERA_DATA_DIR (where it generates `internal.secret`) unless TESSERA_INTERNAL_SECRET is set.
 * The peer's subgraph process needs the same secret (stored secrets are sealed with it).
 */
export function tesseraSecret(pid: number): { secret: string; dataDir?: string } {
  const env = new Map(
    fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
  );
  const dataDir = env.get('TESSERA_DATA_DIR');
  const given = env.get('TESSERA_INTERNAL_SECRET');
  if (given) return { secret: given, dataDir };
  if (!dataDir) throw new Error('P3: the Tessera process has neither TESSERA_INTERNAL_SECRET nor TESSERA_DATA_DIR');
  return { secret: fs.readFileSync(path.join(dataDir, 'internal.secret'), 'utf8').trim(), dataDir };
}

async function tenantOf(ctx: BenchContext, projectId: string): Promise<string> {
  const c = new pg.Client({ connectionString: ctx.databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ tenant_id: string }>('select tenant_id from projects where id = $1', [projectId]);
    if (!rows[0]) throw new Error(`P3: no project ${projectId}`);
    return rows[0].tenant_id;
  } finally {
    await c.end();
  }
}

/** Sends the query once; answers its `data`, or fails the setup. */
async function answer(t: Target, what: string): Promise<unknown> {
  const res = await fetch(t.url, { method: t.method, headers: t.headers, body: t.body as string });
  const text = await res.text();
  const body = (() => {
    try {
      return JSON.parse(text) as { data?: { project?: { id?: string } }; errors?: unknown };
    } catch {
      return undefined;
    }
  })();
  if (res.status !== 200 || !body?.data?.project?.id || body.errors) throw new Error(`${what}: ${res.status} ${text}`);
  return body.data;
}

export const p3: HttpCase = {
  id: 'P3',
  title: '/graphql one-subgraph query: project(id) { id name apiKeyPrefix createdAt updatedAt } (tenant subgraph)',
  peer: 'Hive Gateway (gateway-runtime 2) over the tenant subgraph as a split-mode process (pre-signed principal)',
  goal: '>= 2x (issue 19)',
  async setup(ctx) {
    if (!fs.existsSync(path.join(ROOT, 'bench', 'peers', 'node_modules', '@graphql-hive', 'gateway-runtime'))) {
      throw new Error(
        'P3: Hive Gateway is not installed in bench/peers (installed before it was added): run `npm ci` in bench/peers',
      );
    }
    const p = await dataProject(ctx);
    const { secret, dataDir } = tesseraSecret(ctx.tesseraPid);
    const principal = { kind: 'project', projectId: p.projectId, tenantId: await tenantOf(ctx, p.projectId) };
    const port = await freePort();
    const tenantUrl = `http://127.0.0.1:${port}/graphql`;
    await ctx.spawnPeer(
      [path.join(ROOT, 'main.ts'), '--role', 'subgraph:tenant'],
      {
        DATABASE_URL: ctx.databaseUrl,
        TESSERA_INTERNAL_SECRET: secret,
        ...(dataDir ? { TESSERA_DATA_DIR: dataDir } : {}),
        TESSERA_MODE: 'split',
        TESSERA_SUBGRAPH_URLS: `tenant=${tenantUrl}`,
        LOG_LEVEL: 'warn',
      },
      `http://127.0.0.1:${port}/readyz`,
    );
    const gateway = await ctx.spawnPeer(
      [path.join(ROOT, 'bench', 'peers', 'hive-gateway.ts')],
      {
        PORT: '0',
        P3_SUBGRAPH_URLS: `tenant=${tenantUrl}`,
        P3_PRINCIPAL: JSON.stringify(principal),
        TESSERA_INTERNAL_SECRET: secret,
      },
      /listening (\d+)/,
    );
    const gatewayPort = Number(/listening (\d+)/.exec(gateway.output())![1]);
    const body = JSON.stringify({ query: QUERY, variables: { id: p.projectId } });
    const tessera: Target = {
      url: `${ctx.tessera}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': p.apiKey },
      body,
    };
    const peer: Target = {
      url: `http://127.0.0.1:${gatewayPort}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    };
    const [a, b] = [await answer(tessera, 'P3 Tessera /graphql'), await answer(peer, 'P3 Hive Gateway /graphql')];
    if (JSON.stringify(a) !== JSON.stringify(b))
      throw new Error(`P3: the answers differ: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    return { tessera, peer };
  },
};
