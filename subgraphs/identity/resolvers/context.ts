// The resolver context of the identity subgraph, and who may do what.
import { errors } from '../../../platform/errors.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { IdentityServices } from '../services/index.ts';

export type IdentityContext = SubgraphContext<IdentityServices>;

/** The signed-in end-user. */
export function requireUser(ctx: IdentityContext): { projectId: string; userId: string; sessionId?: string } {
  const p = ctx.principal;
  if (p.kind === 'user') return { projectId: p.projectId, userId: p.userId, sessionId: p.sessionId };
  if (p.kind === 'anonymous')
    throw errors.unauthenticated('Sign in as an end-user (Authorization: Bearer <access_token> from /token)');
  throw errors.forbidden('Only an end-user access token may do this');
}

/** A project API key (or a client_credentials token, which acts for the project). */
export function requireProject(ctx: IdentityContext): { projectId: string } {
  const p = ctx.principal;
  if (p.kind === 'project') return { projectId: p.projectId };
  if (p.kind === 'anonymous') throw errors.unauthenticated('The project API key is required (X-Api-Key)');
  throw errors.forbidden('Only the project API key may do this');
}

/**
 * What a visitor of the project's web page may start (sign-up, password reset, e-mail verification): the project
 * API key or its publishable key.
 */
export function requireProjectOrVisitor(ctx: IdentityContext): { projectId: string } {
  const p = ctx.principal;
  if (p.kind === 'project' || p.kind === 'publishable') return { projectId: p.projectId };
  if (p.kind === 'anonymous')
    throw errors.unauthenticated('The project API key or its publishable key is required (X-Api-Key)');
  throw errors.forbidden('Only the project API key or its publishable key may do this');
}

/** Only the router and the wire handlers of the front door. */
export function requireInternal(ctx: IdentityContext): void {
  if (ctx.principal.kind !== 'internal') throw errors.forbidden('Internal operation');
}
