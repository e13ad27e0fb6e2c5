// The write hold of a move (move-hold.ts): held writes wait for the release and then follow the move, or answer 503
// with Retry-After; a hold ends by itself; a renewal heard after the release does not hold the project again.
import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../../platform/errors.ts';
import { createMoveHolds } from './move-hold.ts';

describe('move holds', () => {
  it('lets writes of other projects and unheld projects through at once', async () => {
    const holds = createMoveHolds({ followMove: async () => {} });
    holds.hold('p1', 'm1');
    await expect(holds.beforeWrite('p2')).resolves.toBeUndefined();
    expect(holds.isHeld('p1')).toBe(true);
    expect(holds.isHeld('p2')).toBe(false);
  });

  it('makes a held write wait for the release, and follows the move before it goes on', async () => {
    const order: string[] = [];
    const holds = createMoveHolds({
      followMove: async (projectId) => {
        order.push(`follow ${projectId}`);
      },
    });
    holds.hold('p1', 'm1');
    const write = holds.beforeWrite('p1').then(() => order.push('write'));
    await Promise.resolve();
    expect(order).toEqual([]);
    await holds.release('p1', 'm1', 'b');
    await write;
    expect(order).toEqual(['follow p1', 'write']);
    expect(holds.isHeld('p1')).toBe(false);
  });

  it('answers 503 with Retry-After when the hold outlasts the wait', async () => {
    const holds = createMoveHolds({ followMove: async () => {}, waitMs: 10 });
    holds.hold('p1', 'm1');
    const err = await holds.beforeWrite('p1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, details: { retry_after: 1 } });
  });

  it('ends a hold by itself after its TTL (a mover that died holds nothing for long)', async () => {
    const holds = createMoveHolds({ followMove: async () => {}, waitMs: 60_000 });
    holds.hold('p1', 'm1', 20);
    await expect(holds.beforeWrite('p1')).resolves.toBeUndefined();
    expect(holds.isHeld('p1')).toBe(false);
  });

  it('ignores a renewal of a move that was released (broadcasts arrive twice and out of order)', async () => {
    const holds = createMoveHolds({ followMove: async () => {} });
    holds.hold('p1', 'm1');
    await holds.release('p1', 'm1');
    holds.hold('p1', 'm1');
    expect(holds.isHeld('p1')).toBe(false);
    holds.hold('p1', 'm2'); // another move of the same project
    expect(holds.isHeld('p1')).toBe(true);
    await holds.release('p1', 'm2');
  });
});
