// The split-start lock of the test suite (tests/support/start-lock.ts): one holder at a time, a dead holder's lock
// taken over, and a bounded wait.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { withStartLock } from '../support/start-lock.ts';

const dir = path.join(os.tmpdir(), `tessera-start-lock-test-${process.pid}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('withStartLock', () => {
  it('lets one holder in at a time and frees the lock after each, also when the holder throws', async () => {
    let inside = 0;
    let most = 0;
    const hold = () =>
      withStartLock(dir, async () => {
        inside++;
        most = Math.max(most, inside);
        await sleep(150);
        inside--;
      });
    await Promise.all([hold(), hold(), hold()]);
    expect(most).toBe(1);
    await expect(withStartLock(dir, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("takes over a lock whose holder's process is gone", async () => {
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'pid'), '2147483646'); // no such process
    // Taken over, the lock is this process's while the work runs (after waiting in vain it would still name the dead pid).
    const holder = async () => fs.readFileSync(path.join(dir, 'pid'), 'utf8');
    expect(await withStartLock(dir, holder, 600_000)).toBe(String(process.pid));
  });

  it('waits at most maxWaitMs for a live holder, then goes ahead without the lock', async () => {
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'pid'), String(process.pid)); // alive: this process
    expect(await withStartLock(dir, async () => 'ran', 300)).toBe('ran');
    expect(fs.readFileSync(path.join(dir, 'pid'), 'utf8')).toBe(String(process.pid)); // not its lock to free
  });
});
