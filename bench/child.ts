// Starting a server for the benchmark tools (bench/run.ts, bench/memory-probe.ts): a child node process, ready when
// `ready` (a URL) answers 200 or its output matches `ready` (a pattern); its output is kept for error messages.
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { PARENT_PID_ENV } from '../platform/parent-watch.ts';
import type { BenchContext } from './cases/types.ts';

export type Started = { child: ChildProcess; output: () => string };

export function startChild(args: string[], env: Record<string, string>, ready: RegExp | string): Promise<Started> {
  return new Promise((resolve, reject) => {
    // TESSERA_PARENT_PID: a Tessera child ends itself if the harness is killed (platform/parent-watch.ts).
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env, [PARENT_PID_ENV]: String(process.pid) },
      stdio: ['ignore', 'pipe', 'pipe'],
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
