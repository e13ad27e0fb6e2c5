// Group writes: a lone item goes at once, concurrent ones share batches, each caller gets its own answer or error.
import { describe, expect, it } from '@jest/globals';
import { createBatcher } from './batching.ts';

/** A write that records its batches and waits until released. */
function gatedWrite(fail?: (items: number[]) => boolean) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const write = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((r) => gates.push(r));
    if (fail?.(items)) throw new Error(`bad batch ${items.join(',')}`);
    return items.map((i) => i * 10);
  };
  const releaseAll = async () => {
    for (let i = 0; i < 20; i++) {
      while (gates.length) gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { write, batches, releaseAll };
}

describe('group writes', () => {
  it('writes a lone item at once and groups the items that arrive while a batch is being written', async () => {
    const g = gatedWrite();
    const write = createBatcher<number, number>(g.write, { max: 100, inFlight: 1, retryAlone: false });
    const first = write(1);
    expect(g.batches).toEqual([[1]]);
    const rest = [2, 3, 4].map((i) => write(i));
    expect(g.batches).toEqual([[1]]);
    await g.releaseAll();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
    expect(g.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('keeps batches within their size and weight', async () => {
    const g = gatedWrite();
    const write = createBatcher<number, number>(g.write, {
      max: 2,
      inFlight: 1,
      retryAlone: false,
      weigh: (i) => i,
      maxWeight: 10,
    });
    const all = [1, 2, 3, 4, 9, 20, 1].map((i) => write(i));
    await g.releaseAll();
    await Promise.all(all);
    // [1] went alone; then at most 2 items and at most weight 10 (an item heavier than that goes alone).
    expect(g.batches).toEqual([[1], [2, 3], [4], [9], [20], [1]]);
  });

  it('fails only the bad item of a failed batch when told to write items alone', async () => {
    const g = gatedWrite((items) => items.includes(3));
    const write = createBatcher<number, number>(g.write, { max: 100, inFlight: 1, retryAlone: true });
    const first = write(1);
    const rest = [2, 3, 4].map((i) =>
      write(i).then(
        (v) => v,
        (err: Error) => err.message,
      ),
    );
    await g.releaseAll();
    expect(await first).toBe(10);
    expect(await Promise.all(rest)).toEqual([20, 'bad batch 3', 40]);
  });

  it('fails every item of a failed batch otherwise', async () => {
    const g = gatedWrite((items) => items.includes(3));
    const write = createBatcher<number, number>(g.write, { max: 100, inFlight: 1, retryAlone: false });
    void write(1);
    const rest = [2, 3].map((i) =>
      write(i).then(
        (v) => v,
        (err: Error) => err.message,
      ),
    );
    await g.releaseAll();
    expect(await Promise.all(rest)).toEqual(['bad batch 2,3', 'bad batch 2,3']);
  });
});
