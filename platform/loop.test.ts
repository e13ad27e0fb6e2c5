import { describe, expect, it } from '@jest/globals';
import { waitFor } from '../tests/support/wait-for.ts';
import { createLogger, type Logger } from './logger.ts';
import { createLoop } from './loop.ts';

const silent = createLogger('silent');

/** A logger recording its warnings. */
function recording(): { logger: Logger; warnings: Record<string, unknown>[] } {
  const warnings: Record<string, unknown>[] = [];
  const logger = Object.assign(Object.create(silent) as Logger, {
    warn: (fields: Record<string, unknown>) => void warnings.push(fields),
  });
  return { logger, warnings };
}

/** A pass that waits until released, counting passes and the most at once. */
function gatedPass() {
  let active = 0;
  const state = { passes: 0, most: 0, release: () => {} };
  const run = async () => {
    state.passes++;
    active++;
    state.most = Math.max(state.most, active);
    await new Promise<void>((r) => (state.release = r));
    active--;
  };
  return { state, run };
}

describe('createLoop', () => {
  it('never runs two passes at once: wakes during a pass make exactly one more pass follow it', async () => {
    const { state, run } = gatedPass();
    const loop = createLoop({ name: 'test', logger: silent, run, retryDelayMs: () => 10 });
    loop.wake();
    await waitFor(() => state.passes === 1);
    for (let i = 0; i < 5; i++) loop.wake();
    state.release();
    await waitFor(() => state.passes === 2);
    state.release();
    await loop.stop();
    expect(state).toMatchObject({ passes: 2, most: 1 });
  });

  it('runs again at once while a pass answers that more is left', async () => {
    let left = 3;
    const loop = createLoop({ name: 'test', logger: silent, run: async () => --left > 0, retryDelayMs: () => 10 });
    await loop.drain();
    expect(left).toBe(0);
    await loop.stop();
  });

  it("after a failure logs it, retries by itself with the caller's delay for each failure in a row, and starts over after a success", async () => {
    const { logger, warnings } = recording();
    let fail = 3;
    const delays: number[] = [];
    const loop = createLoop({
      name: 'flaky pass',
      logger,
      run: async () => {
        if (fail-- > 0) throw new Error('database away');
      },
      retryDelayMs: (n) => {
        delays.push(n);
        return 5 * n;
      },
    });
    await expect(loop.drain()).rejects.toThrow('database away');
    await waitFor(() => fail < 0 && loop.failures() === 0, { message: 'the retries to succeed' });
    expect(delays).toEqual([1, 2, 3]);
    expect(warnings).toEqual(
      [1, 2, 3].map((failures) => expect.objectContaining({ loop: 'flaky pass', failures, err: 'database away' })),
    );
    await loop.stop();
  });

  it('holds wakes during the retry delay (no pass before it), while drain runs at once', async () => {
    let passes = 0;
    const loop = createLoop({
      name: 'test',
      logger: silent,
      run: async () => {
        passes++;
        if (passes === 1) throw new Error('down');
      },
      retryDelayMs: () => 60_000,
    });
    await expect(loop.drain()).rejects.toThrow('down');
    loop.wake();
    loop.wake();
    await new Promise((r) => setImmediate(r));
    expect(passes).toBe(1);
    await loop.drain();
    expect(passes).toBe(2);
    await loop.stop();
  });

  it('wakes by itself every everyMs once started', async () => {
    let passes = 0;
    const loop = createLoop({
      name: 'test',
      logger: silent,
      run: async () => void passes++,
      everyMs: 20,
      retryDelayMs: () => 10,
    });
    loop.start();
    await waitFor(() => passes >= 3, { message: 'three periodic passes' });
    await loop.stop();
  });

  it('stop waits for the pass under way and no pass starts after it', async () => {
    const { state, run } = gatedPass();
    const loop = createLoop({ name: 'test', logger: silent, run, everyMs: 5, retryDelayMs: () => 5 });
    loop.start();
    loop.wake();
    await waitFor(() => state.passes === 1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    state.release();
    await stopping;
    loop.wake();
    await loop.drain();
    await new Promise((r) => setTimeout(r, 30)); // several everyMs periods: none may start a pass
    expect(state.passes).toBe(1);
  });
});
