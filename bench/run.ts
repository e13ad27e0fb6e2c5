// npm run bench [-- --quick] [-- --case S1] (or -- --soak <minutes> / -- --fuzz <requests>, bench/reliability.ts): starts Tessera (one-process mode) and its peers side by side
// on loopback, drives each with the same autocannon settings (cases and targets interleaved, several
// rounds), and prints req/s, p50, p99 and the ratio to the peer. Custom cases (file throughput, memory...)
// measure themselves once per round, interleaved with the others, and print their figures in the same
// table (req/s columns empty). Results also go to bench/out/.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { startDatabase } from '../platform/database.ts';
import { freePort } from '../platform/net.ts';
import { createLogger } from '../platform/logger.ts';
import { CASES, type BenchCase, type BenchContext, type Target } from './cases/index.ts';
import type { CustomCase, CustomFigures, HttpCase } from './cases/types.ts';
import {
  BENCH_OUT as OUT,
  benchContext,
  benchTesseraEnv,
  scratchDir,
  startTessera,
  startTesseraAndFloor,
} from './child.ts';
import { loadTarget, type LoadFigures } from './lib/load.ts';
import { runReliability } from './reliability.ts';
import { ensureInstalled } from '../scripts/ensure-installed.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const quick = process.argv.includes('--quick');
const only = process.argv.includes('--case') ? process.argv[process.argv.indexOf('--case') + 1] : undefined;
const ROUNDS = quick ? 1 : 3;
// --quick only checks that every case runs and gives figures: a 1 s load answers req/s, p50 and p99 (autocannon's
// first per-second sample ends it); cases whose peer needs longer ask for it (minDurationS).
const DURATION = quick ? 1 : 10;
const CONNECTIONS = 32;
const BENCH_MAX_CONNECTIONS = 1500;

const load = (t: Target, minDuration = 0): Promise<LoadFigures> =>
  loadTarget(t, Math.max(DURATION, minDuration), CONNECTIONS);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** The default fold of a custom case's rounds: the median of every figure; met only if every round met it. */
function summarizeCustom(rounds: CustomFigures[]): CustomFigures {
  const fold = (side: 'tessera' | 'peer') => {
    const out: Record<string, number> = {};
    for (const key of Object.keys(rounds[0]![side])) out[key] = median(rounds.map((r) => r[side][key]!));
    return out;
  };
  const met = rounds.every((r) => r.met === undefined) ? undefined : rounds.every((r) => r.met === true);
  return { tessera: fold('tessera'), peer: fold('peer'), ratio: median(rounds.map((r) => r.ratio)), met };
}

/** `a=1 b=2` of a side's figures, for the printed table. */
function describeFigures(figures: Record<string, number>): string {
  return Object.entries(figures)
    .map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toFixed(1)}`)
    .join(' ');
}

/** The peers (Parse Server, oidc-provider) live in bench/peers with their own lockfile; install them once. */
function ensurePeersInstalled(): void {
  ensureInstalled(path.join(ROOT, 'bench', 'peers'));
}

/** The first fields of a custom case's row in the results. */
const customRow = (c: CustomCase) => ({ case: c.id, title: c.title, peer: c.peer, goal: c.goal, kind: 'custom' });

/**
 * `--quick`: each case's wall time (its set-up, every round and its clean-up), printed on stderr as
 * `bench: case <id> took <s> s`, so CI's log shows where the quick run's time goes.
 */
const caseTimes = new Map<string, { setup: number; run: number; cleanup: number }>();
async function timed<T>(id: string, phase: 'setup' | 'run' | 'cleanup', f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    const t = caseTimes.get(id) ?? { setup: 0, run: 0, cleanup: 0 };
    t[phase] += (performance.now() - t0) / 1000;
    caseTimes.set(id, t);
  }
}

function printCaseTimes(): void {
  if (!quick) return;
  for (const [id, t] of caseTimes)
    console.error(
      `bench: case ${id} took ${(t.setup + t.run + t.cleanup).toFixed(1)} s (set-up ${t.setup.toFixed(1)}, run ${t.run.toFixed(1)}, clean-up ${t.cleanup.toFixed(1)})`,
    );
}

async function main(): Promise<void> {
  const started = performance.now();
  ensurePeersInstalled();
  const dataDir = scratchDir('data-');
  const log = createLogger('warn');
  // P9 starts a second Tessera whose data API may keep a connection per project (1,000 + the first one's 200 + both
  // platforms' own): the embedded server allows 1,500 (an unused slot costs a little shared memory).
  const db = await startDatabase({
    databaseUrl: process.env.DATABASE_URL,
    dataDir,
    maxConnections: BENCH_MAX_CONNECTIONS,
    logger: log,
  });
  const port = 18080 + Math.floor(Math.random() * 1000);
  // E1 delivers events to a receiver on loopback: private networks are allowed (no case sends anywhere else).
  // BENCH_CPU_PROF=<dir>: the Tessera child writes a V8 CPU profile there when it exits (read it with a script summing self-time).
  const profDir = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : undefined;
  const profArgs = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const tesseraEnv = { ...benchTesseraEnv(db.url, dataDir), TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true' };
  const { tessera, floor } = await startTesseraAndFloor(db.url, { nodeArgs: profArgs, env: tesseraEnv, port });
  if (quick) console.error(`bench: start-up took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const peers: ChildProcess[] = [];
  const ctx: BenchContext = benchContext({
    tessera: tessera.url,
    tesseraPid: tessera.child.pid!,
    floor: floor.url,
    databaseUrl: db.url,
    outDir: OUT,
    quick,
    peers,
    spawnTessera: async (env, ownSession) => {
      const started = await startTessera(profArgs, { ...tesseraEnv, ...env }, await freePort(), ownSession);
      peers.push(started.child);
      const stop = async () => {
        if (started.child.exitCode !== null || started.child.signalCode !== null) return;
        const exited = new Promise((r) => started.child.once('exit', r));
        started.child.kill('SIGTERM');
        await exited;
      };
      return { url: started.url, pid: started.child.pid!, stop };
    },
  });
  const rows: Record<string, unknown>[] = [];
  const customs: {
    c: CustomCase;
    run: () => Promise<CustomFigures>;
    cleanup?: () => Promise<void>;
    rounds: CustomFigures[];
    error?: string;
  }[] = [];
  const skipped: { c: CustomCase; reason: string }[] = [];
  try {
    const cases: BenchCase[] = CASES.filter((c) => !only || c.id === only);
    const prepared: { c: HttpCase; targets: { tessera: Target; peer: Target } }[] = [];
    for (const c of cases) {
      if (c.kind === 'custom') {
        const ready = await timed(c.id, 'setup', () => c.setup(ctx));
        if ('skipped' in ready) skipped.push({ c, reason: ready.skipped });
        else customs.push({ c, ...ready, rounds: [] });
      } else prepared.push({ c, targets: await timed(c.id, 'setup', () => c.setup(ctx)) });
    }
    const samples = new Map<
      string,
      { tessera: Awaited<ReturnType<typeof load>>[]; peer: Awaited<ReturnType<typeof load>>[] }
    >();
    for (let round = 0; round < ROUNDS; round++) {
      for (const { c, targets } of prepared) {
        const s = samples.get(c.id) ?? { tessera: [], peer: [] };
        s.tessera.push(await timed(c.id, 'run', () => load(targets.tessera, c.minDurationS)));
        s.peer.push(await timed(c.id, 'run', () => load(targets.peer, c.minDurationS)));
        samples.set(c.id, s);
      }
      for (const custom of customs) {
        if (custom.error) continue;
        try {
          custom.rounds.push(await timed(custom.c.id, 'run', custom.run));
        } catch (err) {
          // One broken custom case must not hide the others' figures; it is reported as missing.
          custom.error = err instanceof Error ? err.message : String(err);
          console.error(`${custom.c.id} failed:`, err);
        }
      }
    }
    for (const { c } of prepared) {
      const s = samples.get(c.id)!;
      const t = {
        rps: median(s.tessera.map((x) => x.rps)),
        p50: median(s.tessera.map((x) => x.p50)),
        p99: median(s.tessera.map((x) => x.p99)),
        errors: s.tessera.reduce((a, x) => a + x.errors, 0),
      };
      const p = {
        rps: median(s.peer.map((x) => x.rps)),
        p50: median(s.peer.map((x) => x.p50)),
        p99: median(s.peer.map((x) => x.p99)),
        errors: s.peer.reduce((a, x) => a + x.errors, 0),
      };
      // Figures made of failed requests are not figures: more than 1% errors on either side fails the case.
      const total = s.tessera.reduce((a, x) => a + x.total, 0) + s.peer.reduce((a, x) => a + x.total, 0);
      const errorShare = total > 0 ? (t.errors + p.errors) / total : 1;
      rows.push({
        case: c.id,
        title: c.title,
        peer: c.peer,
        goal: c.goal,
        tessera_rps: Math.round(t.rps),
        peer_rps: Math.round(p.rps),
        ratio: +(t.rps / p.rps).toFixed(2),
        tessera_p50_ms: t.p50,
        tessera_p99_ms: t.p99,
        peer_p50_ms: p.p50,
        peer_p99_ms: p.p99,
        errors: t.errors + p.errors,
        ...(errorShare > 0.01 ? { error: `${(errorShare * 100).toFixed(1)}% of requests failed` } : {}),
      });
    }
    for (const { c, rounds, error } of customs) {
      const info = customRow(c);
      if (rounds.length === 0) {
        rows.push({ ...info, error: error ?? 'no rounds ran' });
        continue;
      }
      const f = (c.summarize ?? summarizeCustom)(rounds);
      rows.push({
        ...info,
        ratio: +f.ratio.toFixed(2),
        tessera: f.tessera,
        peer_figures: f.peer,
        met: f.met,
        rounds,
        ...(error ? { error } : {}),
      });
    }
    // A case this run cannot measure (it says why) is reported skipped, not failed.
    for (const { c, reason } of skipped) rows.push({ ...customRow(c), skipped: reason });
  } finally {
    for (const custom of customs) {
      try {
        await timed(custom.c.id, 'cleanup', async () => custom.cleanup?.());
      } catch (err) {
        console.error(`${custom.c.id} cleanup failed:`, err);
      }
    }
    tessera.child.kill('SIGTERM');
    floor.child.kill('SIGTERM');
    for (const p of peers) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    // The profile is written when the child exits: let it finish shutting down first.
    if (profDir && tessera.child.exitCode === null)
      await new Promise((r) => {
        tessera.child.once('exit', r);
        setTimeout(r, 15_000);
      });
    await db.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    printCaseTimes();
    if (quick) console.error(`bench: the quick run took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const machine = {
    nproc: os.cpus().length,
    memory_gib: +(os.totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    date: new Date().toISOString(),
    quick,
    rounds: ROUNDS,
    duration_s: DURATION,
    connections: CONNECTIONS,
  };
  // Custom rows: their figures as text in the table (the JSON keeps them as numbers).
  console.table(
    rows.map((r) => {
      if (r.kind !== 'custom') return r;
      const { tessera: t, peer_figures: p, rounds: _rounds, kind: _kind, skipped: why, ...rest } = r;
      if (why) return { ...rest, figures: `skipped: ${String(why)}` };
      return {
        ...rest,
        figures: t
          ? `tessera ${describeFigures(t as Record<string, number>)} | peer ${describeFigures(p as Record<string, number>)}`
          : undefined,
      };
    }),
  );
  console.log(JSON.stringify(machine));
  fs.writeFileSync(path.join(OUT, `bench-${Date.now()}.json`), JSON.stringify({ machine, rows }, null, 2));
  const missing = CASES.filter((c) => (!only || c.id === only) && !rows.some((r) => r.case === c.id));
  const noFigures = (r: Record<string, unknown>) =>
    r.skipped
      ? false
      : r.kind === 'custom'
        ? Boolean(r.error) || !(Number.isFinite(r.ratio) && Number(r.ratio) > 0)
        : Boolean(r.error) || !(Number(r.tessera_rps) > 0 && Number(r.peer_rps) > 0);
  if (missing.length > 0 || rows.some(noFigures)) {
    console.error('some cases produced no figures');
    process.exit(1);
  }
}

// --soak <minutes> and --fuzz <requests>: the reliability runs (bench/reliability.ts) instead of the speed cases.
const HELP = `npm run bench -- [options]
  (none)              every case, 3 rounds of 10 s, results in bench/out/ (record what matters in bench/RESULTS.md)
  --quick             every case, 1 round of 1 s (what CI runs: every case must produce figures)
  --case <id>         one case only; ids: ${CASES.map((c) => c.id).join(', ')}
  --soak <minutes>    a soak at half the measured maximum rate over a mix of routes (RSS curve, errors)
  --fuzz <requests>   a long run of the OpenAPI/GraphQL fuzzer (5xx and error shapes)
Environment: BENCH_CPU_PROF=<dir> makes the Tessera child write a V8 CPU profile there (sum it with
node bench/cpu-profile.ts <file>). Other benchmarks: npm run bench:scale-out (one process vs split mode vs two of
every role), node bench/memory-probe.ts.`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}

(process.argv.includes('--soak') || process.argv.includes('--fuzz') ? runReliability(process.argv) : main()).catch(
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
