// Plans are few and change only by migration: read them once and keep them for a minute.
import { LRUCache } from 'lru-cache';
import { PlanEntity, TenantEntity, type Plan } from '../entities/index.ts';
import { errors } from '../../../platform/errors.ts';
import type { ServiceDeps } from './context.ts';

export const DEFAULT_PLAN_ID = 'free';
const CACHE_MS = 60_000;
// A page of projects asks for the owner's plan once per project: remember it for a few seconds.
const TENANT_PLAN_CACHE_MS = 5_000;

export type PlanService = ReturnType<typeof createPlanService>;

/** Lists plans and answers which plan a tenant is on. */
export function createPlanService({ db }: Pick<ServiceDeps, 'db'>) {
  let cache: { at: number; plans: Plan[] } | undefined;
  const tenantPlans = new LRUCache<string, string>({ max: 10_000, ttl: TENANT_PLAN_CACHE_MS });

  async function list(): Promise<Plan[]> {
    if (cache && Date.now() - cache.at < CACHE_MS) return cache.plans;
    const plans = await db.em().find(PlanEntity, {}, { orderBy: { sortOrder: 'asc' } });
    cache = { at: Date.now(), plans };
    return plans;
  }

  async function get(id: string): Promise<Plan> {
    let plan = (await list()).find((p) => p.id === id);
    if (!plan) {
      cache = undefined;
      plan = (await list()).find((p) => p.id === id);
    }
    if (!plan) throw errors.notFound('plan', id);
    return plan;
  }

  return {
    list,
    get,
    /** The plan of a tenant (null when the tenant does not exist). */
    async ofTenant(tenantId: string): Promise<Plan | null> {
      let planId = tenantPlans.get(tenantId);
      if (!planId) {
        const tenant = await db.em().findOne(TenantEntity, { id: tenantId }, { fields: ['planId'] });
        if (!tenant) return null;
        planId = tenant.planId;
        tenantPlans.set(tenantId, planId);
      }
      return await get(planId);
    },
  };
}
