// Background runs (queued executions, cron ticks, after-hooks) take a turn here before they take a run slot. A
// project's run gets its turn at once unless the process is busy answering other projects' requests
// (platform/load-pressure.ts): then it waits for a turn of the process's busy share, at most BUSY_TURNS runs going at
// once and BUSY_RUNS_PER_S starting a second across every project in that state, given from setImmediate (after the
// I/O that is ready, which is where the waiting requests are) and round-robin across projects, so one project's
// backlog cannot hold the share against another's single run. A run that gets no turn within its wait is put back in
// line by its caller (a queued execution waits with the same backoff as for a run slot).
// Why: bench N1 (bench/RESULTS.md) measured a free project's async runs as what was left of a neighbour's latency once
// statements had fair shares: each run costs the process and the platform database a few milliseconds of CPU whatever
// it does, hundreds a second when the project sends them, and nothing ordered them after a neighbour's requests.

/** Background runs that may go at once while the process is busy with other projects' requests. */
export const BUSY_TURNS = 2;
/** Background runs that may start a second (in the whole process) while it is busy with other projects' requests. */
export const BUSY_RUNS_PER_S = 20;
/** While runs wait, how often the lane looks again whether the process is still busy (ms). */
const RECHECK_MS = 20;

export type BackgroundLane = {
  /**
   * A turn for one background run of `projectId`: a function that ends it (call it once the run ended), or null when
   * no turn came within `waitMs`.
   */
  turn: (projectId: string, waitMs: number) => Promise<(() => void) | null>;
  /** Runs going in the busy share and waiting for it now (tests). */
  state: () => { running: number; waiting: number };
};

type Waiter = { give: (end: (() => void) | null) => void; timer: NodeJS.Timeout };

/**
 * Creates a lane. `busyFor(projectId)` says whether the process is busy with other projects' requests; `now` is a
 * millisecond clock (tests).
 */
export function createBackgroundLane(opts: {
  busyFor: (projectId: string) => boolean;
  busyTurns?: number;
  busyRunsPerS?: number;
  now?: () => number;
}): BackgroundLane {
  const busyTurns = opts.busyTurns ?? BUSY_TURNS;
  const perS = opts.busyRunsPerS ?? BUSY_RUNS_PER_S;
  const now = opts.now ?? (() => performance.now());
  const spacingMs = 1000 / perS;
  let running = 0;
  let waiting = 0;
  /** The theoretical time of the busy share's next start (see takeStart). */
  let nextStart = -Infinity;
  /** Waiting runs per project, FIFO; the Map's order is the round-robin order (a served project goes last). */
  const queues = new Map<string, Waiter[]>();
  let pumping = false;
  let recheck: NodeJS.Timeout | undefined;

  const ender = (counted: boolean) => {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (counted) running--;
      schedule();
    };
  };
  /** Takes a start of the busy share if one is free now. */
  const takeStart = (): boolean => {
    const t = now();
    // The generic cell rate algorithm: one start every spacingMs, a burst of busyTurns after a quiet time.
    const at = Math.max(nextStart, t);
    if (running >= busyTurns || at - t > spacingMs * (busyTurns - 1)) return false;
    nextStart = at + spacingMs;
    running++;
    return true;
  };
  const schedule = () => {
    if (pumping || waiting === 0) return;
    pumping = true;
    setImmediate(pump);
  };
  const remove = (projectId: string, queue: Waiter[], w: Waiter) => {
    queue.splice(queue.indexOf(w), 1);
    queues.delete(projectId);
    if (queue.length > 0) queues.set(projectId, queue);
    waiting--;
    clearTimeout(w.timer);
  };
  const pump = () => {
    pumping = false;
    // Once the share has no start left, this pass only lets go the runs of projects no longer busy: a start that came
    // free during the pass must go to the next project in turn, not to one later in this pass.
    let blocked = false;
    for (const [projectId, queue] of [...queues]) {
      if (waiting === 0) break;
      const w = queue[0]!;
      // No longer busy for this project: its waiting runs go at once, outside the share.
      if (!opts.busyFor(projectId)) {
        while (queue.length > 0) {
          const first = queue[0]!;
          remove(projectId, queue, first);
          first.give(ender(false));
        }
        continue;
      }
      if (blocked || !takeStart()) {
        blocked = true;
        continue;
      }
      remove(projectId, queue, w);
      w.give(ender(true));
    }
    if (waiting > 0 && !recheck) {
      const wait = Math.max(1, Math.min(RECHECK_MS, nextStart - spacingMs * (busyTurns - 1) - now()));
      recheck = setTimeout(() => {
        recheck = undefined;
        schedule();
      }, wait);
      recheck.unref();
    }
  };

  return {
    turn(projectId, waitMs) {
      if (!opts.busyFor(projectId)) return Promise.resolve(ender(false));
      if (waiting === 0 && takeStart()) return Promise.resolve(ender(true));
      return new Promise((resolve) => {
        const queue = queues.get(projectId) ?? [];
        const w: Waiter = {
          give: resolve,
          timer: setTimeout(() => {
            const q = queues.get(projectId);
            if (!q || !q.includes(w)) return;
            remove(projectId, q, w);
            resolve(null);
          }, waitMs),
        };
        queue.push(w);
        queues.set(projectId, queue);
        waiting++;
        schedule();
      });
    },
    state: () => ({ running, waiting }),
  };
}
