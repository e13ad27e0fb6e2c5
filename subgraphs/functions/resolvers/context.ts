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
