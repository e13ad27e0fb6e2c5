// The operator's admin API: thin resolvers over the operator services. Who may run these is decided once, by every
// executor (platform/admin-scopes.ts OPERATOR_FIELDS); `requireOperator` names the acting operator for the audit log.
import { requireOperatorPrincipal } from '../../../platform/admin-scopes.ts';
import { errors } from '../../../platform/errors.ts';
import { JSONScalar } from '../../../platform/graphql-scalars.ts';
import type { TenantContext } from './context.ts';
import type { OperatorRef, AuditEntry } from '../services/operator-audit.ts';
import type { OperatorPlanView, PlanInput } from '../services/operator-plans.ts';
import type { OperatorTenantView } from '../services/operator.ts';
import type { OperatorKeyView } from '../services/operator-keys.ts';
import type { Project } from '../entities/index.ts';

/** The operator running the call. */
export function requireOperator(ctx: TenantContext): OperatorRef {
  const p = ctx.principal;
  if (p.kind === 'operator') return { operator: p.operator, keyId: p.keyId };
  if (p.kind === 'anonymous') throw errors.unauthenticated('The admin API needs an operator key');
  throw errors.forbidden('The admin API needs an operator key');
}

type Id = { id: string };
type Page = { first?: number | null; after?: string | null };
const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export const operatorQueries = {
  adminPlans: async (_: unknown, __: unknown, ctx: TenantContext) => {
    requireOperator(ctx);
    return await ctx.services.operatorPlans.list();
  },
  adminSettings: async (_: unknown, __: unknown, ctx: TenantContext) => {
    requireOperator(ctx);
    return await ctx.services.operatorPlans.settings();
  },
  adminTenants: async (_: unknown, args: Page & { search?: string | null }, ctx: TenantContext) => {
    requireOperator(ctx);
    return await ctx.services.operator.tenants(args);
  },
  adminTenant: async (_: unknown, { id }: Id, ctx: TenantContext) => {
    requireOperator(ctx);
    return await ctx.services.operator.tenant(id);
  },
  adminProjects: async (
    _: unknown,
    args: Page & { search?: string | null; tenantId?: string | null },
    ctx: TenantContext,
  ) => {
    requireOperator(ctx);
    return await ctx.services.operator.projects(args);
  },
  adminProject: async (_: unknown, { id }: Id, ctx: TenantContext) => {
    requireOperator(ctx);
    return await ctx.services.operator.project(id);
  },
  operatorAudit: async (
    _: unknown,
    args: Page & { action?: string | null; targetId?: string | null },
    ctx: TenantContext,
  ) => {
    requireOperator(ctx);
    return await ctx.services.operatorAudit.list(args);
  },
  operatorKeys: async (_: unknown, __: unknown, ctx: TenantContext) => {
    requireOperator(ctx);
    return await ctx.services.operatorKeys.list();
  },
};

export const operatorMutations = {
  createPlan: async (_: unknown, { input }: { input: PlanInput }, ctx: TenantContext) =>
    await ctx.services.operatorPlans.create(requireOperator(ctx), input),
  updatePlan: async (_: unknown, { id, input }: Id & { input: PlanInput }, ctx: TenantContext) =>
    await ctx.services.operatorPlans.update(requireOperator(ctx), id, input),
  deletePlan: async (_: unknown, { id }: Id, ctx: TenantContext) => {
    await ctx.services.operatorPlans.remove(requireOperator(ctx), id);
    return true;
  },
  setDefaultPlan: async (_: unknown, { planId }: { planId: string }, ctx: TenantContext) =>
    await ctx.services.operatorPlans.setDefaultPlan(requireOperator(ctx), planId),
  setTenantPlan: async (_: unknown, { id, planId }: Id & { planId: string }, ctx: TenantContext) =>
    await ctx.services.operator.setTenantPlan(requireOperator(ctx), id, planId),
  suspendTenant: async (_: unknown, { id, reason }: Id & { reason?: string | null }, ctx: TenantContext) =>
    await ctx.services.operator.suspendTenant(requireOperator(ctx), id, reason),
  resumeTenant: async (_: unknown, { id }: Id, ctx: TenantContext) =>
    await ctx.services.operator.resumeTenant(requireOperator(ctx), id),
  suspendProject: async (_: unknown, { id, reason }: Id & { reason?: string | null }, ctx: TenantContext) =>
    await ctx.services.operator.suspendProject(requireOperator(ctx), id, reason),
  resumeProject: async (_: unknown, { id }: Id, ctx: TenantContext) =>
    await ctx.services.operator.resumeProject(requireOperator(ctx), id),
  createOperatorKey: async (_: unknown, { input }: { input: { name: string } }, ctx: TenantContext) =>
    await ctx.services.operatorKeys.create(requireOperator(ctx), input),
  revokeOperatorKey: async (_: unknown, { id }: Id, ctx: TenantContext) => {
    await ctx.services.operatorKeys.revoke(requireOperator(ctx), id);
    return true;
  },
};

export const operatorTypes = {
  JSON: JSONScalar,
  OperatorPlan: {
    id: (v: OperatorPlanView) => v.plan.id,
    name: (v: OperatorPlanView) => v.plan.name,
    description: (v: OperatorPlanView) => v.plan.description,
    priceCentsPerMonth: (v: OperatorPlanView) => v.plan.priceCentsPerMonth ?? null,
    sortOrder: (v: OperatorPlanView) => v.plan.sortOrder,
    limits: (v: OperatorPlanView) => v.plan,
    tenantCount: (v: OperatorPlanView) => v.tenantCount,
    default: (v: OperatorPlanView) => v.isDefault,
    createdAt: (v: OperatorPlanView) => iso(v.plan.createdAt),
    updatedAt: (v: OperatorPlanView) => iso(v.plan.updatedAt),
  },
  OperatorTenant: {
    // The router comes back for an account only with an operator's query plan (the totals' `@requires`).
    __resolveReference: async (ref: Id, ctx: TenantContext) => {
      requireOperatorPrincipal(ctx.principal);
      return await ctx.services.operator.tenant(ref.id);
    },
    plan: async (t: OperatorTenantView, _: unknown, ctx: TenantContext) => await ctx.services.plans.get(t.planId),
    suspendedAt: (t: OperatorTenantView) => iso(t.suspendedAt),
    createdAt: (t: OperatorTenantView) => iso(t.createdAt),
  },
  OperatorAuditEntry: {
    at: (e: AuditEntry) => iso(e.at),
  },
  OperatorKey: {
    createdAt: (k: OperatorKeyView) => iso(k.createdAt),
    lastUsedAt: (k: OperatorKeyView) => iso(k.lastUsedAt),
    revokedAt: (k: OperatorKeyView) => iso(k.revokedAt),
  },
  NewOperatorKey: {
    createdAt: (k: OperatorKeyView) => iso(k.createdAt),
  },
};

/** Fields the operator adds to `Project` (the owner and the operator read them). */
export const operatorProjectFields = {
  suspendedAt: (p: Project) => iso(p.suspendedAt),
  owner: async (p: Project, _: unknown, ctx: TenantContext) => {
    const who = ctx.principal;
    if (who.kind !== 'operator' && who.kind !== 'internal' && !(who.kind === 'tenant' && who.tenantId === p.tenantId))
      throw errors.forbidden('Only the owning tenant and the operator may read this');
    const tenant = await ctx.services.accounts.get(p.tenantId);
    return tenant ? { id: tenant.id, email: tenant.email } : null;
  },
};
