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
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { telemetryFlags } from './telemetry.ts';

/** Node/V8 flags added unless the command line or NODE_OPTIONS already sets them. */
export const NODE_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=50'];
/** glibc malloc tunables, used unless GLIBC_TUNABLES is already set. */
export const MALLOC_TUNABLES = 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072';
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

function tune(): void {
  const entry = process.argv[1];
  if (!entry || realpath(entry) !== realpath(MAIN)) return;
  const mark = process.env[TUNED_MARK];
  if (mark) {
    // Already tuned: the settings are read; keep them out of the environment of child processes.
    if (mark === 'GLIBC_TUNABLES') delete process.env.GLIBC_TUNABLES;
    return;
  }
  if (typeof process.execve !== 'function') return;
  const exec = tunedExec([process.execPath, ...process.argv.slice(1)], process.execArgv, process.env);
  if (exec) process.execve(process.execPath, exec.args, exec.env);
}

tune();
