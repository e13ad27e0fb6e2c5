// Field resolvers of the object types: formatting (ISO dates), joins, and the guards on secrets.
import { AppError } from '../../../platform/errors.ts';
import type { Plan, Project, ProjectOidcClient, ProjectPublication } from '../entities/index.ts';
import type { TenantView } from '../services/accounts.ts';
import type { TenantSessionView } from '../services/account-lifecycle.ts';
import type { ResolvedOidcClient } from '../services/oidc-clients.ts';
import type { ProjectCorsView } from '../services/cors.ts';
import type { LoggedRequest } from '../services/request-log.ts';
import { assertOwner, assertReader, type TenantContext } from './context.ts';

const iso = (d: Date) => d.toISOString();

export const typeResolvers = {
  Tenant: {
    plan: async (t: TenantView, _: unknown, ctx: TenantContext) => await ctx.services.plans.get(t.planId),
    createdAt: (t: TenantView) => iso(t.createdAt),
    recoveryCodesRemaining: async (t: TenantView, _: unknown, ctx: TenantContext) =>
      t.mfaEnabled ? await ctx.services.lifecycle.recoveryCodesRemaining(t.id) : 0,
  },
  TenantSession: {
    createdAt: (s: TenantSessionView) => iso(s.createdAt),
    lastUsedAt: (s: TenantSessionView) => iso(s.lastUsedAt),
    expiresAt: (s: TenantSessionView) => iso(s.expiresAt),
  },
  Plan: {
    __resolveReference: async (ref: { id: string }, ctx: TenantContext) => {
      try {
        return await ctx.services.plans.get(ref.id);
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
        throw err;
      }
    },
    // PlanLimits reads the limit columns straight off the plan.
    limits: (plan: Plan) => plan,
  },
  Project: {
    // Used by the gateway for other subgraphs' Project references: no ownership check here, the root
    // fields check it, and the secret fields below check it again.
    __resolveReference: async (ref: { id: string }, ctx: TenantContext) => await ctx.services.projects.load(ref.id),
    apiKey: (p: Project, _: unknown, ctx: TenantContext) => {
      assertOwner(ctx, p);
      return ctx.services.projects.revealApiKey(p);
    },
    // Not a secret (web pages ship it), but a credential of the project: its owner and its own secret key read it.
    publishableKey: async (p: Project, _: unknown, ctx: TenantContext) => {
      assertReader(ctx, p);
      return await ctx.services.projects.revealPublishableKey(p);
    },
    publishableKeyPrefix: async (p: Project, _: unknown, ctx: TenantContext) => {
      if (!p.publishableKeyPrefix) await ctx.services.projects.revealPublishableKey(p);
      return p.publishableKeyPrefix;
    },
    cors: async (p: Project, _: unknown, ctx: TenantContext) => {
      assertOwner(ctx, p);
      return await ctx.services.cors.get(p.id);
    },
    createdAt: (p: Project) => iso(p.createdAt),
    updatedAt: (p: Project) => iso(p.updatedAt),
    plan: async (p: Project, _: unknown, ctx: TenantContext) => await ctx.services.plans.ofTenant(p.tenantId),
    publications: async (p: Project, _: unknown, ctx: TenantContext) => {
      assertReader(ctx, p);
      return await ctx.services.publications.list(p.id);
    },
    branding: async (p: Project, _: unknown, ctx: TenantContext) => {
      assertOwner(ctx, p);
      return await ctx.services.branding.get(p.id);
    },
    oidcClients: async (p: Project, _: unknown, ctx: TenantContext) => {
      assertOwner(ctx, p);
      return await ctx.services.oidcClients.list(p.id);
    },
  },
  LoggedRequest: {
    at: (r: LoggedRequest) => iso(r.createdAt),
  },
  ProjectCors: {
    updatedAt: (c: ProjectCorsView) => (c.updatedAt ? iso(c.updatedAt) : null),
  },
  Publication: {
    table: (r: ProjectPublication) => r.tableName,
    updatedAt: (r: ProjectPublication) => iso(r.updatedAt),
  },
  OidcClient: {
    // Reached only through owner-checked paths (Project.oidcClients and the owner's mutations).
    clientSecret: (c: ProjectOidcClient, _: unknown, ctx: TenantContext) => ctx.services.oidcClients.revealSecret(c),
    public: (c: ProjectOidcClient) => c.isPublic,
    default: (c: ProjectOidcClient) => c.isDefault,
    createdAt: (c: ProjectOidcClient) => iso(c.createdAt),
  },
  InternalOidcClient: {
    clientId: (r: ResolvedOidcClient) => r.client.clientId,
    projectId: (r: ResolvedOidcClient) => r.client.projectId,
    tenantId: (r: ResolvedOidcClient) => r.tenantId,
    public: (r: ResolvedOidcClient) => r.client.isPublic,
    name: (r: ResolvedOidcClient) => r.client.name,
    redirectUris: (r: ResolvedOidcClient) => r.client.redirectUris,
    grantTypes: (r: ResolvedOidcClient) => r.client.grantTypes,
    allowedScopes: (r: ResolvedOidcClient) => r.client.allowedScopes,
    secretValid: (r: ResolvedOidcClient) => r.secretValid,
  },
};
