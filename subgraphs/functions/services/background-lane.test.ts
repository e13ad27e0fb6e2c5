// The background lane: at once while the process is not busy; while it is, a few runs at a time, projects served
// round-robin, and a run that waits too long told so (its caller puts it back in line).
import { describe, expect, it } from '@jest/globals';
import { createBackgroundLane } from './background-lane.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('the background lane', () => {
  it('gives every turn at once while the process is not busy (nothing changes for a quiet process)', async () => {
    const lane = createBackgroundLane({ busy: () => false, busyTurns: 2 });
    const ends = await Promise.all(Array.from({ length: 50 }, () => lane.turn('p', 1000)));
    expect(ends.every((e) => typeof e === 'function')).toBe(true);
    expect(lane.state()).toEqual({ running: 50, waiting: 0 });
    for (const end of ends) end!();
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
  });

  it('lets only busyTurns go while busy, and the next one when one ends', async () => {
    const lane = createBackgroundLane({ busy: () => true, busyTurns: 2 });
    const first = await Promise.all([lane.turn('p', 10_000), lane.turn('p', 10_000)]);
    let third: (() => void) | null | undefined;
    void lane.turn('p', 10_000).then((e) => (third = e));
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

  it('serves the projects waiting round-robin: one project’s backlog does not go before another’s single run', async () => {
    const lane = createBackgroundLane({ busy: () => true, busyTurns: 1 });
    const holder = (await lane.turn('hostile', 10_000))!;
    const order: string[] = [];
    const wait = (project: string) =>
      lane.turn(project, 10_000).then((end) => {
        order.push(project);
        // Each run ends at once, letting the next one go.
        setImmediate(() => end!());
      });
    const all = [...Array.from({ length: 5 }, () => wait('hostile')), wait('victim'), wait('other')];
    holder();
    await Promise.all(all);
    expect(order.slice(0, 3).sort()).toEqual(['hostile', 'other', 'victim']);
    expect(order).toHaveLength(7);
  });

  it('answers null to a run that got no turn within its wait, and forgets it', async () => {
    const lane = createBackgroundLane({ busy: () => true, busyTurns: 1 });
    const holder = (await lane.turn('p', 10_000))!;
    expect(await lane.turn('p', 30)).toBeNull();
    expect(lane.state()).toEqual({ running: 1, waiting: 0 });
    holder();
    expect(lane.state()).toEqual({ running: 0, waiting: 0 });
  });

  it('lets the waiting runs go once the process is no longer busy, without a run ending', async () => {
    let busy = true;
    const lane = createBackgroundLane({ busy: () => busy, busyTurns: 1 });
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
