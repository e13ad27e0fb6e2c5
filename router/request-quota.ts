// The plan's requests per minute, per project, enforced where requests come in (the front door, on every
// authenticated request that acts for a project: its keys, client or end-user tokens). A fixed window per minute;
// past the limit 429 RATE_LIMITED with Retry-After (the seconds left in the minute). Counting is a memory
// increment; every process tells the others what it counted once a second (the `request-counts` broadcast, at most 80
// projects a message: platform/broadcast-sharing.ts), so N front doors together allow about the limit, not N times it
// (a burst may overshoot by a second's worth).
import { errors } from '../platform/errors.ts';
import type { Principal } from '../platform/auth.ts';
import type { Logger } from '../platform/logger.ts';
import { createBroadcastSharing, inMessages } from '../platform/broadcast-sharing.ts';
import type { PlanLimitsReader, ProjectPlan } from '../platform/plan-limits.ts';

const WINDOW_MS = 60_000;

export type RequestQuota = {
  /**
   * Counts one request of the principal's project; RATE_LIMITED past its plan's limit, PROJECT_SUSPENDED while the
   * operator suspended it (or its owner). Sync unless the plan must be read.
   */
  hit: (principal: Principal) => void | Promise<void>;
  /**
   * What the project's next request would be refused with now (past its rate, or suspended), from what this process
   * already knows, without counting anything or reading the plan; undefined when it would be counted (or the plan is
   * not known yet).
   */
  refusal: (projectId: string) => Error | undefined;
  /** Requests of the project counted in the current minute, here and (as heard) elsewhere. */
  used: (projectId: string) => number;
  stop: () => Promise<void>;
};

type Count = { window: number; local: number; remote: number; unsent: number };

/** Starts the quota; with `broadcastUrl` the counts are shared with the other processes on that database. */
export async function startRequestQuota(opts: {
  limits: PlanLimitsReader;
  broadcastUrl?: string;
  logger: Logger;
  now?: () => number;
}): Promise<RequestQuota> {
  const now = opts.now ?? Date.now;
  const counts = new Map<string, Count>();
  const windowOf = () => Math.floor(now() / WINDOW_MS);
  const countOf = (projectId: string, window: number): Count => {
    let c = counts.get(projectId);
    if (!c || c.window !== window) {
      c = { window, local: 0, remote: 0, unsent: 0 };
      counts.set(projectId, c);
    }
    return c;
  };

  const sharing = createBroadcastSharing({
    topic: 'request-counts',
    name: 'request quota',
    logger: opts.logger,
    outgoing: (origin) => {
      const window = windowOf();
      const unsent: [string, number][] = [];
      for (const [projectId, c] of counts) {
        if (c.window !== window) counts.delete(projectId);
        else if (c.unsent > 0) {
          unsent.push([projectId, c.unsent]);
          c.unsent = 0;
        }
      }
      return inMessages(unsent).map((batch) => ({ origin, window, counts: batch }));
    },
    heard: (m) => {
      if (m.window !== windowOf()) return;
      for (const [projectId, n] of Object.entries(m.counts))
        if (typeof n === 'number') countOf(projectId, m.window).remote += n;
    },
  });
  if (opts.broadcastUrl) await sharing.start(opts.broadcastUrl);

  /** Refused until the minute `window` is over (Retry-After: the seconds left in it). */
  const rateLimited = (window: number) =>
    errors.rateLimited(Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now()) / 1000)));
  const count = (projectId: string, limit: number | null): void => {
    if (limit === null) return;
    const window = windowOf();
    const c = countOf(projectId, window);
    if (c.local + c.remote >= limit) throw rateLimited(window);
    c.local++;
    c.unsent++;
  };

  const admit = (projectId: string, plan: ProjectPlan | null): void => {
    if (!plan) return;
    if (plan.suspended) throw errors.projectSuspended(projectId, plan.suspended);
    count(projectId, plan.limits.maxRequestsPerMinute);
  };

  return {
    hit(principal) {
      // Every credential acting for a project counts: its keys (secret and publishable), client and end-user tokens.
      if (!('projectId' in principal)) return;
      const projectId = principal.projectId;
      // The plan the quota reads says too whether the operator suspended the project: the check costs nothing more.
      const known = opts.limits.peekPlan(projectId);
      if (known !== undefined) return admit(projectId, known);
      return opts.limits.plan(projectId).then((plan) => admit(projectId, plan));
    },
    refusal(projectId) {
      const plan = opts.limits.peekPlan(projectId);
      if (!plan) return undefined;
      if (plan.suspended) return errors.projectSuspended(projectId, plan.suspended);
      const limit = plan.limits.maxRequestsPerMinute;
      const window = windowOf();
      const c = counts.get(projectId);
      if (limit === null || !c || c.window !== window || c.local + c.remote < limit) return undefined;
      return rateLimited(window);
    },
    used(projectId) {
      const c = counts.get(projectId);
      return c && c.window === windowOf() ? c.local + c.remote : 0;
    },
    stop: sharing.stop,
  };
}
