// The V8 and glibc settings of a Tessera server process (`node main.ts`, `npm start`, every split-mode role).
// V8 sizes its young generation when it starts and glibc reads its malloc tunables at exec, so `node main.ts`
// re-executes itself once, in place (process.execve: same pid, so process managers, containers and the benchmark
// see the one process they started), before the platform loads. Imported first by main.ts; a no-op anywhere
// else (tests importing main.ts, scripts) and when the settings are already in place.
//
// Measured (bench/memory-probe.ts, one-process mode, fresh): V8's default young generation on a 64-bit machine with
// a few GB is 2 x 64 MB semi-spaces, committed after start-up and never given back: 134 MB of the 335 MB resting
// RSS. 16 MB semi-spaces (the default of Node before 22) rest at ~230 MB. The old generation is collected when it
// reaches 1.5x what the last full collection kept alive instead of up to 4x: after the benchmark's load the process
// held ~410 MB (old space 290 MB, 65 MB of it alive), with 1.5x ~310 MB (CPU per request of S1/P2 within the noise
// of the shared machine). glibc: two malloc arenas instead of one
// per thread (libuv's pool threads hash passwords and write files), and a fixed mmap threshold so big blocks
// (argon2id's 19 MiB) go back to the system when freed instead of raising the threshold and staying in an arena.
//
// V8's helper threads (concurrent marking and sweeping, parallel scavenges: the "V8Worker" threads, four whatever the
// machine) run at a lower CPU priority than the event loop (nice GC_THREAD_NICE, set on the threads themselves, which
// needs no privilege). At the default priority, while a major collection marks, the helpers and the event-loop thread
// shared the process's CPU as equals: on two cores the helpers took both and the event loop waited for a CPU for
// 5-25 ms at a time, every request of every project with it (bench N1's scheduler trace, 2026-12-07:
// docs/architecture.md, "Fair shares"). Lowered, the helpers mark in the time the event loop leaves; on an idle
// machine nothing changes.
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { telemetryFlags } from './telemetry.ts';

/** Node/V8 flags added unless the command line or NODE_OPTIONS already sets them. */
export const NODE_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=50'];
/** glibc malloc tunables, used unless GLIBC_TUNABLES is already set. */
export const MALLOC_TUNABLES = 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072';
/** The nice value of V8's helper threads (the event loop keeps the process's own, 0 by default). */
export const GC_THREAD_NICE = 10;
/** Set once the process runs with the settings (set it yourself to keep Node's and glibc's defaults). */
export const TUNED_MARK = 'TESSERA_NODE_TUNED';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** The command line and environment of the tuned re-execution, or null when there is nothing to change. */
export function tunedExec(
  argv: readonly string[],
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
): { args: string[]; env: NodeJS.ProcessEnv } | null {
  if (env[TUNED_MARK]) return null;
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  // Tracing (OTEL_EXPORTER_OTLP_ENDPOINT set) preloads the OpenTelemetry SDK: platform/telemetry.ts.
  const flags = [
    ...NODE_FLAGS.filter((f) => !given.some((g) => g.startsWith(f.split('=')[0]!))),
    ...telemetryFlags(env, given),
  ];
  const addTunables = !env.GLIBC_TUNABLES && process.platform === 'linux';
  if (flags.length === 0 && !addTunables) return null;
  // Which variables this step added, so the platform removes them again and its children (PostgreSQL) never see them.
  const added = addTunables ? 'GLIBC_TUNABLES' : '1';
  return {
    args: [argv[0]!, ...flags, ...execArgv, ...argv.slice(1)],
    env: { ...env, [TUNED_MARK]: added, ...(addTunables ? { GLIBC_TUNABLES: MALLOC_TUNABLES } : {}) },
  };
}

/**
 * Lowers the CPU priority of this process's V8 helper threads (named "V8Worker") to GC_THREAD_NICE; answers how many
 * were lowered (0 where /proc is absent or a thread may not be changed: then they keep the process's priority).
 */
export function lowerHelperThreads(): number {
  let lowered = 0;
  let tasks: string[];
  try {
    tasks = fs.readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    try {
      if (fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== 'V8Worker') continue;
      os.setPriority(Number(tid), Math.max(os.getPriority(Number(tid)), GC_THREAD_NICE));
      lowered++;
    } catch {
      // a thread that ended meanwhile, or a priority this process may not change: left as it is
    }
  }
  return lowered;
}

function tune(): void {
  const entry = process.argv[1];
  if (!entry || realpath(entry) !== realpath(MAIN)) return;
  const mark = process.env[TUNED_MARK];
  if (mark) {
    // Already tuned: the settings are read; keep them out of the environment of child processes.
    if (mark === 'GLIBC_TUNABLES') delete process.env.GLIBC_TUNABLES;
    lowerHelperThreads();
    return;
  }
  const execve = process.execve;
  const exec =
    typeof execve === 'function'
      ? tunedExec([process.execPath, ...process.argv.slice(1)], process.execArgv, process.env)
      : null;
  if (exec && execve) execve.call(process, process.execPath, exec.args, exec.env);
  // Here only when nothing was re-executed: threads made before an exec are gone with it.
  lowerHelperThreads();
}

tune();
