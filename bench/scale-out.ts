// npm run bench:scale-out — Tessera scaled out on this machine, against itself in one process (issue 16):
//   one-process   `node main.ts`: /graphql and a REST read
//   split         one process per role (5 subgraphs, router, front door): Tessera's router process and Hive Gateway
//                 (deploy/hive-gateway, authenticating with the same plugin code) over the same HTTP subgraphs: P3 in split mode
//   multi         two instances of every role behind round-robin proxies (tests/support/round-robin.ts)
// Same database server (embedded), same project and API key, the P3 query and one REST read, autocannon with the
// same connections and duration per target, one target at a time. Prints a table for bench/RESULTS.md.
import fs from 'node:fs';
import path from 'node:path';
import { loadTarget } from './lib/load.ts';
import type { ChildProcess } from 'node:child_process';
import { startDatabase } from '../platform/database.ts';
import { createLogger } from '../platform/logger.ts';
import { freePort } from '../platform/net.ts';
import { readSupergraphConfig, ROOT } from '../router/compose.ts';
import { startRoundRobin, type RoundRobin } from '../tests/support/round-robin.ts';
import { ensureInstalled } from '../scripts/ensure-installed.ts';
import pg from 'pg';
import { scratchDir, startChild } from './child.ts';

const DURATION = Number(process.env.SCALE_DURATION ?? 10);
const CONNECTIONS = 32;
const SECRET = 'bench-scale-out-secret-0123456789abcdef';
const P3 = 'query P3($id: ID!) { project(id: $id) { id name apiKeyPrefix createdAt updatedAt } }';

type Target = { name: string; url: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string };

async function measure(t: Target): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const check = await fetch(t.url, { method: t.method, headers: t.headers, body: t.body });
  if (check.status !== 200) throw new Error(`${t.name}: ${check.status} ${await check.text()}`);
  const { rps, p50, p99, errors } = await loadTarget(t, DURATION, CONNECTIONS);
  return { rps, p50, p99, errors };
}

async function main(): Promise<void> {
  ensureInstalled(path.join(ROOT, 'deploy', 'hive-gateway'));
  const dataDir = scratchDir('scale-');
  const log = createLogger('warn');
  const db = await startDatabase({
    databaseUrl: process.env.DATABASE_URL,
    dataDir: path.join(dataDir, 'pg'),
    logger: log,
  });
  const children: ChildProcess[] = [];
  const proxies: RoundRobin[] = [];
  const base = {
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.url,
    TESSERA_INTERNAL_SECRET: SECRET,
    TESSERA_ACCESS_LOG: 'false',
    // Each process has a data folder of its own, but one blob store: front doors stream the bytes storage accounts
    // for, and refuse to start on a store that is not the storage subgraph's.
    TESSERA_STORAGE_DIR: path.join(dataDir, 'blobs'),
  };
  const start = async (args: string[], env: Record<string, string>, ready: string | RegExp) => {
    const dir = fs.mkdtempSync(path.join(dataDir, 'p-'));
    const s = await startChild(args, { ...base, TESSERA_DATA_DIR: dir, ...env }, ready);
    children.push(s.child);
    return s;
  };
  const stopAll = async () => {
    for (const c of children.splice(0)) {
      c.kill('SIGTERM');
      await new Promise((r) => (c.exitCode !== null ? r(undefined) : c.once('exit', r)));
    }
    for (const p of proxies.splice(0)) await p.close();
  };
  const rows: string[] = [];
  const run = async (label: string, targets: Target[]) => {
    for (const t of targets) {
      const m = await measure(t);
      rows.push(
        `| ${label} | ${t.name} | ${Math.round(m.rps).toLocaleString('en')} req/s | ${m.p50} / ${m.p99} ms | ${m.errors} |`,
      );
      console.log(rows.at(-1));
    }
  };
  try {
    // One process; the project and key every layout then reads.
    const port = await freePort();
    const one = `http://127.0.0.1:${port}`;
    await start([path.join(ROOT, 'main.ts')], { PORT: String(port) }, `${one}/health`);
    // Every plan's requests per minute lifted, as for a load test (the limit is still checked, never reached).
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query(
      'update plans set max_requests_per_minute = 2000000000, max_function_invocations_per_month = 1000000000000',
    );
    await admin.end();
    const email = `scale-${Date.now()}@example.com`;
    const post = async (url: string, body: unknown, headers: Record<string, string> = {}) =>
      (await (
        await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        })
      ).json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    await post(`${one}/auth/api/v1/tenants/signup`, { email, password: 'correct horse battery' });
    const token = (await post(`${one}/auth/api/v1/tenant/login`, { email, password: 'correct horse battery' }))
      .access_token as string;
    const project = (await post(`${one}/auth/api/v1/projects`, { name: 'scale' }, { authorization: `Bearer ${token}` }))
      .project as { id: string; api_key: string };
    const key = { 'x-api-key': project.api_key };
    const gql = (name: string, url: string): Target => ({
      name,
      url: `${url}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...key },
      body: JSON.stringify({ query: P3, variables: { id: project.id } }),
    });
    const rest = (name: string, url: string): Target => ({
      name,
      url: `${url}/storage/api/v1/storage/folders`,
      method: 'GET',
      headers: key,
    });
    await run('one process', [gql('P3 /graphql', one), rest('REST storage folders', one)]);
    await stopAll();

    // Split mode, one instance of each role; P3 through Tessera's router process and through Hive Gateway.
    const names = readSupergraphConfig().map((e) => e.name);
    const layout = async (instances: number) => {
      const plan = new Map<string, number[]>();
      for (const role of [...names.map((n) => `subgraph:${n}`), 'router', 'front-door'])
        plan.set(role, await Promise.all(Array.from({ length: instances }, () => freePort())));
      const entry = new Map<string, string>();
      for (const [role, ports] of plan) {
        if (ports.length === 1) entry.set(role, `http://127.0.0.1:${ports[0]}`);
        else {
          const p = await startRoundRobin(ports.map((x) => `http://127.0.0.1:${x}`));
          proxies.push(p);
          entry.set(role, p.url);
        }
      }
      const env = {
        TESSERA_MODE: 'split',
        TESSERA_SUBGRAPH_URLS: names.map((n) => `${n}=${entry.get(`subgraph:${n}`)}/graphql`).join(','),
        TESSERA_ROUTER_URL: entry.get('router')!,
      };
      for (const [role, ports] of plan) {
        for (const p of ports) {
          const own: Record<string, string> =
            role === 'router'
              ? { TESSERA_ROUTER_PORT: String(p) }
              : role === 'front-door'
                ? { PORT: String(p) }
                : { TESSERA_SUBGRAPH_PORT: String(p) };
          await start(
            [path.join(ROOT, 'main.ts'), '--role', role],
            { ...env, ...own },
            `http://127.0.0.1:${p}/${role === 'front-door' ? 'livez' : 'readyz'}`,
          );
        }
      }
      return { entry, env };
    };
    const split = await layout(1);
    const gatewayPort = await freePort();
    await start(
      [path.join(ROOT, 'deploy', 'hive-gateway', 'gateway.ts')],
      { PORT: String(gatewayPort), TESSERA_SUBGRAPH_URLS: split.env.TESSERA_SUBGRAPH_URLS },
      /listening \d+/,
    );
    await run('split, 1 of each', [
      gql('P3 via the router process', split.entry.get('router')!),
      gql('P3 via Hive Gateway (auth plugin)', `http://127.0.0.1:${gatewayPort}`),
      gql('P3 via the front door', split.entry.get('front-door')!),
      rest('REST storage folders', split.entry.get('front-door')!),
    ]);
    await stopAll();

    const multi = await layout(2);
    await run('2 of each + proxies', [
      gql('P3 via the front door', multi.entry.get('front-door')!),
      rest('REST storage folders', multi.entry.get('front-door')!),
    ]);
  } finally {
    await stopAll();
    await db.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\n| layout | target | throughput | p50 / p99 | errors |\n|---|---|---|---|---|\n${rows.join('\n')}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
