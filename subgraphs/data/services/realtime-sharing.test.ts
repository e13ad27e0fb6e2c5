// The bookkeeping behind max_realtime_subscribers across data processes: what a process tells the others, what it
// keeps of what they told, and when it forgets it.
import crypto from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { configureBroadcasts, sealBroadcast } from '../../../platform/broadcast.ts';
import { createSubscriberCounts, REFRESH_MS, STALE_MS } from './realtime-sharing.ts';

/** Counts on a clock the test moves. */
function counts() {
  const clock = { now: 1_000_000 };
  return { clock, c: createSubscriberCounts(() => clock.now) };
}

describe('the subscribers other processes reported', () => {
  it('adds up the latest count of each other process, per project', () => {
    const { c } = counts();
    c.heard({ origin: 'b', counts: { p: 1, q: 4 } });
    c.heard({ origin: 'c', counts: { p: 2 } });
    expect(c.elsewhere('p')).toBe(3);
    // A process's later count replaces its earlier one; 0 takes it out.
    c.heard({ origin: 'b', counts: { p: 3 } });
    expect(c.elsewhere('p')).toBe(5);
    c.heard({ origin: 'c', counts: { p: 0 } });
    expect(c.elsewhere('p')).toBe(3);
    expect(c.elsewhere('q')).toBe(4);
    expect(c.elsewhere('nobody')).toBe(0);
    expect(c.total()).toBe(7);
  });

  it('forgets a count not heard again within STALE_MS (a process that died holds no slot)', () => {
    const { clock, c } = counts();
    c.heard({ origin: 'b', counts: { p: 2 } });
    c.heard({ origin: 'c', counts: { p: 1 } });
    clock.now += STALE_MS - 1_000;
    c.heard({ origin: 'c', counts: { p: 1 } }); // c is alive and says it again; b went quiet
    expect(c.elsewhere('p')).toBe(3);
    clock.now += 1_001;
    expect(c.elsewhere('p')).toBe(1);
    expect(c.total()).toBe(1);
    clock.now += STALE_MS;
    expect(c.elsewhere('p')).toBe(0);
    expect(c.total()).toBe(0);
  });

  it('ignores what is not a number', () => {
    const { c } = counts();
    c.heard({ origin: 'b', counts: { p: 'many', q: null, r: 2 } as never });
    expect(c.elsewhere('p') + c.elsewhere('q')).toBe(0);
    expect(c.elsewhere('r')).toBe(2);
  });
});

describe('what a process tells the others', () => {
  it('tells the counts that changed, nothing when nothing did, and the open ones again every REFRESH_MS', () => {
    const { clock, c } = counts();
    expect(c.outgoing('a', [])).toEqual([]);
    expect(
      c.outgoing('a', [
        ['p', 1],
        ['q', 0],
      ]),
    ).toEqual([{ origin: 'a', counts: { p: 1 } }]);
    clock.now += 1_000;
    expect(c.outgoing('a', [['p', 1]])).toEqual([]);
    expect(c.outgoing('a', [['p', 2]])).toEqual([{ origin: 'a', counts: { p: 2 } }]);
    clock.now += REFRESH_MS;
    // Unchanged but still open: told again before the others forget it.
    expect(c.outgoing('a', [['p', 2]])).toEqual([{ origin: 'a', counts: { p: 2 } }]);
    expect(REFRESH_MS * 2).toBeLessThan(STALE_MS);
  });

  it('tells 0 once when a project has no subscriber left (its listener lingering or closed), then nothing', () => {
    const { c } = counts();
    c.outgoing('a', [
      ['p', 1],
      ['q', 1],
    ]);
    expect(c.outgoing('a', [['p', 0]])).toEqual([{ origin: 'a', counts: { p: 0, q: 0 } }]);
    expect(c.outgoing('a', [['p', 0]])).toEqual([]);
  });

  it('is heard by another process as the same counts', () => {
    const here = counts();
    const there = counts();
    for (const m of here.c.outgoing('a', [
      ['p', 2],
      ['q', 1],
    ]))
      there.c.heard(m);
    expect(there.c.elsewhere('p')).toBe(2);
    expect(there.c.total()).toBe(3);
    for (const m of here.c.outgoing('a', [['q', 1]])) there.c.heard(m);
    expect(there.c.elsewhere('p')).toBe(0);
    expect(there.c.elsewhere('q')).toBe(1);
  });

  it("splits many projects into messages that each fit NOTIFY's 8,000 bytes", () => {
    configureBroadcasts('a test secret of some length, 32+ chars');
    const { c } = counts();
    const local: [string, number][] = Array.from({ length: 250 }, () => [crypto.randomUUID(), 123_456]);
    const messages = c.outgoing(crypto.randomUUID(), local);
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages)
      expect(Buffer.byteLength(sealBroadcast('data.realtime-subscribers', m))).toBeLessThan(8_000);
    const told = Object.assign({}, ...messages.map((m) => m.counts)) as Record<string, number>;
    expect(told).toEqual(Object.fromEntries(local));
  });
});
