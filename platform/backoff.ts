// The wait before a retry: exponential from a base, capped, and jittered so that clients that failed together (a
// PostgreSQL restart drops every LISTEN connection at once, a receiver that was down gets every delivery back at
// once) do not all come back at the same moment. One formula for every retry loop of the platform.

/**
 * How the exponential delay `d` is spread: `full` (default) uniform in [0, d] (AWS's "full jitter": the least
 * contention, but some retries come almost at once); `equal` in [d/2, d] (never sooner than half); a number r
 * from 0 to 1: d × [1 − r, 1 + r] (a retry schedule people read, like "5 s, 10 s, 20 s ±25%"); `none`: d itself.
 */
export type Jitter = 'full' | 'equal' | 'none' | number;

export type BackoffOptions = {
  /** The delay of the first retry, before jitter. */
  baseMs: number;
  /** The longest delay before jitter (a `number` jitter may go past it by its fraction). */
  maxMs: number;
  jitter?: Jitter;
  /** Uniform in [0, 1): Math.random unless a test pins it. */
  random?: () => number;
};

/** Milliseconds to wait before retry `attempt` (1 = the first retry): min(maxMs, baseMs × 2^(attempt−1)), jittered. */
export function backoffMs(attempt: number, opts: BackoffOptions): number {
  const { baseMs, maxMs, jitter = 'full', random = Math.random } = opts;
  const n = Number.isNaN(attempt) ? 1 : Math.max(1, Math.floor(attempt));
  const d = Math.min(maxMs, baseMs * 2 ** (n - 1));
  if (jitter === 'none') return Math.round(d);
  if (jitter === 'full') return Math.round(d * random());
  if (jitter === 'equal') return Math.round(d / 2 + (d / 2) * random());
  if (!(jitter >= 0 && jitter <= 1))
    throw new RangeError(`jitter must be 'full', 'equal', 'none' or a fraction from 0 to 1, not ${jitter}`);
  return Math.round(d * (1 - jitter + 2 * jitter * random()));
}
