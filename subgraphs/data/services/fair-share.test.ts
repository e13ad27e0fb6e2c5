// Which waiter gets the next connection of a contended budget, and the statement-time window per project.
import { describe, expect, it } from '@jest/globals';
import { createStatementClock, nextWaiter } from './fair-share.ts';

type W = { projectId: string; n: number };
const queue = (...ids: string[]): W[] => ids.map((projectId, n) => ({ projectId, n }));

describe('the next waiter', () => {
  it('is the one whose project holds the fewest connections, whatever came first', () => {
    const held: Record<string, number> = { hostile: 4, victim: 0 };
    const waiters = queue('hostile', 'hostile', 'victim', 'hostile');
    expect(nextWaiter(waiters, (w) => held[w.projectId]!)).toBe(2);
  });

  it('keeps the order of arrival within a project and between projects holding as many', () => {
    const held: Record<string, number> = { a: 1, b: 1, c: 3 };
    const waiters = queue('c', 'b', 'a', 'b', 'a');
    expect(nextWaiter(waiters, (w) => held[w.projectId]!)).toBe(1);
    held.b = 2; // b was served
    expect(nextWaiter(waiters.slice(2), (w) => held[w.projectId]!)).toBe(0); // a, before b's second and c
  });

  it('skips a project at its own cap and answers -1 when nobody may be served', () => {
    const held: Record<string, number> = { capped: 0, other: 5 };
    const waiters = queue('capped', 'other');
    expect(
      nextWaiter(
        waiters,
        (w) => held[w.projectId]!,
        (w) => w.projectId !== 'capped',
      ),
    ).toBe(1);
    expect(
      nextWaiter(
        waiters,
        (w) => held[w.projectId]!,
        () => false,
      ),
    ).toBe(-1);
    expect(nextWaiter([], () => 0)).toBe(-1);
  });

  it('serves a project under its fair share before every waiter of a project at or above it', () => {
    // Budget 6, three projects wanting: a fair share of 2 each.
    const held: Record<string, number> = { over: 4, at: 2, under: 0 };
    const order: string[] = [];
    const waiters = queue('over', 'at', 'over', 'under', 'at', 'under');
    while (waiters.length > 0) {
      const i = nextWaiter(waiters, (w) => held[w.projectId]!);
      const [w] = waiters.splice(i, 1);
      order.push(w!.projectId);
      held[w!.projectId]!++;
    }
    expect(order.slice(0, 2)).toEqual(['under', 'under']);
    expect(order.indexOf('at')).toBeLessThan(order.indexOf('over'));
  });
});

describe('the statement clock', () => {
  it('refuses once the budget is spent, until the buckets that spent it leave the minute', () => {
    let t = 1_000_000; // at the start of a 5 s bucket
    const clock = createStatementClock(() => t);
    clock.add('p', 600);
    expect(clock.over('p', 1000)).toBeUndefined();
    t += 2_000;
    clock.add('p', 500);
    const over = clock.over('p', 1000);
    expect(over).toEqual({ retryAfter: 58, usedMs: 1100 }); // the first bucket leaves 60 s after it began
    expect(clock.over('other', 1000)).toBeUndefined();
    t += 57_999;
    expect(clock.over('p', 1000)).toBeDefined();
    t += 1;
    expect(clock.over('p', 1000)).toBeUndefined();
    expect(clock.used('p')).toBe(0);
  });

  it('counts statements still running, and names when older time frees enough', () => {
    let t = 5_000_000;
    const clock = createStatementClock(() => t);
    clock.add('p', 400);
    t += 10_000;
    clock.add('p', 400);
    t += 10_000;
    expect(clock.over('p', 1000)).toBeUndefined();
    expect(clock.over('p', 1000, 300)).toEqual({ retryAfter: 40, usedMs: 1100 }); // when the first 400 ms leave
    expect(clock.over('p', 1000, 5_000)?.retryAfter).toBe(5); // running time alone is over: ask again soon
  });

  it("books another process's time in the bucket it was spent in, and none older than the window", () => {
    const t = 2_000_000;
    const clock = createStatementClock(() => t);
    clock.add('p', 700, t - 20_000); // heard late: spent 20 s ago
    clock.add('p', 700, t - 61_000); // out of the window: not counted
    clock.add('p', 100, t + 5_000); // a clock ahead: booked now
    expect(clock.used('p')).toBe(800);
    expect(clock.over('p', 800)?.retryAfter).toBe(40); // when the 700 ms of 20 s ago leave the minute
  });

  it('forgets projects with nothing in the window', () => {
    let t = 0;
    const clock = createStatementClock(() => t);
    clock.add('a', 10);
    clock.add('b', 10);
    t += 30_000;
    clock.add('b', 10);
    t += 31_000;
    clock.sweep();
    expect(clock.size()).toBe(1);
  });
});
