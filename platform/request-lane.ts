// Fair shares of this process's event loop between projects: a request acting for a project takes a turn here before
// its operation runs. While the process keeps up, or only one project's requests come in, every turn is given at once.
// While it is saturated (its event loop busy SATURATED_UTILIZATION of the last window) with several projects' requests,
// a project has at most PER_PROJECT requests running here; the others wait in line, and turns go round-robin across
// projects (FIFO within one), so a neighbour sending dozens of requests at once has its own wait in line while a
// project sending a few is served at once. Without it the event loop served requests in arrival order: a flood of
// one project's requests (async invokes accepted, refusals, statements waiting for their connection) put hundreds of
// callbacks ahead of every other project's (bench N1; docs/architecture.md, "Fair shares of the shared database").
// A request that gets no turn within its wait is answered 503 SERVICE_UNAVAILABLE with Retry-After (it never ran).
// A request running longer than SETTLED_MS no longer counts against its project's turns: it is waiting (for a
// statement, a function run, another service), not taking the event loop, and a request that waits for another
// request of its own project (a function's HTTP step calling its project's API) must not wait for a turn that only
// its own end would give back. Nor does a request count while its statement runs in PostgreSQL (awayFromLane, called
// by the data API's pools): the lane shares the event loop, and a find spends most of its time waiting for its
// statement; counted, a neighbour's burst of quick finds waited 50-300 ms for its own turns while the event loop had
// room for them (bench N1's timing marks). A request waiting for a connection still counts: a project's flood then
// waits here, taking nothing, rather than in its pool's queue after its operation was parsed and planned; how many
// statements a project runs at once is its plan's connections (the pools' fair share).
import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from './errors.ts';

/** Requests of one project running at once while the process is saturated with several projects' requests. */
export const PER_PROJECT = 2;
/** A request running this long (ms) no longer counts against its project's turns. */
export const SETTLED_MS = 1000;
/** Longest wait for a turn before 503 (ms). */
export const MAX_WAIT_MS = 30_000;
/** While requests wait, how often the lane looks again whether the process is still saturated (ms). */
const RECHECK_MS = 10;

/** A request's turn: when it started, and how many of its waits for PostgreSQL are going on now. */
type Turn = { since: number; away: number; left: () => void };

/** The turn of the request whose operation runs here (RequestLane.within). */
const current = new AsyncLocalStorage<Turn>();

/**
 * Runs `fn`, a wait outside the event loop (a statement in flight), with the current
 * request's turn not counted against its project meanwhile: another request of the project may start. Outside a turn
 * (no lane, background work, split mode's subgraph processes) it only runs `fn`.
 */
export async function awayFromLane<T>(fn: () => Promise<T>): Promise<T> {
  const turn = current.getStore();
  if (!turn) return await fn();
  turn.away++;
  turn.left();
  try {
    return await fn();
  } finally {
    turn.away--;
  }
}

export type RequestLane = {
  /** A turn for one request of `projectId`: resolves with the function that ends it (call it once), or rejects 503. */
  enter: (projectId: string) => Promise<() => void>;
  /** Runs `fn` (the request's operation) as the turn `end` ends, so its waits for PostgreSQL do not count (awayFromLane). */
  within: <T>(end: () => void, fn: () => T) => T;
  /** Requests running per project and waiting in line now (tests, metrics). */
  state: () => { running: number; waiting: number };
};

type Waiter = { admit: () => void; timer: NodeJS.Timeout };

/**
 * Creates a lane. `saturatedFor(projectId)` says whether the process is saturated while other projects' requests come
 * in (platform/load-pressure.ts).
 */
export function createRequestLane(opts: {
  saturatedFor: (projectId: string) => boolean;
  perProject?: number;
  maxWaitMs?: number;
  settledMs?: number;
}): RequestLane {
  const perProject = opts.perProject ?? PER_PROJECT;
  const maxWaitMs = opts.maxWaitMs ?? MAX_WAIT_MS;
  const settledMs = opts.settledMs ?? SETTLED_MS;
  /** The turns of the requests running per project. */
  const running = new Map<string, Set<Turn>>();
  /** Each turn by the function that ends it (RequestLane.within). */
  const turns = new WeakMap<() => void, Turn>();
  let total = 0;
  /** Waiting requests per project, FIFO; the Map's order is the round-robin order (a served project goes last). */
  const queues = new Map<string, Waiter[]>();
  let waiting = 0;
  let recheck: NodeJS.Timeout | undefined;

  const start = (projectId: string): (() => void) => {
    const turn: Turn = {
      since: Date.now(),
      away: 0,
      left: () => {
        if (waiting > 0) pump();
      },
    };
    const mine = running.get(projectId) ?? new Set();
    mine.add(turn);
    running.set(projectId, mine);
    total++;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      total--;
      mine.delete(turn);
      if (mine.size === 0) running.delete(projectId);
      if (waiting > 0) pump();
    };
    turns.set(end, turn);
    return end;
  };
  /** Requests of the project that started within the last settledMs and are not waiting for PostgreSQL (at most perProject counted). */
  const recent = (mine: Set<Turn>): number => {
    const after = Date.now() - settledMs;
    let n = 0;
    for (const turn of mine) if (turn.since > after && turn.away === 0 && ++n >= perProject) break;
    return n;
  };
  const mayStart = (projectId: string): boolean => {
    const mine = running.get(projectId);
    return !mine || mine.size < perProject || !opts.saturatedFor(projectId) || recent(mine) < perProject;
  };

  const pump = (): void => {
    let admitted = true;
    // Round-robin: one request of each project in turn, as long as someone may start.
    while (admitted && waiting > 0) {
      admitted = false;
      for (const [projectId, queue] of [...queues]) {
        if (!mayStart(projectId)) continue;
        const w = queue.shift()!;
        waiting--;
        clearTimeout(w.timer);
        queues.delete(projectId);
        if (queue.length > 0) queues.set(projectId, queue);
        w.admit();
        admitted = true;
      }
    }
    if (waiting > 0 && !recheck) {
      recheck = setTimeout(() => {
        recheck = undefined;
        pump();
      }, RECHECK_MS);
      recheck.unref();
    }
  };

  return {
    enter(projectId) {
      if (!queues.has(projectId) && mayStart(projectId)) return Promise.resolve(start(projectId));
      return new Promise((resolve, reject) => {
        const queue = queues.get(projectId) ?? [];
        const w: Waiter = {
          admit: () => resolve(start(projectId)),
          timer: setTimeout(() => {
            const q = queues.get(projectId);
            const i = q?.indexOf(w) ?? -1;
            if (i < 0) return;
            q!.splice(i, 1);
            if (q!.length === 0) queues.delete(projectId);
            waiting--;
            reject(
              new AppError(
                'SERVICE_UNAVAILABLE',
                `This server is saturated and this project has ${perProject} requests running here already; its other requests waited ${Math.round(maxWaitMs / 1000)} s for a turn: retry shortly, or send fewer at once`,
                { retry_after: 1, reason: 'fair_share', running: perProject },
              ),
            );
          }, maxWaitMs),
        };
        w.timer.unref();
        queue.push(w);
        queues.set(projectId, queue);
        waiting++;
        pump();
      });
    },
    within(end, fn) {
      const turn = turns.get(end);
      return turn ? current.run(turn, fn) : fn();
    },
    state: () => ({ running: total, waiting }),
  };
}
