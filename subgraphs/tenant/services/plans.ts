// Plans are few and change only when an operator edits them: read them once and keep them for a minute (the
// operator's change empties the copy: `invalidate`, and the `plans.changed` broadcast for other processes).
import { LRUCache } from 'lru-cache';
import { PlanEntity, TenantEntity, type Plan } from '../entities/index.ts';
import { errors } from '../../../platform/errors.ts';
import type { PlanLimitValues, ProjectPlan } from '../../../platform/internal-operations.ts';
import type { ServiceDeps } from './context.ts';
import { startBroadcastListener, type BroadcastListener } from '../../../platform/broadcast.ts';

/** The platform_settings key holding the plan new tenants start on (an operator's choice; else config.defaultPlan). */
export const DEFAULT_PLAN_SETTING = 'default_plan';
const CACHE_MS = 60_000;
// A page of projects asks for the owner's plan once per project: remember it for a few seconds.
const TENANT_PLAN_CACHE_MS = 5_000;

export type PlanService = ReturnType<typeof createPlanService>;

/** Every limit of a plan (null: no limit), in the shape the enforcing processes read. */
export function limitsOf(plan: Plan): PlanLimitValues {
  const n = (v: number | null | undefined) => (v === undefined || v === null ? null : Number(v));
  return {
    maxProjects: n(plan.maxProjects),
    maxStorageBytes: n(plan.maxStorageBytes),
    maxUploadBytes: n(plan.maxUploadBytes),
    maxDatabaseRows: n(plan.maxDatabaseRows),
    maxDatabaseBytes: n(plan.maxDatabaseBytes),
    maxFunctionInvocationsPerMonth: n(plan.maxFunctionInvocationsPerMonth),
    maxRequestsPerMinute: n(plan.maxRequestsPerMinute),
    minCronIntervalSeconds: n(plan.minCronIntervalSeconds),
    maxCronJobs: n(plan.maxCronJobs),
    maxConcurrentFunctionRuns: n(plan.maxConcurrentFunctionRuns),
    maxAsyncInvokesPerRun: n(plan.maxAsyncInvokesPerRun),
    maxQueuedFunctionRuns: n(plan.maxQueuedFunctionRuns),
    maxRealtimeSubscribers: n(plan.maxRealtimeSubscribers),
    maxPendingUploads: n(plan.maxPendingUploads),
    maxDatabaseConnections: n(plan.maxDatabaseConnections),
    databaseCpuSecondsPerMinute: n(plan.databaseCpuSecondsPerMinute),
  };
}

/** Lists plans and answers which plan a tenant is on. */
export function createPlanService({
  db,
  config,
  logger,
  databaseUrl,
}: Pick<ServiceDeps, 'db' | 'config' | 'logger'> & { databaseUrl?: string }) {
  let warnedMissingPlan = '';
  let listener: BroadcastListener | undefined;
  /** The plan new tenants get when the chosen default does not exist: `self-hosted`, else the first plan. */
  const fallbackPlanId = async (chosen: string): Promise<string> => {
    const plans = await list();
    const fallback = plans.find((p) => p.id === 'self-hosted') ?? plans[0];
    if (!fallback) throw new Error('no plan exists: the tenant migrations have not run');
    if (warnedMissingPlan !== chosen) {
      warnedMissingPlan = chosen;
      logger.warn(
        { plan: chosen, fallback: fallback.id },
        'the default plan does not exist: new accounts get the fallback',
      );
    }
    return fallback.id;
  };
  let cache: { at: number; plans: Plan[] } | undefined;
  const tenantPlans = new LRUCache<string, string>({ max: 10_000, ttl: TENANT_PLAN_CACHE_MS });

  async function list(): Promise<Plan[]> {
    if (cache && Date.now() - cache.at < CACHE_MS) return cache.plans;
    const plans = await db.em().find(PlanEntity, {}, { orderBy: { sortOrder: 'asc', id: 'asc' } });
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

  const invalidate = () => {
    cache = undefined;
    tenantPlans.clear();
  };

  return {
    list,
    get,
    /** Forgets the cached plans and tenants' plans (after an operator's change in this process). */
    invalidate,
    /**
     * Follows the operator's changes made in other processes (`plans.changed`): without it this process's copy of the
     * plans would answer `_projectPlanLimits` with a plan up to a minute old after the readers emptied theirs.
     */
    async start(): Promise<void> {
      if (!databaseUrl || listener) return;
      listener = await startBroadcastListener({ url: databaseUrl, logger });
      listener.on('plans.changed', invalidate);
      listener.onReset(invalidate);
    },
    async stop(): Promise<void> {
      await listener?.stop();
      listener = undefined;
    },
    /** The plan new tenants start on: the operator's choice (platform_settings), else TESSERA_DEFAULT_PLAN. */
    async defaultPlanId(): Promise<string> {
      const [row] = await db
        .em()
        .execute<{ value: unknown }[]>('select value from platform_settings where key = ?', [DEFAULT_PLAN_SETTING]);
      const chosen = typeof row?.value === 'string' ? row.value : config.defaultPlan;
      // A configured plan that does not exist is a mistake of the operator's: say so rather than fail sign-ups.
      return (await list()).some((p) => p.id === chosen) ? chosen : await fallbackPlanId(chosen);
    },
    /**
     * A project's plan and suspension, read fresh (the internal `_projectPlanLimits`, cached by each reader for a
     * minute and emptied by the `plans.changed` broadcast); null for an unknown project.
     */
    async ofProject(projectId: string): Promise<ProjectPlan | null> {
      const [row] = await db.em().execute<{ plan_id: string; project_suspended: boolean; tenant_suspended: boolean }[]>(
        `select t.plan_id, p.suspended_at is not null as project_suspended, t.suspended_at is not null as tenant_suspended
           from projects p join tenants t on t.id = p.tenant_id where p.id = ?`,
        [projectId],
      );
      if (!row) return null;
      // The plan row itself is read fresh too: a reader that emptied its copy on plans.changed must not get the
      // limits this process kept from before the change (its own copy may not have heard the broadcast yet).
      const plan = (await db.em().findOne(PlanEntity, { id: row.plan_id })) ?? (await get(row.plan_id));
      return {
        planId: row.plan_id,
        limits: limitsOf(plan),
        suspended: row.tenant_suspended ? 'tenant' : row.project_suspended ? 'project' : null,
      };
    },
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
