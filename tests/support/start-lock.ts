// One split-mode platform starts at a time across Jest's workers. A split start is seven Node processes loading
// the platform one after another, all CPU; two of them at once on CI's two cores, beside a fault test under load,
// took over 90 s (observability.test.ts failed its start that way). The lock is a directory (mkdir is atomic)
// holding its owner's pid: a lock whose owner is gone (a worker killed mid-start) is taken over. Waiting is bounded:
// past `maxWaitMs` the start goes ahead anyway, so a lock can slow a run but never hang it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LOCK_DIR = path.join(os.tmpdir(), 'tessera-test-split-start.lock');

function ownerAlive(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
  } catch {
    // Just made and its pid not written yet, or its maker died in between (then it is stale after a few seconds).
    try {
      return Date.now() - fs.statSync(dir).mtimeMs < 5_000;
    } catch {
      return false;
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function acquire(dir: string, maxWaitMs: number): Promise<boolean> {
  const until = Date.now() + maxWaitMs;
  for (;;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'pid'), String(process.pid));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    if (!ownerAlive(dir)) {
      fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Runs `fn` holding the lock `dir` (or without it after `maxWaitMs` of waiting). */
export async function withStartLock<T>(dir: string, fn: () => Promise<T>, maxWaitMs = 240_000): Promise<T> {
  const held = await acquire(dir, maxWaitMs);
  try {
    return await fn();
  } finally {
    if (held) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `fn` holding the split-start lock shared by every Jest worker. */
export const withSplitStartLock = <T>(fn: () => Promise<T>): Promise<T> => withStartLock(LOCK_DIR, fn);
