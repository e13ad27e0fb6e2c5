// The pressure gauge background work asks: busy when requests come in fast, or come in while the event loop is busy;
// not busy for a quiet process, a busy loop with no requests (its own background work), or a trickle of requests.
import { describe, expect, it } from '@jest/globals';
import { BUSY_REQUESTS_PER_S, BUSY_UTILIZATION, createLoadPressure } from './load-pressure.ts';

/** A gauge on a clock and an event loop utilization the test sets; each window is 100 ms. */
function gauge() {
  let t = 0;
  let u = 0;
  const p = createLoadPressure({ now: () => t, utilization: () => u, windowMs: 100 });
  const window = (o: { requests: number; utilization: number }) => {
    u = o.utilization;
    for (let i = 0; i < o.requests; i++) p.noteRequest();
    t += 100;
    p.sample();
    return p.busy();
  };
  return { p, window };
}

describe('load pressure', () => {
  it('is not busy before any request, nor for a busy event loop with no requests (background work alone)', () => {
    const { p, window } = gauge();
    expect(p.busy()).toBe(false);
    expect(window({ requests: 0, utilization: 1 })).toBe(false);
    p.stop();
  });

  it('is busy while requests come in at the busy rate, whatever the event loop', () => {
    const { p, window } = gauge();
    const perWindow = Math.ceil(BUSY_REQUESTS_PER_S / 10);
    expect(window({ requests: perWindow, utilization: 0 })).toBe(true);
    expect(window({ requests: perWindow - 1, utilization: 0 })).toBe(false);
    p.stop();
  });

  it('is busy when a few requests come in while the event loop is busy, and not once they stop', () => {
    const { p, window } = gauge();
    expect(window({ requests: 1, utilization: BUSY_UTILIZATION })).toBe(true);
    expect(window({ requests: 1, utilization: BUSY_UTILIZATION - 0.01 })).toBe(false);
    expect(window({ requests: 1, utilization: 0.9 })).toBe(true);
    expect(window({ requests: 0, utilization: 0.9 })).toBe(false);
    p.stop();
    expect(p.busy()).toBe(false);
  });
});
