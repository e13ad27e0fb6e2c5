// The plan a project is held to, as tenant management says (plans belong to it and to the operator who edits
// them): its limits and whether the project or its owner is suspended. Asked through the router as the internal
// principal and kept a minute per project; an operator's change (a plan edited, a tenant moved to another plan, a
// suspension) is broadcast (`plans.changed`) and empties every process's copy at once. When tenant management
// cannot answer, the limits are not enforced for a few seconds (then asked again): a quota must not take the service
// down with it.
import { LRUCache } from 'lru-cache';
import type { RouterClient } from './subgraph.ts';
import { startBroadcastListener, type BroadcastListener } from './broadcast.ts';
import type { Logger } from './logger.ts';
import { INTERNAL_OPERATIONS, callInternal, type PlanLimitValues, type ProjectPlan } from './internal-operations.ts';

export type { PlanLimitValues, ProjectPlan };

const TTL_MS = 60_000;
/**
 * Projects whose limits are kept (each further one is asked once a minute while it is active). lru-cache allocates
 * its index arrays for `max` entries up front: 100,000 cost ~3 MB per cache even when empty.
 */
const PLAN_LIMITS_CACHE_MAX = 10_000;
/** How long an unanswered question counts as "no limit known" before it is asked again. */
const FAILED_TTL_MS = 5_000;

export type PlanLimitsReader = {
  /** The limits of `projectId`; null for a project tenant management does not know (deleted), or while it cannot answer. */
  get: (projectId: string) => Promise<PlanLimitValues | null>;
  /** What is known now without asking (the hot path of every request); undefined when it must be asked. */
  peek: (projectId: string) => PlanLimitValues | null | undefined;
  /** The whole plan (limits and suspension); null as for `get`. */
  plan: (projectId: string) => Promise<ProjectPlan | null>;
  /** The whole plan if known now without asking; undefined when it must be asked. */
  peekPlan: (projectId: string) => ProjectPlan | null | undefined;
  /** Forgets what is known (a test, or a process that changed a plan itself). */
  clear: () => void;
  /** Starts hearing `plans.changed` on the platform database's broadcast channel (when not given a listener). */
  listen: (databaseUrl: string, logger: Logger) => Promise<void>;
  /** Stops the listener `listen` started. */
  stop: () => Promise<void>;
};

/**
 * Creates the reader over the router (INTERNAL_OPERATIONS.projectPlanLimits). With `listener`, an operator's change
 * (`plans.changed`) and a lost listening connection empty the cache, so changes apply at once in every process.
 */
export function createPlanLimitsReader(router: RouterClient, listener?: BroadcastListener): PlanLimitsReader {
  const cache = new LRUCache<string, { plan: ProjectPlan | null }>({ max: PLAN_LIMITS_CACHE_MAX, ttl: TTL_MS });
  const inflight = new Map<string, Promise<ProjectPlan | null>>();
  let generation = 0;
  const clear = () => {
    generation++;
    cache.clear();
  };
  const attach = (l: BroadcastListener) => {
    l.on('plans.changed', clear);
    l.onReset(clear);
    clear();
  };
  if (listener) attach(listener);
  let started: BroadcastListener | undefined;
  const ask = async (projectId: string): Promise<ProjectPlan | null> => {
    const asked = generation;
    try {
      const plan = (
        await callInternal(
          router,
          INTERNAL_OPERATIONS.projectPlanLimits,
          { projectId },
          { requestId: 'plan-limits', principal: { kind: 'internal' } },
        )
      )._projectPlanLimits;
      // An answer read before a change was announced is not kept: the next request asks again.
      if (asked === generation) cache.set(projectId, { plan });
      return plan;
    } catch {
      if (asked === generation) cache.set(projectId, { plan: null }, { ttl: FAILED_TTL_MS });
      return null;
    }
  };
  const plan = async (projectId: string): Promise<ProjectPlan | null> => {
    const hit = cache.get(projectId);
    if (hit) return hit.plan;
    // Concurrent first requests of a project share one question.
    let pending = inflight.get(projectId);
    if (!pending) {
      pending = ask(projectId).finally(() => inflight.delete(projectId));
      inflight.set(projectId, pending);
    }
    return await pending;
  };
  const peekPlan = (projectId: string) => cache.get(projectId)?.plan;
  return {
    plan,
    peekPlan,
    peek: (projectId) => {
      const hit = cache.get(projectId);
      return hit ? (hit.plan?.limits ?? null) : undefined;
    },
    get: async (projectId) => (await plan(projectId))?.limits ?? null,
    clear,
    async listen(databaseUrl, logger) {
      if (started) return;
      started = await startBroadcastListener({ url: databaseUrl, logger });
      attach(started);
    },
    async stop() {
      await started?.stop();
      started = undefined;
    },
  };
}

/** A plan without any limit (the `self-hosted` plan's shape); spread it and set the limits that apply. */
export const NO_LIMITS: PlanLimitValues = {
  maxProjects: null,
  maxStorageBytes: null,
  maxUploadBytes: null,
  maxDatabaseRows: null,
  maxDatabaseBytes: null,
  maxFunctionInvocationsPerMonth: null,
  maxRequestsPerMinute: null,
  minCronIntervalSeconds: null,
  maxCronJobs: null,
  maxConcurrentFunctionRuns: null,
  maxAsyncInvokesPerRun: null,
  maxQueuedFunctionRuns: null,
  maxRealtimeSubscribers: null,
  maxPendingUploads: null,
  maxDatabaseConnections: null,
  databaseCpuSecondsPerMinute: null,
};
