// Project, publication and OIDC client operations.
import { errors } from '../../../platform/errors.ts';
import type { TenantContext } from './context.ts';
import { requireProject, requireTenant } from './context.ts';
import type { RequestLogFilter } from '../services/request-log.ts';
import type { ClientInput } from '../services/oidc-clients.ts';

type Id = { id: string };

export const projectQueries = {
  projects: async (_: unknown, args: { first?: number | null; after?: string | null }, ctx: TenantContext) =>
    await ctx.services.projects.list(requireTenant(ctx).tenantId, args),
  /** The owning tenant, or the project's own API key, may read a project. */
  project: async (_: unknown, { id }: Id, ctx: TenantContext) => {
    const p = ctx.principal;
    if (p.kind === 'project') {
      if (p.projectId !== id) throw errors.notFound('project', id.slice(0, 100));
      const project = await ctx.services.projects.load(id);
      if (!project) throw errors.notFound('project', id);
      return project;
    }
    return await ctx.services.projects.getOwned(requireTenant(ctx).tenantId, id);
  },
  /** The owning tenant's view of its project's traffic; not the project's keys (a leaked key must not read who else calls). */
  projectRequests: async (_: unknown, args: RequestLogFilter & { projectId: string }, ctx: TenantContext) => {
    const project = await ctx.services.projects.getOwned(requireTenant(ctx).tenantId, args.projectId);
    return await ctx.services.requestLog.list(project.id, args);
  },
  /** The API key's own project: the same publications as the tenant routes (one source of truth). */
  projectPublications: async (_: unknown, _args: unknown, ctx: TenantContext) =>
    await ctx.services.publications.list(requireProject(ctx).projectId),
};

export const projectMutations = {
  createProject: async (_: unknown, { input }: { input: { name: string } }, ctx: TenantContext) =>
    await ctx.services.projects.create(requireTenant(ctx).tenantId, input),
  renameProject: async (_: unknown, { id, input }: Id & { input: { name: string } }, ctx: TenantContext) =>
    await ctx.services.projects.rename(requireTenant(ctx).tenantId, id, input),
  deleteProject: async (_: unknown, { id }: Id, ctx: TenantContext) => {
    await ctx.services.projects.remove(requireTenant(ctx).tenantId, id);
    return true;
  },
  regenerateProjectKey: async (_: unknown, { id }: Id, ctx: TenantContext) =>
    await ctx.services.projects.regenerateKey(requireTenant(ctx).tenantId, id),
  regeneratePublishableKey: async (_: unknown, { id }: Id, ctx: TenantContext) =>
    await ctx.services.projects.regeneratePublishableKey(requireTenant(ctx).tenantId, id),
  setProjectCors: async (_: unknown, args: { projectId: string; input: Record<string, unknown> }, ctx: TenantContext) =>
    await ctx.services.cors.set(requireTenant(ctx).tenantId, args.projectId, args.input),
  setProjectBranding: async (
    _: unknown,
    args: { projectId: string; input: Record<string, unknown> },
    ctx: TenantContext,
  ) => await ctx.services.branding.set(requireTenant(ctx).tenantId, args.projectId, args.input),
  setPublication: async (
    _: unknown,
    args: { projectId: string; input: { table: string; enabled: boolean } },
    ctx: TenantContext,
  ) => await ctx.services.publications.set(requireTenant(ctx).tenantId, args.projectId, args.input, ctx.requestId),
  setProjectPublication: async (
    _: unknown,
    args: { input: { table: string; enabled: boolean } },
    ctx: TenantContext,
  ) => {
    const p = requireProject(ctx);
    return await ctx.services.publications.set(p.tenantId, p.projectId, args.input, ctx.requestId);
  },
  createOidcClient: async (_: unknown, args: { projectId: string; input: ClientInput }, ctx: TenantContext) =>
    await ctx.services.oidcClients.create(requireTenant(ctx).tenantId, args.projectId, args.input),
  updateOidcClient: async (
    _: unknown,
    args: { projectId: string; clientId: string; input: ClientInput },
    ctx: TenantContext,
  ) => await ctx.services.oidcClients.update(requireTenant(ctx).tenantId, args.projectId, args.clientId, args.input),
  deleteOidcClient: async (_: unknown, args: { projectId: string; clientId: string }, ctx: TenantContext) => {
    await ctx.services.oidcClients.remove(requireTenant(ctx).tenantId, args.projectId, args.clientId);
    return true;
  },
  rotateOidcClientSecret: async (_: unknown, args: { projectId: string; clientId: string }, ctx: TenantContext) =>
    await ctx.services.oidcClients.rotateSecret(requireTenant(ctx).tenantId, args.projectId, args.clientId),
};
