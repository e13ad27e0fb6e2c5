// node bench/memory-probe.ts [--cases S1,P1-floor,...] [--load-s 10] [--quick] [--probe] [--no-p7] (PROBE_OUTPUT=<file>: Tessera's output)
// Where the Tessera process's memory goes: starts it exactly as bench/run.ts does (`node main.ts`, same env),
// reads /proc/<pid> (VmRSS, smaps by kind of mapping) fresh, after autocannon load on the named HTTP cases'
// Tessera targets (peers are set up but not driven), after an idle pause, and around the P7 upload.
// `--probe` preloads bench/memory-probe-preload.ts (SIGUSR2 → V8 heap figures): a diagnostic, not the measured setup.
// `--node-flags "..."` / `--env "K=V ..."` start Tessera with other settings (e.g. `--env TESSERA_NODE_TUNED=1`: Node's
// and glibc's defaults); `--rounds N` P7 rounds; `--no-p7`. Prints one JSON line per step (RSS by kind of mapping,
// CPU µs per request of each load, CPU ms per GiB of each upload).
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { loadTarget } from './lib/load.ts';
import { startDatabase } from '../platform/database.ts';
import { createLogger } from '../platform/logger.ts';
import { CASES, type BenchContext } from './cases/index.ts';
import { BENCH_OUT as OUT, benchContext, benchTesseraEnv, scratchDir, startTesseraAndFloor } from './child.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const arg = (name: string, dflt: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : dflt;
const caseIds = arg('--cases', 'S1,P1-floor,P2-floor,P3,P4-token,P4-introspect,P5-login,P6').split(',').filter(Boolean);
const loadS = Number(arg('--load-s', '10'));
const quick = process.argv.includes('--quick');
const probe = process.argv.includes('--probe');

const MB = 1e6;

/** Rss of the process's mappings by kind: V8-looking anonymous regions cannot be told from malloc's, so by size/shape. */
function smapsByKind(pid: number): Record<string, number> {
  const text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const kinds: Record<string, number> = {};
  let name = '';
  let size = 0;
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      size = parseInt(head[2]!, 16) - parseInt(head[1]!, 16);
      const p = head[3]!.trim();
      if (p === '[heap]') name = 'brk-heap';
      else if (p.startsWith('[')) name = p;
      else if (p === '') name = size >= 64 * 1024 * 1024 ? 'anon>=64M' : size >= 1024 * 1024 ? 'anon1M-64M' : 'anon<1M';
      else if (p.includes('/node_modules/node/')) name = 'node-binary';
      else if (p.endsWith('.node')) name = 'native-addons';
      else name = 'files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kinds[name] = (kinds[name] ?? 0) + Number(rss[1]) * 1024;
  }
  return Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, +(v / MB).toFixed(1)]));
}

function status(pid: number): Record<string, number> {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const f = (k: string) => +((Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) * 1024) / MB).toFixed(1);
  return {
    VmRSS: f('VmRSS'),
    RssAnon: f('RssAnon'),
    RssFile: f('RssFile'),
    VmHWM: f('VmHWM'),
    threads: Number(/Threads:\s+(\d+)/.exec(s)?.[1]),
  };
}

/** CPU time (user + system) the process used so far, in ms. */
function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

async function heapOf(pid: number): Promise<unknown> {
  if (!probe) return undefined;
  const file = path.join(OUT, `probe-${pid}.json`);
  fs.rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 50));
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(file, { force: true });
  const m = (x: number) => +(x / MB).toFixed(1);
  return {
    rss: m(j.mu.rss),
    heapTotal: m(j.mu.heapTotal),
    heapUsed: m(j.mu.heapUsed),
    external: m(j.mu.external),
    arrayBuffers: m(j.mu.arrayBuffers),
    malloced: m(j.heap.malloced_memory),
    peakMalloced: m(j.heap.peak_malloced_memory),
    physical: m(j.heap.total_physical_size),
    spaces: Object.fromEntries(
      j.spaces.map((s: { n: string; size: number; used: number; phys: number }) => [s.n, `${m(s.used)}/${m(s.phys)}`]),
    ),
  };
}

async function snapshot(label: string, pid: number): Promise<void> {
  console.log(
    JSON.stringify({ label, cpu_ms: cpuMs(pid), status: status(pid), smaps: smapsByKind(pid), v8: await heapOf(pid) }),
  );
}

async function main(): Promise<void> {
  const dataDir = scratchDir('data-');
  const log = createLogger('warn');
  const db = await startDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, logger: log });
  const port = 19080 + Math.floor(Math.random() * 1000);
  const pre = [
    ...(probe ? ['--import', path.join(ROOT, 'bench', 'memory-probe-preload.ts')] : []),
    ...arg('--node-flags', '').split(' ').filter(Boolean),
  ];
  const extraEnv = Object.fromEntries(
    arg('--env', '')
      .split(' ')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const { tessera, floor } = await startTesseraAndFloor(db.url, {
    nodeArgs: pre,
    env: { ...extraEnv, ...benchTesseraEnv(db.url, dataDir) },
    port,
  });
  const peers: ChildProcess[] = [floor.child];
  const pid = tessera.child.pid!;
  const ctx: BenchContext = benchContext({
    tessera: tessera.url,
    tesseraPid: pid,
    floor: floor.url,
    databaseUrl: db.url,
    outDir: OUT,
    quick,
    peers,
  });
  try {
    await new Promise((r) => setTimeout(r, 2000));
    await snapshot('fresh', pid);
    for (const id of caseIds) {
      const c = CASES.find((x) => x.id === id);
      if (!c || c.kind === 'custom') throw new Error(`not an HTTP case: ${id}`);
      const { tessera: t } = await c.setup(ctx);
      const cpu0 = cpuMs(pid);
      const r = await loadTarget(t, Math.max(loadS, c.minDurationS ?? 0));
      console.log(
        JSON.stringify({
          case: id,
          rps: r.rps,
          errors: r.errors,
          cpu_us_per_req: +(((cpuMs(pid) - cpu0) * 1000) / r.total).toFixed(0),
        }),
      );
      await snapshot(`after ${id}`, pid);
    }
    await new Promise((r) => setTimeout(r, 5000));
    await snapshot('idle 5 s after load', pid);
    if (!process.argv.includes('--no-p7')) {
      const p7 = CASES.find((x) => x.id === 'P7-upload')!;
      if (p7.kind !== 'custom') throw new Error('P7 is custom');
      const ready = await p7.setup(ctx);
      if ('skipped' in ready) throw new Error(`P7 skipped: ${ready.skipped}`);
      const { run, cleanup } = ready;
      try {
        for (let i = 0; i < Number(arg('--rounds', '1')); i++) {
          const cpu0 = cpuMs(pid);
          const figures = await run();
          const size = (quick ? 128 : 1024) * 1024 * 1024;
          // CPU of the Tessera process in the round (its upload and delete; cp and the floor's upload are other processes), per GiB uploaded.
          console.log(
            JSON.stringify({ p7: figures, tessera_cpu_ms_per_gib: Math.round(((cpuMs(pid) - cpu0) * 2 ** 30) / size) }),
          );
          await snapshot('after P7', pid);
        }
      } finally {
        await cleanup?.();
      }
    }
  } finally {
    if (process.env.PROBE_OUTPUT) fs.writeFileSync(process.env.PROBE_OUTPUT, tessera.output());
    tessera.child.kill('SIGTERM');
    for (const p of peers) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    await db.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
