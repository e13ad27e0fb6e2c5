// Starts a real Tessera for a test: in-process (one-process mode) or as the split-mode process tree.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { startTessera, type Tessera } from '../../main.ts';
import { createTestDatabase } from './database.ts';
import { freePort } from '../../platform/net.ts';
import { PARENT_PID_ENV } from '../../platform/parent-watch.ts';
import type { Logger } from '../../platform/logger.ts';
import { waitFor } from './wait-for.ts';
import { withSplitStartLock } from './start-lock.ts';
import { portOwnedBy } from './port-owner.ts';

export type TestPlatform = {
  url: string;
  /** The platform database (plans, tenants, projects: what an operator's change writes). */
  databaseUrl: string;
  close: () => Promise<void>;
  tessera?: Tessera;
  dataDir: string;
  child?: ChildProcess;
};

export const TEST_SECRET = 'test-internal-secret-0123456789abcdefghij';
/** The operator key every test platform accepts (TESSERA_OPERATOR_KEY), for tests acting as the install's operator. */
export const TEST_OPERATOR_KEY = `top_${'test-operator-key-'.repeat(3)}`;

export function tmpDataDir(): string {
  const base = path.resolve('.tessera', 'test-data');
  fs.mkdirSync(base, { recursive: true, mode: 0o755 });
  return fs.mkdtempSync(path.join(base, 'p-'));
}

/** One-process mode on a fresh database. */
export async function startOneProcess(env: Record<string, string> = {}, logger?: Logger): Promise<TestPlatform> {
  const db = await createTestDatabase();
  const dataDir = tmpDataDir();
  const tessera = await startTessera(
    {
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: db.url,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_INTERNAL_SECRET: TEST_SECRET,
      // The plan the suite's tests were written against (global-setup.ts says why).
      TESSERA_DEFAULT_PLAN: process.env.TESSERA_DEFAULT_PLAN ?? 'free',
      TESSERA_OPERATOR_KEY: TEST_OPERATOR_KEY,
      ...env,
    },
    logger,
  );
  return {
    url: tessera.url,
    databaseUrl: db.url,
    tessera,
    dataDir,
    close: async () => {
      await tessera.close();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `node script args` with Node 24 (the one running the tests) and waits for `readyUrl`. */
const outputs = new WeakMap<ChildProcess, () => string>();

/** What a process started by startProcess has written so far (stdout and stderr). */
export function outputOf(child: ChildProcess): string {
  return outputs.get(child)?.() ?? '';
}

export async function startProcess(
  args: string[],
  env: Record<string, string>,
  readyUrl: string,
  timeoutMs = 90_000,
): Promise<ChildProcess> {
  // TESSERA_PARENT_PID: the child (and a split launcher's children) end themselves if this test process dies.
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, NODE_OPTIONS: '', [PARENT_PID_ENV]: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  outputs.set(child, () => output);
  const port = Number(new URL(readyUrl).port);
  const ready = async () => {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}:\n${output.slice(-4000)}`);
    const answered = await fetch(readyUrl).then(
      (res) => res.status === 200,
      () => false,
    ); // not listening yet
    // An answer from a process that is not ours (tests/support/port-owner.ts) is not our child being ready.
    return answered && (!port || portOwnedBy(child.pid!, port));
  };
  try {
    await waitFor(ready, { timeoutMs, intervalMs: 200, message: readyUrl });
    return child;
  } catch (err) {
    if (child.exitCode !== null) throw err;
    child.kill('SIGKILL');
    throw new Error(`${readyUrl} not ready after ${timeoutMs} ms:\n${output.slice(-4000)}`);
  }
}

/** Stops a child process and waits for it. */
export async function stopProcess(child: ChildProcess, timeoutMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

/**
 * The timeout of a hook that starts a split platform: the start-lock's wait (at most 240 s, seconds in practice) and
 * the start itself (at most 180 s).
 */
export const SPLIT_START_HOOK_MS = 480_000;

/** Split mode: every subgraph, the router and the front door as separate processes (one start at a time). */
export async function startSplit(env: Record<string, string> = {}): Promise<TestPlatform> {
  const db = await createTestDatabase();
  const dataDir = tmpDataDir();
  const port = await freePort();
  const child = await withSplitStartLock(() =>
    startProcess(
      [path.resolve('scripts/split.ts'), '--free-ports'],
      {
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATABASE_URL: db.url,
        TESSERA_DATA_DIR: dataDir,
        TESSERA_INTERNAL_SECRET: TEST_SECRET,
        TESSERA_DEFAULT_PLAN: process.env.TESSERA_DEFAULT_PLAN ?? 'free',
        TESSERA_OPERATOR_KEY: TEST_OPERATOR_KEY,
        ...env,
      },
      `http://127.0.0.1:${port}/health`,
      180_000,
    ),
  );
  // The launcher writes its layout (ports, pids) once every process is up, just after /health answers.
  const layoutFile = path.join(dataDir, 'split.json');
  await waitFor(() => fs.existsSync(layoutFile), { timeoutMs: 10_000, intervalMs: 100, message: 'split.json' }).catch(
    () => undefined,
  ); // a test reading it says so
  return {
    url: `http://127.0.0.1:${port}`,
    databaseUrl: db.url,
    dataDir,
    child,
    close: async () => {
      await stopProcess(child);
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
