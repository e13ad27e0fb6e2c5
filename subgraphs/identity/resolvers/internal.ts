// Operations only the router and the front door's wire handlers may call; hidden from the public schema.
import { errors } from '../../../platform/errors.ts';
import type { ClientCredentials } from '../services/clients.ts';
import type { ClientFacts } from '../services/context.ts';
import { checkAuthorizationRequest, type AuthorizeInput, type GrantInput } from '../services/grants.ts';
import { oauthError } from '../services/oauth-errors.ts';
import type { IdentityContext } from './context.ts';
import { requireInternal } from './context.ts';

/** The client: authenticated here from `credentials`, or as the caller vouched for it (exactly one of the two). */
async function clientOf(
  ctx: IdentityContext,
  given: ClientFacts | null | undefined,
  credentials: ClientCredentials | null | undefined,
  allowPublic: boolean,
): Promise<ClientFacts> {
  if (given && credentials) throw errors.validation('credentials', 'give the client or its credentials, not both');
  if (credentials)
    return await ctx.services.clients.authenticate(credentials, { allowPublic, requestId: ctx.requestId });
  if (given) return given;
  throw errors.validation('credentials', 'give the client or its credentials');
}

/** The project of the client: the caller's `projectId`, or that of the client authenticated from `credentials`. */
async function projectOf(
  ctx: IdentityContext,
  projectId: string | null | undefined,
  credentials: ClientCredentials | null | undefined,
  allowPublic: boolean,
): Promise<string> {
  if (projectId && credentials)
    throw errors.validation('credentials', 'give the project or the client credentials, not both');
  if (credentials)
    return (await ctx.services.clients.authenticate(credentials, { allowPublic, requestId: ctx.requestId })).projectId;
  if (projectId) return projectId;
  throw errors.validation('credentials', 'give the project or the client credentials');
}

export const internalQueries = {
  _authenticateUser: async (_: unknown, { token }: { token: string }, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.tokens.authenticate(token);
  },
  _introspectToken: async (
    _: unknown,
    args: { token: string; projectId?: string | null; credentials?: ClientCredentials | null },
    ctx: IdentityContext,
  ) => {
    requireInternal(ctx);
    // Introspection is for confidential clients only (resource servers).
    const projectId = await projectOf(ctx, args.projectId, args.credentials, false);
    if (!args.token) throw oauthError('invalid_request', 'token is required');
    return await ctx.services.tokens.introspect(args.token, projectId);
  },
  _checkAuthorizationRequest: async (
    _: unknown,
    args: { client: ClientFacts; input: AuthorizeInput },
    ctx: IdentityContext,
  ) => {
    requireInternal(ctx);
    return checkAuthorizationRequest(args.client, args.input);
  },
  _identitySigningKeys: async (_: unknown, __: unknown, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.keys.all();
  },
};

export const internalMutations = {
  _issueTokens: async (
    _: unknown,
    args: { client?: ClientFacts | null; credentials?: ClientCredentials | null; grant: GrantInput },
    ctx: IdentityContext,
  ) => {
    requireInternal(ctx);
    return await ctx.services.grants.token(
      await clientOf(ctx, args.client, args.credentials, true),
      args.grant,
      ctx.ip,
    );
  },
  _authorize: async (_: unknown, args: { client: ClientFacts; input: AuthorizeInput }, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.grants.authorize(args.client, args.input, ctx.ip);
  },
  _revokeToken: async (
    _: unknown,
    args: { token: string; projectId?: string | null; credentials?: ClientCredentials | null },
    ctx: IdentityContext,
  ) => {
    requireInternal(ctx);
    const projectId = await projectOf(ctx, args.projectId, args.credentials, true);
    if (!args.token) throw oauthError('invalid_request', 'token is required');
    await ctx.services.tokens.revoke(args.token, projectId);
    return true;
  },
  _endSession: async (_: unknown, { idTokenHint }: { idTokenHint: string }, ctx: IdentityContext) => {
    requireInternal(ctx);
    let hint: Awaited<ReturnType<typeof ctx.services.tokens.verifyIdTokenHint>>;
    try {
      hint = await ctx.services.tokens.verifyIdTokenHint(idTokenHint);
    } catch {
      throw oauthError('invalid_request', 'id_token_hint is not an ID token of this provider');
    }
    if (hint.sid) await ctx.services.tokens.revokeSession(hint.sid, 'logout');
    return { clientId: hint.aud, revoked: Boolean(hint.sid) };
  },
  _rotateIdentitySigningKey: async (_: unknown, __: unknown, ctx: IdentityContext) => {
    requireInternal(ctx);
    const kid = await ctx.services.keys.rotate();
    return (await ctx.services.keys.all()).find((k) => k.kid === kid);
  },
  _retireIdentitySigningKey: async (_: unknown, { kid }: { kid: string }, ctx: IdentityContext) => {
    requireInternal(ctx);
    await ctx.services.keys.retire(kid);
    return true;
  },
};
