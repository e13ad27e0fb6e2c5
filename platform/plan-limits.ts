// The plan limits a project's requests and function runs are held to, as tenant management says (plans belong to
// it): asked through the router as the internal principal, kept a minute per project. A plan change (an operator's
// update of `plans` or of a tenant's plan) applies within that minute. When tenant management cannot answer, the
// limits are not enforced for a few seconds (then asked again): a quota must not take the service down with it.
import { LRUCache } from 'lru-cache';
import type { RouterClient } from './subgraph.ts';
import { INTERNAL_OPERATIONS, callInternal } from './internal-operations.ts';

export type ProjectPlanLimits = { maxRequestsPerMinute: number; maxFunctionInvocationsPerMonth: number };

const TTL_MS = 60_000;
/**
 * Projects whose limits are kept (each further one is asked once a minute while it is active). lru-cache allocates
 * its index arrays for `max` entries up front: 100,000 cost ~3 MB per cache even when empty.
 */
const PLAN_LIMITS_CACHE_MAX = 10_000;
/** How long an unanswered question counts as "no limit known" before it is asked again. */
const FAILED_TTL_MS = 5_000;

export type PlanLimitsReader = {
  /** The limits of `projectId`; null for a project tenant management does not know (deleted). */
  get: (projectId: string) => Promise<ProjectPlanLimits | null>;
  /** What is known now without asking (the hot path of every request); undefined when it must be asked. */
  peek: (projectId: string) => ProjectPlanLimits | null | undefined;
};

/** Creates the reader over the router (INTERNAL_OPERATIONS.projectPlanLimits). */
export function createPlanLimitsReader(router: RouterClient): PlanLimitsReader {
  const cache = new LRUCache<string, { limits: ProjectPlanLimits | null }>({ max: PLAN_LIMITS_CACHE_MAX, ttl: TTL_MS });
  const inflight = new Map<string, Promise<ProjectPlanLimits | null>>();
  const ask = async (projectId: string): Promise<ProjectPlanLimits | null> => {
    try {
      const limits = (
        await callInternal(
          router,
          INTERNAL_OPERATIONS.projectPlanLimits,
          { projectId },
          { requestId: 'plan-limits', principal: { kind: 'internal' } },
        )
      )._projectPlanLimits;
      cache.set(projectId, { limits });
      return limits;
    } catch {
      cache.set(projectId, { limits: null }, { ttl: FAILED_TTL_MS });
      return null;
    }
  };
  return {
    peek: (projectId) => cache.get(projectId)?.limits,
    get: async (projectId) => {
      const hit = cache.get(projectId);
      if (hit) return hit.limits;
      // Concurrent first requests of a project share one question.
      let pending = inflight.get(projectId);
      if (!pending) {
        pending = ask(projectId).finally(() => inflight.delete(projectId));
        inflight.set(projectId, pending);
      }
      return await pending;
    },
  };
}
