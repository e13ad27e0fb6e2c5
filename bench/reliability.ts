// The reliability runs of the benchmark (issue 13), beside the speed cases of bench/run.ts:
//   npm run bench -- --soak <minutes>   a route mix at half the measured maximum throughput for that long, sampling the
//                                       server's RSS every 10 s: start (after a minute of warm-up), max, end, errors.
//   npm run bench -- --fuzz <requests>  the property-based fuzzer of the test suite (tests/fuzz/engine.ts), long.
// Both start their own Tessera (one-process mode) on an embedded PostgreSQL, print their figures and write them to
// bench/out/. A soak whose RSS leaves ±10% of its post-warm-up value, or that saw an error, exits non-zero.
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { startDatabase } from '../platform/database.ts';
import { createLogger } from '../platform/logger.ts';
import { startChild, liftPlanLimits } from './child.ts';
import { fuzz, rootFieldsOf } from '../tests/fuzz/engine.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'bench', 'out');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

type Session = { url: string; token: string; apiKey: string; projectId: string };

async function setUp(url: string): Promise<Session> {
  const post = async (p: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  await post('/auth/api/v1/tenants/signup', { email: 'bench-reliability@example.com', password: 'a long password' });
  const token = (
    await post('/auth/api/v1/tenant/login', { email: 'bench-reliability@example.com', password: 'a long password' })
  ).body.access_token as string;
  const project = (await post('/auth/api/v1/projects', { name: 'Reliability' }, { authorization: `Bearer ${token}` }))
    .body.project as { id: string; api_key: string };
  for (let i = 0; i < 100; i++) {
    if (
      (
        await post(
          '/v1/rawSQL',
          { sql: 'create table if not exists orders (id serial primary key, sku text, qty int, doc jsonb)' },
          { 'x-api-key': project.api_key },
        )
      ).status === 200
    )
      break;
    await sleep(200);
  }
  return { url, token, apiKey: project.api_key, projectId: project.id };
}

/** The route mix of the soak: reads and writes of every domain a typical client touches. */
function mix(s: Session): autocannon.Request[] {
  const key = { 'x-api-key': s.apiKey, 'content-type': 'application/json' };
  return [
    { method: 'GET', path: '/auth/api/v1/tenant', headers: { authorization: `Bearer ${s.token}` } },
    {
      method: 'POST',
      path: '/v1/find',
      headers: key,
      body: JSON.stringify({ table: 'orders', limit: 20, orderBy: '-id' }),
    },
    {
      method: 'POST',
      path: '/v1/insert',
      headers: key,
      body: JSON.stringify({
        table: 'orders',
        values: { sku: 'soak', qty: 1, doc: { a: [1, 2, 3] } },
        returning: false,
      }),
    },
    { method: 'GET', path: '/storage/api/v1/storage/usage', headers: { 'x-api-key': s.apiKey } },
    {
      method: 'POST',
      path: '/graphql',
      headers: key,
      body: JSON.stringify({ query: '{ dataFind(table: "orders", limit: 5) { rows } }' }),
    },
    { method: 'GET', path: '/edge/api/v1/functions?first=10', headers: { 'x-api-key': s.apiKey } },
    { method: 'GET', path: '/health' },
  ];
}

async function soak(s: Session, pid: number, minutes: number): Promise<Record<string, unknown>> {
  const requests = mix(s);
  // Maximum throughput of the mix, briefly; the soak runs at half of it.
  const max = await autocannon({ url: s.url, requests, connections: 32, duration: 15 });
  const rate = Math.max(10, Math.floor(max.requests.average / 2));
  console.log(
    `max ${Math.round(max.requests.average)} req/s over the mix; soaking at ${rate} req/s for ${minutes} min`,
  );
  const samples: { t_s: number; rss_mb: number }[] = [];
  const started = Date.now();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      samples.push({ t_s: Math.round((Date.now() - started) / 1000), rss_mb: Math.round(rssMb(pid)) });
      await sleep(10_000);
    }
  })();
  const run = await autocannon({ url: s.url, requests, connections: 16, overallRate: rate, duration: minutes * 60 });
  sampling = false;
  await sampler;
  samples.push({ t_s: Math.round((Date.now() - started) / 1000), rss_mb: Math.round(rssMb(pid)) });
  const warm = samples.filter((x) => x.t_s >= Math.min(60, (minutes * 60) / 4));
  const start = warm[0]!.rss_mb;
  const maxRss = Math.max(...warm.map((x) => x.rss_mb));
  const end = warm[warm.length - 1]!.rss_mb;
  const errors = run.errors + run.non2xx + run.timeouts;
  const within = warm.every((x) => Math.abs(x.rss_mb - start) <= start * 0.1);
  return {
    minutes,
    max_rps: Math.round(max.requests.average),
    soak_rps: Math.round(run.requests.average),
    requests: run.requests.total,
    errors,
    rss_mb: { start, max: maxRss, end },
    within_10_percent: within,
    samples,
  };
}

/** `npm run bench -- --soak <minutes>` / `--fuzz <requests>` (see the top of this file). */
export async function runReliability(argv: string[]): Promise<void> {
  const arg = (flag: string) => (argv.includes(flag) ? Number(argv[argv.indexOf(flag) + 1]) : undefined);
  const soakMinutes = arg('--soak');
  const fuzzRuns = arg('--fuzz');
  fs.mkdirSync(OUT, { recursive: true, mode: 0o755 });
  const dataDir = fs.mkdtempSync(path.join(OUT, 'data-'));
  fs.chmodSync(dataDir, 0o755);
  const db = await startDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, logger: createLogger('warn') });
  const port = 19080 + Math.floor(Math.random() * 1000);
  const tessera = await startChild(
    [path.join(ROOT, 'main.ts')],
    {
      PORT: String(port),
      DATABASE_URL: db.url,
      TESSERA_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      TESSERA_ACCESS_TOKEN_TTL: '86400',
    },
    `http://127.0.0.1:${port}/health`,
  );
  await liftPlanLimits(db.url);
  let failed = false;
  const results: Record<string, unknown> = {};
  try {
    const s = await setUp(`http://127.0.0.1:${port}`);
    if (fuzzRuns) {
      const seed = Number(process.env.TESSERA_FUZZ_SEED ?? Date.now() % 2 ** 31);
      const t0 = Date.now();
      try {
        const openapi = (await (await fetch(`${s.url}/openapi.json`)).json()) as Parameters<typeof fuzz>[1]['openapi'];
        const r = await fuzz(s, {
          runs: fuzzRuns,
          seed,
          openapi,
          rootFields: await rootFieldsOf(s.url, s.apiKey),
          healthEvery: 500,
        });
        results.fuzz = {
          ...r,
          five_xx: Object.entries(r.byStatus)
            .filter(([k]) => Number(k) >= 500)
            .reduce((a, [, n]) => a + n, 0),
          seconds: Math.round((Date.now() - t0) / 1000),
        };
      } catch (err) {
        failed = true;
        // Generated bodies repeat characters by the hundred thousand: shorten runs so the finding stays readable.
        results.fuzz = {
          seed,
          failed: (err as Error).message
            .replace(/(.)\1{99,}/g, (run, c: string) => `${c}×${run.length}`)
            .slice(0, 4000),
        };
      }
    }
    if (soakMinutes) {
      const r = await soak(s, tessera.child.pid!, soakMinutes);
      results.soak = r;
      if (!r.within_10_percent || Number(r.errors) > 0) failed = true;
    }
  } finally {
    tessera.child.kill('SIGTERM');
    await sleep(1000);
    await db.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const { samples, ...summary } = (results.soak ?? {}) as Record<string, unknown>;
  console.log(JSON.stringify({ ...results, ...(results.soak ? { soak: summary } : {}) }, null, 2));
  if (samples)
    console.log(
      `rss samples (s: MB): ${(samples as { t_s: number; rss_mb: number }[]).map((x) => `${x.t_s}:${x.rss_mb}`).join(' ')}`,
    );
  fs.writeFileSync(path.join(OUT, `reliability-${Date.now()}.json`), JSON.stringify(results, null, 2));
  if (failed) process.exit(1);
}
