// The retry schedule of outbound event deliveries, and how row-event subscriptions join the hooks' triggers.
import { describe, expect, it } from '@jest/globals';
import { RETRY_CAP_MS, retryDelayMs } from './event-deliveries.ts';
import { mergeTriggers } from './hooks.ts';

describe('retryDelayMs', () => {
  it('doubles from the base with each attempt, within ±25% jitter', () => {
    for (const [attempt, middle] of [
      [1, 5000],
      [2, 10_000],
      [3, 20_000],
      [6, 160_000],
    ] as const) {
      expect(retryDelayMs(attempt, 5000, () => 0.5)).toBe(middle);
      expect(retryDelayMs(attempt, 5000, () => 0)).toBe(middle * 0.75);
      expect(retryDelayMs(attempt, 5000, () => 0.999999)).toBeLessThanOrEqual(middle * 1.25);
    }
  });

  it('never waits much more than 4 hours, and spreads retries of the same attempt apart', () => {
    expect(retryDelayMs(40, 5000, () => 0.5)).toBe(RETRY_CAP_MS);
    expect(retryDelayMs(40, 5000, () => 0.999999)).toBeLessThanOrEqual(RETRY_CAP_MS * 1.25);
    const spread = new Set(Array.from({ length: 50 }, () => retryDelayMs(3, 5000)));
    expect(spread.size).toBeGreaterThan(10);
  });

  it('gives up within a day at the default base: about 16 attempts fit', () => {
    let elapsed = 0;
    let attempts = 1;
    while (elapsed + retryDelayMs(attempts, 5000, () => 0.5) <= 86_400_000)
      elapsed += retryDelayMs(attempts++, 5000, () => 0.5);
    expect(attempts).toBeGreaterThanOrEqual(14);
    expect(attempts).toBeLessThanOrEqual(20);
  });
});

describe('mergeTriggers', () => {
  it("joins a table's after-hooks and its row-event subscriptions into one trigger, leaving before-hooks apart", () => {
    const merged = mergeTriggers([
      [
        { table: 'orders', timing: 'before', events: ['insert'] },
        { table: 'orders', timing: 'after', events: ['delete'] },
      ],
      [
        { table: 'orders', timing: 'after', events: ['insert', 'update'] },
        { table: 'notes', timing: 'after', events: ['insert'] },
      ],
    ]);
    expect(merged).toEqual([
      { table: 'orders', timing: 'before', events: ['insert'] },
      { table: 'orders', timing: 'after', events: ['insert', 'update', 'delete'] },
      { table: 'notes', timing: 'after', events: ['insert'] },
    ]);
  });
});
