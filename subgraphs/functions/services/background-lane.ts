// Background runs (queued executions, cron ticks, after-hooks) take a turn here before they take a run slot. While
// the process is not busy answering requests, a turn is given at once and nothing changes. While it is (requests
// coming in, the event loop busy: platform/load-pressure.ts), at most BUSY_TURNS background runs go at a time, the
// next ones are given from setImmediate (after the I/O that is ready, which is where waiting requests are), and
// projects take turns round-robin, so one project's backlog cannot hold the executor. A run that gets no turn within
// its wait is put back in line by its caller (a queued execution waits with the same backoff as for a run slot).
// Why: bench N1 (bench/RESULTS.md) measured a free project's async runs, back to back at its concurrency cap, as what
// was left of a neighbour's latency once statements had fair shares.

/** Background runs that may go at once while the process is busy with requests. */
export const BUSY_TURNS = 2;
/** While runs wait, how often the lane looks again whether the process is still busy (ms). */
const RECHECK_MS = 20;

export type BackgroundLane = {
  /**
   * A turn for one background run of `projectId`: a function that ends it (call it once the run ended), or null when
   * no turn came within `waitMs`.
   */
  turn: (projectId: string, waitMs: number) => Promise<(() => void) | null>;
  /** Runs going and waiting now (tests, usage). */
  state: () => { running: number; waiting: number };
};

type Waiter = { give: (end: (() => void) | null) => void; timer: NodeJS.Timeout };

/** Creates a lane; `busy` says whether the process is busy answering requests now. */
export function createBackgroundLane(opts: { busy: () => boolean; busyTurns?: number }): BackgroundLane {
  const busyTurns = opts.busyTurns ?? BUSY_TURNS;
  let running = 0;
  let waiting = 0;
  /** Waiting runs per project, FIFO; the Map's order is the round-robin order (a served project goes last). */
  const queues = new Map<string, Waiter[]>();
  let pumping = false;
  let recheck: NodeJS.Timeout | undefined;

  const limit = () => (opts.busy() ? busyTurns : Infinity);
  const ender = () => {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      running--;
      schedule();
    };
  };
  const schedule = () => {
    if (pumping || waiting === 0) return;
    pumping = true;
    setImmediate(pump);
  };
  const pump = () => {
    pumping = false;
    while (waiting > 0 && running < limit()) {
      const [projectId, queue] = queues.entries().next().value!;
      const w = queue.shift()!;
      queues.delete(projectId);
      if (queue.length > 0) queues.set(projectId, queue);
      waiting--;
      clearTimeout(w.timer);
      running++;
      w.give(ender());
    }
    // Still waiting: a run ending pumps again; so does this, in case the process stopped being busy meanwhile.
    if (waiting > 0 && !recheck) {
      recheck = setTimeout(() => {
        recheck = undefined;
        schedule();
      }, RECHECK_MS);
      recheck.unref();
    }
  };

  return {
    turn(projectId, waitMs) {
      if (waiting === 0 && running < limit()) {
        running++;
        return Promise.resolve(ender());
      }
      return new Promise((resolve) => {
        const queue = queues.get(projectId) ?? [];
        const w: Waiter = {
          give: resolve,
          timer: setTimeout(() => {
            const q = queues.get(projectId);
            const i = q?.indexOf(w) ?? -1;
            if (i < 0) return;
            q!.splice(i, 1);
            if (q!.length === 0) queues.delete(projectId);
            waiting--;
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
