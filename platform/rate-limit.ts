// Counts failed sign-in and MFA attempts per key in fixed windows, in this process's memory.
// Several instances each keep their own counts: the limit then applies per instance.
import { errors } from './errors.ts';

export type FailureLimiter = {
  /** Throws RATE_LIMITED when `key` already failed `limit` times in the current window. */
  check: (key: string) => void;
  /** Records one failure for `key`. */
  fail: (key: string) => void;
  /** Forgets `key` (after a success). */
  reset: (key: string) => void;
};

/** Creates a limiter allowing `limit` failures per `windowMs`. */
export function createFailureLimiter(opts: { limit: number; windowMs: number; now?: () => number; maxKeys?: number }): FailureLimiter {
  const now = opts.now ?? Date.now;
  const maxKeys = opts.maxKeys ?? 100_000;
  const windows = new Map<string, { start: number; count: number }>();

  const current = (key: string) => {
    const w = windows.get(key);
    if (w && now() - w.start < opts.windowMs) return w;
    if (w) windows.delete(key);
    return undefined;
  };

  return {
    check(key) {
      const w = current(key);
      if (w && w.count >= opts.limit) throw errors.rateLimited(Math.max(1, Math.ceil((w.start + opts.windowMs - now()) / 1000)));
    },
    fail(key) {
      const w = current(key);
      if (w) {
        w.count += 1;
        return;
      }
      // Bounded memory: drop the oldest entry (Map keeps insertion order).
      if (windows.size >= maxKeys) windows.delete(windows.keys().next().value as string);
      windows.set(key, { start: now(), count: 1 });
    },
    reset(key) {
      windows.delete(key);
    },
  };
}
