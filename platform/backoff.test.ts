import { describe, expect, it } from '@jest/globals';
import { backoffMs } from './backoff.ts';

const at = (r: number) => () => r;
const TOP = 0.999999;

describe('backoffMs', () => {
  it('doubles from the base with each attempt up to the cap (no jitter)', () => {
    const o = { baseMs: 100, maxMs: 2000, jitter: 'none' as const };
    expect([1, 2, 3, 4, 5, 6, 50, 5000, Infinity].map((n) => backoffMs(n, o))).toEqual([
      100, 200, 400, 800, 1600, 2000, 2000, 2000, 2000,
    ]);
  });

  it('treats attempts below 1, fractions and NaN as the first retry', () => {
    const o = { baseMs: 100, maxMs: 2000, jitter: 'none' as const };
    expect([0, -3, 0.5, NaN, -Infinity].map((n) => backoffMs(n, o))).toEqual([100, 100, 100, 100, 100]);
    expect(backoffMs(2.9, o)).toBe(200);
  });

  it('full jitter (the default) spreads over [0, d]', () => {
    expect(backoffMs(3, { baseMs: 100, maxMs: 2000, random: at(0) })).toBe(0);
    expect(backoffMs(3, { baseMs: 100, maxMs: 2000, random: at(0.5) })).toBe(200);
    expect(backoffMs(3, { baseMs: 100, maxMs: 2000, random: at(TOP) })).toBe(400);
    expect(backoffMs(99, { baseMs: 100, maxMs: 2000, random: at(TOP) })).toBe(2000);
  });

  it('equal jitter never waits less than half', () => {
    const o = { baseMs: 250, maxMs: 10_000, jitter: 'equal' as const };
    expect(backoffMs(1, { ...o, random: at(0) })).toBe(125);
    expect(backoffMs(1, { ...o, random: at(TOP) })).toBe(250);
    expect(backoffMs(20, { ...o, random: at(0) })).toBe(5000);
  });

  it('a fraction spreads ±that much around the doubling schedule, also past the cap', () => {
    const o = { baseMs: 5000, maxMs: 4 * 3600_000, jitter: 0.25 };
    expect(backoffMs(3, { ...o, random: at(0.5) })).toBe(20_000);
    expect(backoffMs(3, { ...o, random: at(0) })).toBe(15_000);
    expect(backoffMs(3, { ...o, random: at(TOP) })).toBeLessThanOrEqual(25_000);
    expect(backoffMs(40, { ...o, random: at(TOP) })).toBeLessThanOrEqual(4 * 3600_000 * 1.25);
  });

  it('really spreads retries of the same attempt apart with Math.random', () => {
    for (const jitter of ['full', 'equal', 0.25] as const) {
      const seen = new Set(Array.from({ length: 50 }, () => backoffMs(4, { baseMs: 1000, maxMs: 60_000, jitter })));
      expect(seen.size).toBeGreaterThan(10);
    }
  });

  it('refuses a jitter it does not know', () => {
    for (const jitter of [-0.1, 1.5, NaN, 'some' as never])
      expect(() => backoffMs(1, { baseMs: 1, maxMs: 1, jitter })).toThrow(RangeError);
  });
});
