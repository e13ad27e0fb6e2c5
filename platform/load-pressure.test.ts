// The pressure gauge a project's background work asks: busy when other projects' requests come in fast, or come in
// while the event loop is busy; never because of the project's own requests, nor for a busy loop with no requests
// (its own background work), nor for a trickle of requests.
import { describe, expect, it } from '@jest/globals';
import { BUSY_REQUESTS_PER_S, BUSY_UTILIZATION, SATURATED_UTILIZATION, createLoadPressure } from './load-pressure.ts';

/** A gauge on a clock and an event loop utilization the test sets; each window is 100 ms. */
function gauge() {
  let t = 0;
  let u = 0;
  const p = createLoadPressure({ now: () => t, utilization: () => u, windowMs: 100 });
  const window = (o: { requests: Record<string, number>; utilization: number }) => {
    u = o.utilization;
    for (const [project, n] of Object.entries(o.requests))
      for (let i = 0; i < n; i++) p.noteRequest(project === 'none' ? undefined : project);
    t += 100;
    p.sample();
  };
  return { p, window };
}

const perWindow = Math.ceil(BUSY_REQUESTS_PER_S / 10);

describe('load pressure', () => {
  it('is not busy before any request, nor for a busy event loop with no requests (background work alone)', () => {
    const { p, window } = gauge();
    expect(p.busyFor('a')).toBe(false);
    window({ requests: {}, utilization: 1 });
    expect(p.busyFor('a')).toBe(false);
    p.stop();
  });

  it('is busy for a project while other projects’ requests come in at the busy rate, never for its own', () => {
    const { p, window } = gauge();
    window({ requests: { victim: perWindow }, utilization: 0 });
    expect(p.busyFor('hostile')).toBe(true);
    expect(p.busyFor('victim')).toBe(false);
    window({ requests: { victim: perWindow - 1 }, utilization: 0 });
    expect(p.busyFor('hostile')).toBe(false);
    // Requests of no project (the console, sign-ins) are everyone's neighbours.
    window({ requests: { none: perWindow }, utilization: 0 });
    expect(p.busyFor('victim')).toBe(true);
    p.stop();
  });

  it('is busy when a few requests of others come in while the event loop is busy, and not once they stop', () => {
    const { p, window } = gauge();
    window({ requests: { victim: 1 }, utilization: BUSY_UTILIZATION });
    expect(p.busyFor('hostile')).toBe(true);
    window({ requests: { victim: 1 }, utilization: BUSY_UTILIZATION - 0.01 });
    expect(p.busyFor('hostile')).toBe(false);
    window({ requests: { hostile: 5, victim: 1 }, utilization: 0.9 });
    expect(p.busyFor('hostile')).toBe(true);
    expect(p.busyFor('victim')).toBe(true);
    window({ requests: { hostile: 5 }, utilization: 0.9 });
    expect(p.busyFor('hostile')).toBe(false);
    window({ requests: {}, utilization: 0.9 });
    expect(p.busyFor('victim')).toBe(false);
    p.stop();
  });
  it('is saturated for a project while the event loop is saturated and other projects’ requests come in, never for one project alone', () => {
    const { p, window } = gauge();
    expect(p.saturatedFor('a')).toBe(false);
    // One project alone saturating the loop: nobody to share with.
    window({ requests: { a: 500 }, utilization: 1 });
    expect(p.saturatedFor('a')).toBe(false);
    expect(p.saturatedFor('b')).toBe(true);
    window({ requests: { a: 500, b: 1 }, utilization: SATURATED_UTILIZATION });
    expect(p.saturatedFor('a')).toBe(true);
    expect(p.saturatedFor('b')).toBe(true);
    // Busy but keeping up: not saturated, however many requests.
    window({ requests: { a: 500, b: 500 }, utilization: SATURATED_UTILIZATION - 0.01 });
    expect(p.saturatedFor('a')).toBe(false);
    p.stop();
  });
});
