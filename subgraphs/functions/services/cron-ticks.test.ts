// Which tick a cron run is for, and which ticks a takeover runs late or records as missed (issue 29, item 5).
import { describe, expect, it } from '@jest/globals';
import { CATCH_UP_MAX, CATCH_UP_MS, MISSED_COUNT_MAX, scheduledTick, ticksBetween } from './cron.ts';

const at = (iso: string) => new Date(iso);
const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('cron ticks', () => {
  it('a run is for the latest tick at or before it, in the schedule time zone', () => {
    expect(scheduledTick('* * * * * *', 'UTC', at('2026-01-01T12:00:05.000Z')).toISOString()).toBe(
      '2026-01-01T12:00:05.000Z',
    );
    expect(scheduledTick('* * * * * *', 'UTC', at('2026-01-01T12:00:05.900Z')).toISOString()).toBe(
      '2026-01-01T12:00:05.000Z',
    );
    // 02:30 in Paris is 01:30 UTC in winter.
    expect(scheduledTick('30 2 * * *', 'Europe/Paris', at('2026-01-02T01:40:00.000Z')).toISOString()).toBe(
      '2026-01-02T01:30:00.000Z',
    );
  });

  it('the ticks between the last claimed one and the current one run late, neither end included', () => {
    const r = ticksBetween(
      '* * * * * *',
      'UTC',
      at('2026-01-01T12:00:01.000Z'),
      at('2026-01-01T12:00:04.000Z'),
      at('2026-01-01T12:00:04.200Z'),
    );
    expect(iso(r.late)).toEqual(['2026-01-01T12:00:02.000Z', '2026-01-01T12:00:03.000Z']);
    expect(r.missed).toEqual({ count: 0, first: null, last: null });
  });

  it('consecutive ticks leave nothing to run late', () => {
    const r = ticksBetween('* * * * * *', 'UTC', at('2026-01-01T12:00:03Z'), at('2026-01-01T12:00:04Z'), new Date());
    expect(r).toEqual({ late: [], missed: { count: 0, first: null, last: null } });
  });

  it(`ticks older than ${CATCH_UP_MS / 1000} s, or beyond the latest ${CATCH_UP_MAX}, are recorded as missed`, () => {
    const now = at('2026-01-01T13:00:00.500Z');
    const r = ticksBetween('* * * * * *', 'UTC', at('2026-01-01T12:50:00Z'), at('2026-01-01T13:00:00Z'), now);
    expect(r.late).toHaveLength(CATCH_UP_MAX);
    expect(r.late[CATCH_UP_MAX - 1]!.toISOString()).toBe('2026-01-01T12:59:59.000Z');
    // 599 ticks in between; all but the last ten missed.
    expect(r.missed.count).toBe(599 - CATCH_UP_MAX);
    expect(r.missed.first!.toISOString()).toBe('2026-01-01T12:50:01.000Z');
    expect(r.missed.last!.toISOString()).toBe('2026-01-01T12:59:49.000Z');
  });

  it('a long outage of a per-second job is counted up to MISSED_COUNT_MAX missed ticks, without walking them all', () => {
    const now = at('2026-01-03T00:00:00.500Z');
    const r = ticksBetween('* * * * * *', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-01-03T00:00:00Z'), now);
    expect(r.late).toHaveLength(CATCH_UP_MAX);
    expect(r.missed.count).toBeGreaterThanOrEqual(MISSED_COUNT_MAX);
    expect(r.missed.count).toBeLessThan(MISSED_COUNT_MAX + CATCH_UP_MS / 1000);
  });
});
