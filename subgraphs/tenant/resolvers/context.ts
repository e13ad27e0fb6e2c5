// The resolver context of the tenant subgraph, and who may do what.
import { errors } from '../../../platform/errors.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { Project } from '../entities/index.ts';
import type { TenantServices } from '../services/index.ts';

export type TenantContext = SubgraphContext<TenantServices>;

/** The signed-in tenant; UNAUTHENTICATED without a credential, FORBIDDEN for any other kind of credential. */
export function requireTenant(ctx: TenantContext): { tenantId: string; sessionId: string } {
  const p = ctx.principal;
  if (p.kind === 'tenant') return { tenantId: p.tenantId, sessionId: p.sessionId };
  if (p.kind === 'anonymous')
    throw errors.unauthenticated('Sign in as a tenant (Authorization: Bearer <access_token>)');
  throw errors.forbidden('Only a tenant access token may manage the account and its projects');
}

/** The calling project's API key; UNAUTHENTICATED without a credential, FORBIDDEN for any other kind. */
export function requireProject(ctx: TenantContext): { projectId: string; tenantId: string } {
  const p = ctx.principal;
  if (p.kind === 'project') return { projectId: p.projectId, tenantId: p.tenantId };
  if (p.kind === 'anonymous') throw errors.unauthenticated('Send the project API key (X-Api-Key)');
  throw errors.forbidden('Only the project API key may manage its publications here');
}

/** Only the router itself. */
export function requireInternal(ctx: TenantContext): void {
  if (ctx.principal.kind !== 'internal') throw errors.forbidden('Internal operation');
}

/** Secrets of a project (API key, client secrets): the owning tenant and the router only. */
export function assertOwner(ctx: TenantContext, project: Pick<Project, 'tenantId'>): void {
  const p = ctx.principal;
  if (p.kind === 'internal' || (p.kind === 'tenant' && p.tenantId === project.tenantId)) return;
  throw errors.forbidden('Only the owning tenant may read this');
}

/** Non-secret settings of a project: also its own API key. */
export function assertReader(ctx: TenantContext, project: Pick<Project, 'id' | 'tenantId'>): void {
  const p = ctx.principal;
  if (p.kind === 'project' && p.projectId === project.id) return;
  assertOwner(ctx, project);
}
