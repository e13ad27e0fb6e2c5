// Starting a server for the benchmark tools (bench/run.ts, bench/memory-probe.ts): a child node process, ready when
// `ready` (a URL) answers 200 or its output matches `ready` (a pattern); its output is kept for error messages.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { PARENT_PID_ENV } from '../platform/parent-watch.ts';
import type { BenchContext } from './cases/types.ts';

export type Started = { child: ChildProcess; output: () => string };

const ROOT = path.resolve(import.meta.dirname, '..');
/** The benchmarks' scratch folder (git-ignored): results, data folders, files. */
export const BENCH_OUT = path.join(ROOT, 'bench', 'out');

/**
 * A new folder `<prefix>XXXXXX` in bench/out, mode 0755: the embedded PostgreSQL runs as the `postgres` user, which
 * must traverse it (a mkdtemp folder is 0700).
 */
export function scratchDir(prefix: string): string {
  fs.mkdirSync(BENCH_OUT, { recursive: true, mode: 0o755 });
  const dir = fs.mkdtempSync(path.join(BENCH_OUT, prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/**
 * Settings of a benchmarked Tessera on `databaseUrl` and data folder `dataDir`: tokens made during set-up outlive a full
 * run (~15 min), or introspection measures the cheaper inactive answer; P6 drives one public webhook receiver far past
 * its default 600 requests/minute, so the limit is lifted, or it would measure 429s.
 */
/** The operator key of the harness's Tessera (cases acting as the install's operator, e.g. F1's moves). */
export const BENCH_OPERATOR_KEY = `top_${crypto.randomBytes(32).toString('base64url')}`;

export function benchTesseraEnv(databaseUrl: string, dataDir: string): Record<string, string> {
  return {
    TESSERA_OPERATOR_KEY: BENCH_OPERATOR_KEY,
    DATABASE_URL: databaseUrl,
    TESSERA_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    TESSERA_ACCESS_TOKEN_TTL: '3600',
    TESSERA_WEBHOOK_RATE_LIMIT: '1000000',
  };
}

/** Starts a one-process Tessera (`node <nodeArgs> main.ts`) on `port` with `env` over the harness's; ready once /health answers. */
export async function startTessera(
  nodeArgs: string[],
  env: Record<string, string>,
  port: number,
  ownSession = false,
): Promise<Started & { url: string }> {
  const url = `http://127.0.0.1:${port}`;
  const started = await startChild(
    [...nodeArgs, path.join(ROOT, 'main.ts')],
    { ...env, PORT: String(port) },
    `${url}/health`,
    ownSession,
  );
  return { ...started, url };
}

/**
 * The measured pair on `databaseUrl`: a Tessera as startTessera starts it, with every plan's limits lifted once it
 * has seeded them (liftPlanLimits), and the floor.
 */
export async function startTesseraAndFloor(
  databaseUrl: string,
  o: { nodeArgs: string[]; env: Record<string, string>; port: number },
): Promise<{ tessera: Started & { url: string }; floor: Started & { url: string } }> {
  const tessera = await startTessera(o.nodeArgs, o.env, o.port);
  await liftPlanLimits(databaseUrl);
  return { tessera, floor: await startFloor(databaseUrl) };
}

/** Starts the node:http + pg floor (bench/peers/floor.ts) on `databaseUrl`; answers it and its base URL. */
export async function startFloor(databaseUrl: string): Promise<Started & { url: string }> {
  const floor = await startChild(
    [path.join(ROOT, 'bench', 'peers', 'floor.ts')],
    { PORT: '0', DATABASE_URL: databaseUrl },
    /listening (\d+)/,
  );
  return { ...floor, url: `http://127.0.0.1:${/listening (\d+)/.exec(floor.output())![1]}` };
}

export function startChild(
  args: string[],
  env: Record<string, string>,
  ready: RegExp | string,
  /**
   * A session of its own (`setsid`): where the kernel shares the CPU between sessions first (autogroups), the child
   * weighs as one group, as a service in a cgroup of its own does, instead of sharing the harness's group with the
   * load clients. It still ends itself if the harness is killed (TESSERA_PARENT_PID).
   */
  ownSession = false,
): Promise<Started> {
  return new Promise((resolve, reject) => {
    // TESSERA_PARENT_PID: a Tessera child ends itself if the harness is killed (platform/parent-watch.ts).
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env, [PARENT_PID_ENV]: String(process.pid) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: ownSession,
    });
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

/** What every case is handed; the peers it starts are added to `peers` (the caller kills them when the run ends). */
export function benchContext(o: Omit<BenchContext, 'spawnPeer'> & { peers: ChildProcess[] }): BenchContext {
  const { peers, ...fixed } = o;
  return {
    ...fixed,
    spawnPeer: async (args, env, ready) => {
      const started = await startChild(args, env, ready);
      peers.push(started.child);
      return started;
    },
  };
}

/**
 * Lifts every plan's requests per minute and function runs per month, as an operator would for a load test: the
 * benchmarks measure throughput far past a plan's limits. The limits are still enforced (their cost is measured),
 * only never reached. Call once Tessera has started (its migrations seed the plans).
 */
export async function liftPlanLimits(databaseUrl: string): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      'update plans set max_requests_per_minute = 2000000000, max_function_invocations_per_month = 1000000000000',
    );
  } finally {
    await db.end();
  }
}
