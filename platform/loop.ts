// In-process loops: the one shape for background work that must stay in this process instead of being a job
// (platform/jobs.ts) — work woken by a LISTEN notification that must react within milliseconds, or that re-makes this
// process's own connection. docs/architecture.md ("Background work") lists which loops these are and why.
//
// A loop runs passes of `run`: never two at once (a wake during a pass makes one more pass follow it); again at once
// while a pass answers that more is left; after a pass that throws, the failure is logged and the loop tries again by
// itself after `retryDelayMs(failures in a row)` (the caller's backoff; wakes meanwhile wait for it); every `everyMs`
// (if given) it wakes by itself, as a last resort should a notification be missed. `stop` (on close) ends it: no pass
// starts afterwards, and the one under way is waited for.
import type { Logger } from './logger.ts';

export type Loop = {
  /** Asks for a pass soon (now, or after the pass under way, or after the retry delay after a failure). */
  wake: () => void;
  /** Runs passes now until nothing is left; rejects with a pass's failure (the loop still retries it by itself). */
  drain: () => Promise<void>;
  /** Starts the periodic wake (`everyMs`); passes run only when woken or drained until then. */
  start: () => void;
  /** No pass starts from now on; waits for the one under way. */
  stop: () => Promise<void>;
  /** Failed passes in a row (0 after a pass that succeeded). */
  failures: () => number;
};

export function createLoop(opts: {
  /** What the loop does, for its log lines. */
  name: string;
  logger: Logger;
  /** One pass; answers true when more is left to do at once. */
  run: () => Promise<boolean | void>;
  /** How long to wait after the n-th failed pass in a row (n ≥ 1) before the next. */
  retryDelayMs: (failures: number) => number;
  /** A pass every this many ms even when nobody wakes the loop. */
  everyMs?: number;
}): Loop {
  let pass: Promise<void> | undefined;
  let again = false;
  let failures = 0;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let everyTimer: NodeJS.Timeout | undefined;

  const launch = (): Promise<void> => {
    if (pass) {
      again = true;
      return pass;
    }
    clearTimeout(retryTimer);
    retryTimer = undefined;
    pass = (async () => {
      try {
        for (;;) {
          again = false;
          const more = await opts.run();
          if (stopped || !(more === true || again)) break;
        }
        failures = 0;
      } catch (err) {
        failures++;
        const delay = opts.retryDelayMs(failures);
        opts.logger.warn(
          { err: (err as Error)?.message ?? String(err), loop: opts.name, failures, retry_in_ms: delay },
          `${opts.name} failed; retrying`,
        );
        if (!stopped) {
          retryTimer = setTimeout(() => {
            retryTimer = undefined;
            if (!stopped) launch().catch(() => {});
          }, delay);
          retryTimer.unref();
        }
        throw err;
      } finally {
        pass = undefined;
      }
    })();
    return pass;
  };

  return {
    wake() {
      if (stopped || retryTimer) return;
      launch().catch(() => {}); // logged above, and retried
    },
    drain: async () => {
      if (!stopped) await launch();
    },
    start() {
      if (stopped || everyTimer || !opts.everyMs) return;
      everyTimer = setInterval(() => {
        if (!stopped && !retryTimer) launch().catch(() => {});
      }, opts.everyMs);
      everyTimer.unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      clearInterval(everyTimer);
      await pass?.catch(() => {});
    },
    failures: () => failures,
  };
}
