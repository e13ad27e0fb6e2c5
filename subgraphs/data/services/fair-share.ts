// Fair shares of the shared database (see docs/architecture.md "Fair shares of the shared database"): which waiting
// request gets the next connection when the connection budget is contended, and how much statement time each
// project spent in the last minute. Pure bookkeeping, no I/O: pools.ts applies it.

/**
 * The index of the waiter to serve next, or -1: among the waiters that may take a connection (`eligible`: its project
 * is under its own cap), the one whose project holds the fewest connections (`held`), the earliest on a tie. A project
 * under its fair share (budget / projects wanting connections) therefore always goes before one at or above it, and
 * a project's own waiters keep their order (FIFO within a project). `held` is asked once per project.
 */
export function nextWaiter<W extends { projectId: string }>(
  waiters: readonly W[],
  held: (w: W) => number,
  eligible: (w: W) => boolean = () => true,
): number {
  const seen = new Map<string, number>();
  let best = -1;
  let bestHeld = Infinity;
  for (let i = 0; i < waiters.length; i++) {
    const w = waiters[i]!;
    let h = seen.get(w.projectId);
    if (h === undefined) {
      h = held(w);
      seen.set(w.projectId, h);
    }
    if (h < bestHeld && eligible(w)) {
      best = i;
      bestHeld = h;
    }
  }
  return best;
}

const WINDOW_MS = 60_000;
const BUCKET_MS = 5_000;
const BUCKETS = WINDOW_MS / BUCKET_MS;

type Spent = { buckets: Float64Array; first: number };
/** Where bucket `k` lives in a project's ring. */
const slot = (k: number): number => ((k % BUCKETS) + BUCKETS) % BUCKETS;

/**
 * Statement time per project over a sliding minute (twelve 5-second buckets), in milliseconds. `add` books a finished
 * statement's time; `over` tells, given time of statements still running, whether a budget is spent and in how many
 * seconds enough of the window will have passed for the project to be under it again.
 */
export function createStatementClock(now: () => number = Date.now) {
  const spent = new Map<string, Spent>();
  /** The project's buckets, those older than the window emptied (bucket k covers [k·5 s, (k+1)·5 s)). */
  const current = (projectId: string, create: boolean): Spent | undefined => {
    const k = Math.floor(now() / BUCKET_MS);
    let s = spent.get(projectId);
    if (!s) {
      if (!create) return undefined;
      s = { buckets: new Float64Array(BUCKETS), first: k - BUCKETS + 1 };
      spent.set(projectId, s);
    }
    const first = k - BUCKETS + 1;
    if (s.first < first) {
      const drop = Math.min(BUCKETS, first - s.first);
      for (let j = 0; j < drop; j++) s.buckets[slot(s.first + j)] = 0;
      s.first = first;
    }
    return s;
  };
  const usedOf = (s: Spent | undefined): number => {
    if (!s) return 0;
    let n = 0;
    for (const v of s.buckets) n += v;
    return n;
  };
  return {
    /** Books `ms` of statement time to the project, now or at `at` (another process's, heard late; ignored past the window). */
    add(projectId: string, ms: number, at?: number): void {
      if (ms <= 0) return;
      const s = current(projectId, true)!;
      const k = Math.floor(Math.min(at ?? now(), now()) / BUCKET_MS);
      if (k < s.first) return;
      s.buckets[slot(k)]! += ms;
    },
    /** Statement time booked to the project in the last minute (ms). */
    used(projectId: string): number {
      return usedOf(current(projectId, false));
    },
    /**
     * Whether the project's time (booked, plus `runningMs` of statements still running) reaches `budgetMs`; if so,
     * the whole seconds until the oldest buckets leave the window and take it back under (at least 1).
     */
    over(projectId: string, budgetMs: number, runningMs = 0): { retryAfter: number; usedMs: number } | undefined {
      const s = current(projectId, false);
      const usedMs = usedOf(s) + runningMs;
      if (usedMs < budgetMs) return undefined;
      let left = usedMs;
      let at = (Math.floor(now() / BUCKET_MS) + 1) * BUCKET_MS; // when the current bucket ends
      if (s) {
        for (let j = 0; j < BUCKETS; j++) {
          const k = s.first + j;
          left -= s.buckets[slot(k)]!;
          if (left < budgetMs) {
            at = (k + 1) * BUCKET_MS + WINDOW_MS - BUCKET_MS; // bucket k leaves the window then
            break;
          }
        }
      }
      return { retryAfter: Math.max(1, Math.ceil((at - now()) / 1000)), usedMs };
    },
    /** Forgets projects with nothing booked in the window (called now and then; thousands of projects stay cheap). */
    sweep(): void {
      for (const id of spent.keys()) if (usedOf(current(id, false)) === 0) spent.delete(id);
    },
    /** Projects with time booked (for tests and metrics). */
    size: () => spent.size,
  };
}
export type StatementClock = ReturnType<typeof createStatementClock>;
