// Group writes: callers hand in one item each; a batch is written at once while fewer than `inFlight`
// batches are being written, otherwise items wait and join the next batch, written when a running one ends.
// So a lone caller pays no delay, and under load many items share one statement (one round trip, one commit).
// Each caller's promise settles when its own batch is written, with its own item's answer when `write` gives answers.

export type BatchOptions<T> = {
  /** Most items in one batch. */
  max: number;
  /** Batches written at the same time. */
  inFlight: number;
  /** When a batch of several fails, write each item alone, so one bad item fails only its own caller. */
  retryAlone: boolean;
  /** The size of an item (e.g. its JSON length); a batch holds at most `maxWeight` of them (a heavier item goes alone). */
  weigh?: (item: T) => number;
  maxWeight?: number;
};

type Pending<T, R> = { item: T; resolve: (answer: R) => void; reject: (err: unknown) => void };

/**
 * Answers the function callers use: it resolves once `write` wrote the batch holding the item, with the
 * answer at the item's index when `write` answers a list (one answer per item, in order).
 */
export function createBatcher<T, R = void>(
  write: (items: T[]) => Promise<R[] | unknown>,
  opts: BatchOptions<T>,
): (item: T) => Promise<R> {
  let queue: Pending<T, R>[] = [];
  let running = 0;

  const answerOf = (answers: unknown, i: number) => (Array.isArray(answers) ? answers[i] : undefined) as R;
  const settle = async (batch: Pending<T, R>[]) => {
    try {
      const answers = await write(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(answerOf(answers, i)));
    } catch (err) {
      if (batch.length === 1 || !opts.retryAlone) {
        for (const p of batch) p.reject(err);
        return;
      }
      for (const p of batch) {
        try {
          p.resolve(answerOf(await write([p.item]), 0));
        } catch (e) {
          p.reject(e);
        }
      }
    }
  };

  const pump = () => {
    while (running < opts.inFlight && queue.length > 0) {
      let n = 0;
      let weight = 0;
      while (n < queue.length && n < opts.max) {
        const w = opts.weigh ? opts.weigh(queue[n]!.item) : 0;
        if (n > 0 && opts.maxWeight !== undefined && weight + w > opts.maxWeight) break;
        weight += w;
        n++;
      }
      const batch = queue.slice(0, n);
      queue = queue.slice(n);
      running++;
      void settle(batch).finally(() => {
        running--;
        pump();
      });
    }
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      pump();
    });
}
