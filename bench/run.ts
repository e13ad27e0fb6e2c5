// npm run bench [-- --quick] [-- --case S1]: starts Tessera (one-process mode) and its peers side by side
// on loopback, drives each with the same autocannon settings (cases and targets interleaved, several
// rounds), and prints req/s, p50, p99 and the ratio to the peer. Results also go to bench/out/.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { startDatabase } from '../platform/database.ts';
import { createLogger } from '../platform/logger.ts';
import { CASES, type BenchCase, type BenchContext, type Target } from './cases/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'bench', 'out');
const quick = process.argv.includes('--quick');
const only = process.argv.includes('--case') ? process.argv[process.argv.indexOf('--case') + 1] : undefined;
const ROUNDS = quick ? 1 : 3;
const DURATION = quick ? 2 : 10;
const CONNECTIONS = 32;

type Started = { child: ChildProcess; output: () => string };

function startChild(args: string[], env: Record<string, string>, ready: RegExp | string): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`not ready: ${args.join(' ')}\n${out}`)), 60_000);
    const check = async () => {
      if (typeof ready === 'string') {
        for (;;) {
          try {
            if ((await fetch(ready)).ok) break;
          } catch {
            // not yet
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        clearTimeout(timer);
        resolve({ child, output: () => out });
      }
    };
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready instanceof RegExp && ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out });
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${args.join(' ')}\n${out}`)));
    void check();
  });
}

async function load(t: Target): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const r = await autocannon({
    url: t.url,
    method: t.method,
    headers: t.headers,
    body: t.body,
    connections: CONNECTIONS,
    duration: DURATION,
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** The peers (Parse Server, oidc-provider) live in bench/peers with their own lockfile; install them once. */
function ensurePeersInstalled(): void {
  const dir = path.join(ROOT, 'bench', 'peers');
  if (fs.existsSync(path.join(dir, 'node_modules', '.package-lock.json'))) return;
  console.log('installing benchmark peers (bench/peers) ...');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm ci in bench/peers failed');
}

async function main(): Promise<void> {
  ensurePeersInstalled();
  fs.mkdirSync(OUT, { recursive: true, mode: 0o755 });
  const dataDir = fs.mkdtempSync(path.join(OUT, 'data-'));
  fs.chmodSync(dataDir, 0o755);
  const log = createLogger('warn');
  const db = await startDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, logger: log });
  const port = 18080 + Math.floor(Math.random() * 1000);
  const tessera = await startChild([path.join(ROOT, 'main.ts')], { PORT: String(port), DATABASE_URL: db.url, TESSERA_DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, `http://127.0.0.1:${port}/health`);
  const floor = await startChild([path.join(ROOT, 'bench', 'peers', 'floor.ts')], { PORT: '0', DATABASE_URL: db.url }, /listening (\d+)/);
  const floorPort = Number(/listening (\d+)/.exec(floor.output())![1]);
  const peers: ChildProcess[] = [];
  const ctx: BenchContext = {
    tessera: `http://127.0.0.1:${port}`,
    floor: `http://127.0.0.1:${floorPort}`,
    databaseUrl: db.url,
    spawnPeer: async (args, env, ready) => {
      const started = await startChild(args, env, ready);
      peers.push(started.child);
      return started;
    },
  };
  const rows: Record<string, unknown>[] = [];
  try {
    const cases = CASES.filter((c) => !only || c.id === only);
    const prepared: { c: BenchCase; targets: { tessera: Target; peer: Target } }[] = [];
    for (const c of cases) prepared.push({ c, targets: await c.setup(ctx) });
    const samples = new Map<string, { tessera: Awaited<ReturnType<typeof load>>[]; peer: Awaited<ReturnType<typeof load>>[] }>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const { c, targets } of prepared) {
        const s = samples.get(c.id) ?? { tessera: [], peer: [] };
        s.tessera.push(await load(targets.tessera));
        s.peer.push(await load(targets.peer));
        samples.set(c.id, s);
      }
    }
    for (const { c } of prepared) {
      const s = samples.get(c.id)!;
      const t = { rps: median(s.tessera.map((x) => x.rps)), p50: median(s.tessera.map((x) => x.p50)), p99: median(s.tessera.map((x) => x.p99)), errors: s.tessera.reduce((a, x) => a + x.errors, 0) };
      const p = { rps: median(s.peer.map((x) => x.rps)), p50: median(s.peer.map((x) => x.p50)), p99: median(s.peer.map((x) => x.p99)), errors: s.peer.reduce((a, x) => a + x.errors, 0) };
      rows.push({ case: c.id, title: c.title, peer: c.peer, goal: c.goal, tessera_rps: Math.round(t.rps), peer_rps: Math.round(p.rps), ratio: +(t.rps / p.rps).toFixed(2), tessera_p50_ms: t.p50, tessera_p99_ms: t.p99, peer_p50_ms: p.p50, peer_p99_ms: p.p99, errors: t.errors + p.errors });
    }
  } finally {
    tessera.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
    for (const p of peers) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const machine = { nproc: os.cpus().length, memory_gib: +(os.totalmem() / 2 ** 30).toFixed(1), node: process.version, date: new Date().toISOString(), quick, rounds: ROUNDS, duration_s: DURATION, connections: CONNECTIONS };
  console.table(rows);
  console.log(JSON.stringify(machine));
  fs.writeFileSync(path.join(OUT, `bench-${Date.now()}.json`), JSON.stringify({ machine, rows }, null, 2));
  const missing = CASES.filter((c) => (!only || c.id === only) && !rows.some((r) => r.case === c.id));
  if (missing.length > 0 || rows.some((r) => !(Number(r.tessera_rps) > 0 && Number(r.peer_rps) > 0))) {
    console.error('some cases produced no figures');
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
