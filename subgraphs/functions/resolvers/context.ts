// The resolver context of the functions subgraph, and who may do what.
import { errors } from '../../../platform/errors.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { FunctionsServices } from '../services/index.ts';

export type FunctionsContext = SubgraphContext<FunctionsServices>;

/** The calling project's API key; UNAUTHENTICATED without a credential, FORBIDDEN for any other kind. */
export function requireProject(ctx: FunctionsContext): { projectId: string; tenantId: string } {
  const p = ctx.principal;
  if (p.kind === 'project') return { projectId: p.projectId, tenantId: p.tenantId };
  if (p.kind === 'anonymous') throw errors.unauthenticated('Send the project API key (X-Api-Key)');
  throw errors.forbidden("Only the project API key may manage the project's edge functions");
}

/** Only the router and other domains through it. */
export function requireInternal(ctx: FunctionsContext): void {
  if (ctx.principal.kind !== 'internal') throw errors.forbidden('Internal operation');
}

/**
 * Who may read a project's function usage (`Project.functionUsage`): its secret key (its own project only), the
 * operator, the platform itself, and a tenant. A tenant reaches a `Project` only through tenant management, which
 * answers its own projects alone (`_entities` is not served to callers), so a project it was handed is its own.
 * End-users, the publishable key and anonymous callers are refused.
 */
export function usageReader(ctx: FunctionsContext, projectId: string): string {
  const p = ctx.principal;
  if (p.kind === 'project') {
    if (p.scopes) throw errors.forbidden("A client's token may not read the project's function usage");
    if (p.projectId !== projectId) throw errors.notFound('project', projectId.slice(0, 100));
    return projectId;
  }
  if (p.kind === 'operator' || p.kind === 'internal' || p.kind === 'tenant') return projectId;
  if (p.kind === 'anonymous')
    throw errors.unauthenticated('Send the project API key, a tenant token or an operator key');
  throw errors.forbidden("Only the project API key, its tenant and the operator may read the project's function usage");
}
