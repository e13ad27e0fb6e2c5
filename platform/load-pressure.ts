// Whether this process is busy answering requests: what background work (queued function runs, cron ticks,
// after-hooks) looks at before it starts, so that it yields to interactive requests the way long statements yield the
// CPU to short ones (docs/architecture.md, "Fair shares of the shared database"). Busy, over the last window: requests
// came in at BUSY_REQUESTS_PER_S or more, or some came in while the event loop was BUSY_UTILIZATION busy. The event
// loop alone is not the signal: on a machine whose cores are taken by others (PostgreSQL, other processes) the loop
// is often idle while a request waits for the CPU; nor are requests in flight (a realtime subscription or a
// statement sleeping is in flight for long without asking anything of the process). One cheap timer per process
// (unref'd, started by the first request); the HTTP servers note each request (platform/http-observe.ts).
import { performance } from 'node:perf_hooks';

/** The window over which the event loop's utilization is measured (ms). */
const WINDOW_MS = 100;
/** Event loop utilization (0..1) over a window at which the process counts as busy, with requests coming in. */
export const BUSY_UTILIZATION = 0.5;
/** Requests a second at which the process counts as busy whatever its event loop (a browser's page is a few). */
export const BUSY_REQUESTS_PER_S = 50;

export type LoadPressure = {
  /** Notes a request this process is answering (its arrival). */
  noteRequest: () => void;
  /** True while requests come in fast, or come in while the event loop is busy (over the last window). */
  busy: () => boolean;
  /** Closes the current window (the timer does, every window; tests call it themselves). */
  sample: () => void;
  /** Ends the timer (tests). */
  stop: () => void;
};

/**
 * Creates a pressure gauge. `utilization` answers the event loop's utilization since its previous call (tests pass
 * their own); `now` is a millisecond clock.
 */
export function createLoadPressure(
  opts: { utilization?: () => number; now?: () => number; windowMs?: number } = {},
): LoadPressure {
  const now = opts.now ?? (() => performance.now());
  const windowMs = opts.windowMs ?? WINDOW_MS;
  let previous = performance.eventLoopUtilization();
  const utilization =
    opts.utilization ??
    (() => {
      const current = performance.eventLoopUtilization();
      const u = performance.eventLoopUtilization(current, previous).utilization;
      previous = current;
      return u;
    });
  let requests = 0;
  let since = now();
  let busy = false;
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const t = now();
    const u = utilization();
    const perS = (requests * 1000) / Math.max(1, t - since);
    busy = perS >= BUSY_REQUESTS_PER_S || (requests > 0 && u >= BUSY_UTILIZATION);
    requests = 0;
    since = t;
  };
  return {
    noteRequest() {
      requests++;
      if (!timer) {
        since = now();
        timer = setInterval(sample, windowMs);
        timer.unref();
      }
    },
    busy: () => busy,
    sample,
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      busy = false;
    },
  };
}

/** This process's gauge: the HTTP servers note their requests on it, background work asks it. */
export const loadPressure: LoadPressure = createLoadPressure();
