// The background lane: at once unless the process is busy with other projects' requests; then a few runs at a time
// and a few a second, projects served round-robin, and a run that waits too long told so (its caller puts it back in
// line).
import { describe, expect, it } from '@jest/globals';
import { createBackgroundLane } from './background-lane.ts';
import { waitFor } from '../../../tests/support/wait-for.ts';

const tick = () => new Promise((r) => setImmediate(r));
/** A clock the test moves. */
function clock() {
  let t = 1000;
  return { now: () => t, move: (ms: number) => (t += ms) };
}

describe('the background lane', () => {
  it('gives every turn at once while the process is not busy for the project (nothing changes for it)', async () => {
    const lane = createBackgroundLane({ busyFor: (p) => p !== 'quiet', busyTurns: 2 });
    const ends = await Promise.all(Array.from({ length: 50 }, () => lane.turn('quiet', 1000)));
    expect(ends.every((e) => typeof e === 'function')).toBe(true);
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
    for (const end of ends) end!();
  });

  it('lets only busyTurns go at once while busy, and the next one when one ends', async () => {
    const c = clock();
    const lane = createBackgroundLane({ busyFor: () => true, busyTurns: 2, busyRunsPerS: 1000, now: c.now });
    const first = await Promise.all([lane.turn('p', 10_000), lane.turn('p', 10_000)]);
    let third: (() => void) | null | undefined;
    void lane.turn('p', 10_000).then((e) => (third = e));
    c.move(100);
    await tick();
    await tick();
    expect(third).toBeUndefined();
    expect(lane.state()).toEqual({ running: 2, waiting: 1 });
    first[0]!();
    first[0]!(); // ending twice ends once
    await tick();
    await tick();
    expect(typeof third).toBe('function');
    expect(lane.state()).toEqual({ running: 2, waiting: 0 });
    first[1]!();
    third!();
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
  });

  it('starts at most busyRunsPerS a second while busy, however short the runs', async () => {
    const c = clock();
    const lane = createBackgroundLane({ busyFor: () => true, busyTurns: 2, busyRunsPerS: 10, now: c.now });
    let started = 0;
    const runs = Array.from({ length: 6 }, () =>
      lane.turn('p', 60_000).then((end) => {
        started++;
        end!();
      }),
    );
    for (let i = 0; i < 5; i++) await tick();
    // A burst of busyTurns, then one for every 100 ms of the test's clock (frozen in between: none more can start).
    expect(started).toBe(2);
    for (const expected of [3, 4, 5, 6]) {
      c.move(100);
      await waitFor(async () => started === expected || undefined, { message: `run ${expected} started` });
      for (let i = 0; i < 5; i++) await tick();
      expect(started).toBe(expected);
    }
    await Promise.all(runs);
  });

  it('serves the projects waiting round-robin: one project’s backlog does not go before another’s single run', async () => {
    const lane = createBackgroundLane({ busyFor: () => true, busyTurns: 1, busyRunsPerS: 100_000 });
    const holder = (await lane.turn('hostile', 10_000))!;
    const order: string[] = [];
    const wait = (project: string) =>
      lane.turn(project, 10_000).then((end) => {
        order.push(project);
        setImmediate(() => end!());
      });
    const all = [...Array.from({ length: 5 }, () => wait('hostile')), wait('victim'), wait('other')];
    holder();
    await Promise.all(all);
    expect(order.slice(0, 3).sort()).toEqual(['hostile', 'other', 'victim']);
    expect(order).toHaveLength(7);
  });

  it('answers null to a run that got no turn within its wait, and forgets it', async () => {
    const lane = createBackgroundLane({ busyFor: () => true, busyTurns: 1 });
    const holder = (await lane.turn('p', 10_000))!;
    expect(await lane.turn('p', 30)).toBeNull();
    expect(lane.state()).toEqual({ running: 1, waiting: 0 });
    holder();
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
  });

  it('lets a project’s waiting runs go once the process is no longer busy for it, without a run ending', async () => {
    let busy = true;
    const lane = createBackgroundLane({ busyFor: () => busy, busyTurns: 1 });
    const holder = (await lane.turn('p', 10_000))!;
    const waiting = Promise.all([lane.turn('p', 10_000), lane.turn('q', 10_000)]);
    await tick();
    expect(lane.state().waiting).toBe(2);
    busy = false;
    const ends = await waiting;
    expect(ends.every((e) => typeof e === 'function')).toBe(true);
    holder();
    for (const end of ends) end!();
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
  });
});
