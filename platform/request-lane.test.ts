// The request lane: every turn at once while the process keeps up (or serves one project alone); while saturated with
// several projects' requests, PER_PROJECT requests of a project at once, the others in line, turns round-robin across
// projects, and a request that waits too long answered 503 with Retry-After; a request running long, or waiting for
// PostgreSQL, stops counting.
import { describe, expect, it } from '@jest/globals';
import { awayFromLane, createRequestLane } from './request-lane.ts';
import { AppError } from './errors.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** Enters `n` requests of `project`; answers their ends as they come (undefined while waiting). */
function enter(lane: ReturnType<typeof createRequestLane>, project: string, n: number, order?: string[]) {
  const ends: ((() => void) | undefined)[] = Array.from({ length: n }, () => undefined);
  const errors: unknown[] = [];
  for (let i = 0; i < n; i++)
    lane.enter(project).then(
      (end) => {
        ends[i] = end;
        order?.push(`${project}${i}`);
      },
      (err) => errors.push(err),
    );
  return { ends, errors };
}

describe('the request lane', () => {
  it('gives every turn at once while the process is not saturated (nothing changes for anyone)', async () => {
    const lane = createRequestLane({ saturatedFor: () => false, perProject: 2 });
    const a = enter(lane, 'a', 50);
    await tick();
    expect(a.ends.every((e) => typeof e === 'function')).toBe(true);
    expect(lane.state()).toEqual({ running: 50, waiting: 0 });
    for (const end of a.ends) end!();
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
  });

  it('while saturated, holds a project to perProject at once and lets the next go when one ends (an end counts once)', async () => {
    const lane = createRequestLane({ saturatedFor: () => true, perProject: 2 });
    const a = enter(lane, 'a', 4);
    await tick();
    expect(a.ends.map((e) => typeof e)).toEqual(['function', 'function', 'undefined', 'undefined']);
    expect(lane.state()).toEqual({ running: 2, waiting: 2 });
    a.ends[0]!();
    a.ends[0]!();
    await tick();
    expect(a.ends.map((e) => typeof e)).toEqual(['function', 'function', 'function', 'undefined']);
    expect(lane.state()).toEqual({ running: 2, waiting: 1 });
  });

  it("serves a project sending a few at once while another's dozens wait in line, then round-robin", async () => {
    const lane = createRequestLane({ saturatedFor: () => true, perProject: 1 });
    const order: string[] = [];
    const hostile = enter(lane, 'h', 20, order);
    await tick();
    const victim = enter(lane, 'v', 3, order);
    await tick();
    // The victim's first goes at once (it had nothing running); the hostile's 19 others wait.
    expect(order).toEqual(['h0', 'v0']);
    // Each end lets the next of the other project in turn go: round-robin, not arrival order.
    hostile.ends[0]!();
    await tick();
    victim.ends[0]!();
    await tick();
    hostile.ends[1]!();
    await tick();
    expect(order).toEqual(['h0', 'v0', 'h1', 'v1', 'h2']);
  });

  it('lets everything waiting go once the process is no longer saturated', async () => {
    let saturated = true;
    const lane = createRequestLane({ saturatedFor: () => saturated, perProject: 1 });
    const a = enter(lane, 'a', 5);
    await tick();
    expect(lane.state()).toEqual({ running: 1, waiting: 4 });
    saturated = false;
    // Nobody ends: the lane looks again by itself.
    await new Promise((r) => setTimeout(r, 50));
    expect(a.ends.every((e) => typeof e === 'function')).toBe(true);
    expect(lane.state()).toEqual({ running: 5, waiting: 0 });
  });

  it('answers a request that got no turn within its wait 503 SERVICE_UNAVAILABLE with retry_after, and it never runs', async () => {
    const lane = createRequestLane({ saturatedFor: () => true, perProject: 1, maxWaitMs: 30 });
    const a = enter(lane, 'a', 2);
    await new Promise((r) => setTimeout(r, 80));
    expect(typeof a.ends[0]).toBe('function');
    expect(a.ends[1]).toBeUndefined();
    expect(a.errors).toHaveLength(1);
    const err = a.errors[0] as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.details).toMatchObject({ retry_after: 1, reason: 'fair_share' });
    expect(lane.state()).toEqual({ running: 1, waiting: 0 });
    // Its end later lets nobody else run twice.
    a.ends[0]!();
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
  });

  it('does not count a request while it waits for PostgreSQL (awayFromLane): the next of its project goes, and it counts again after', async () => {
    const lane = createRequestLane({ saturatedFor: () => true, perProject: 1 });
    const first = enter(lane, 'a', 1);
    await tick();
    const second = enter(lane, 'a', 1);
    await tick();
    expect(second.ends[0]).toBeUndefined();
    // The first sends its statement: the one waiting in line goes at once.
    let answer!: () => void;
    const statement = new Promise<void>((r) => (answer = r));
    const running = lane.within(first.ends[0]!, () => awayFromLane(() => statement));
    await tick();
    expect(typeof second.ends[0]).toBe('function');
    // Back from its statement, the first counts again: a third waits.
    answer();
    await running;
    const third = enter(lane, 'a', 1);
    await tick();
    expect(third.ends[0]).toBeUndefined();
    expect(lane.state()).toEqual({ running: 2, waiting: 1 });
    // Outside any turn (background work, a subgraph process) it only runs the wait.
    expect(await awayFromLane(async () => 7)).toBe(7);
    // A turn that ended is no reason to let anyone else in twice.
    first.ends[0]!();
    second.ends[0]!();
    await tick();
    expect(lane.state()).toEqual({ running: 1, waiting: 0 });
  });

  it('stops counting a request that has run settledMs (it waits, as for another request of its own project): the next one goes', async () => {
    const lane = createRequestLane({ saturatedFor: () => true, perProject: 1, settledMs: 60 });
    // A request calling its own project's API while the process is saturated: the inner one waits for a turn...
    const outer = enter(lane, 'a', 1);
    await tick();
    const inner = enter(lane, 'a', 2);
    await tick();
    expect(inner.ends.map((e) => typeof e)).toEqual(['undefined', 'undefined']);
    // ...and gets it once the outer has run settledMs, though the outer has not ended; one at a time still.
    await new Promise((r) => setTimeout(r, 100));
    expect(typeof outer.ends[0]).toBe('function');
    expect(inner.ends.map((e) => typeof e)).toEqual(['function', 'undefined']);
    expect(lane.state()).toEqual({ running: 2, waiting: 1 });
    await new Promise((r) => setTimeout(r, 100));
    expect(lane.state()).toEqual({ running: 3, waiting: 0 });
  });
});
