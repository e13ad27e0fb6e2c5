// Whether this process is busy answering other projects' requests: what a project's background work (queued function
// runs, cron ticks, after-hooks) looks at before it starts, so that it yields to its neighbours' interactive requests
// the way long statements yield the CPU to short ones (docs/architecture.md, "Fair shares of the shared database").
// Busy for project P, over the last window: requests of other projects (or of no project: the console, sign-ins)
// were answered at BUSY_REQUESTS_PER_S or more, or some were while the event loop was BUSY_UTILIZATION busy. A
// project's own requests never slow its own background work (that is its choice, not a neighbour's cost). The event
// loop alone is not the signal: on a machine whose cores are taken by PostgreSQL and other processes the loop is often
// idle while a request waits for the CPU; nor are requests in flight (a realtime subscription or a statement sleeping
// is in flight for long without asking anything of the process). One cheap timer per process (unref'd, started by
// the first request); the HTTP servers note each answered request (platform/http-observe.ts).
import { performance } from 'node:perf_hooks';

/** The window over which requests and the event loop's utilization are measured (ms). */
const WINDOW_MS = 100;
/** Event loop utilization (0..1) over a window at which the process counts as busy, with requests coming in. */
export const BUSY_UTILIZATION = 0.5;
/** Requests a second at which the process counts as busy whatever its event loop (a browser's page is a few). */
export const BUSY_REQUESTS_PER_S = 50;
/** Event loop utilization over a window at which the process counts as saturated (platform/request-lane.ts). */
export const SATURATED_UTILIZATION = 0.8;
/** Most projects counted apart in one window (the rest count together, as no project). */
const MAX_PROJECTS = 10_000;

export type LoadPressure = {
  /** Notes a request this process answered, and the project it acted for (none: the console, anonymous callers). */
  noteRequest: (projectId?: string) => void;
  /** True while other projects' requests come in fast, or come in while the event loop is busy (last window). */
  busyFor: (projectId: string) => boolean;
  /** True while the event loop is saturated and other projects' requests come in too (last window). */
  saturatedFor: (projectId: string) => boolean;
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
  let total = 0;
  let perProject = new Map<string, number>();
  let since = now();
  // The last closed window.
  let last = { total: 0, perProject: new Map<string, number>(), ms: windowMs, utilization: 0 };
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const t = now();
    last = { total, perProject, ms: Math.max(1, t - since), utilization: utilization() };
    total = 0;
    perProject = new Map();
    since = t;
  };
  return {
    noteRequest(projectId) {
      total++;
      if (projectId && (perProject.size < MAX_PROJECTS || perProject.has(projectId)))
        perProject.set(projectId, (perProject.get(projectId) ?? 0) + 1);
      if (!timer) {
        since = now();
        timer = setInterval(sample, windowMs);
        timer.unref();
      }
    },
    busyFor(projectId) {
      const others = last.total - (last.perProject.get(projectId) ?? 0);
      if (others <= 0) return false;
      return (others * 1000) / last.ms >= BUSY_REQUESTS_PER_S || last.utilization >= BUSY_UTILIZATION;
    },
    saturatedFor(projectId) {
      if (last.utilization < SATURATED_UTILIZATION) return false;
      return last.total - (last.perProject.get(projectId) ?? 0) > 0;
    },
    sample,
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      last = { total: 0, perProject: new Map(), ms: windowMs, utilization: 0 };
    },
  };
}

/** This process's gauge: the HTTP servers note their requests on it, background work asks it. */
export const loadPressure: LoadPressure = createLoadPressure();
