// Operations only the router and the front door's wire handlers may call; hidden from the public schema.
import type { ClientFacts } from '../services/context.ts';
import { checkAuthorizationRequest, type AuthorizeInput, type GrantInput } from '../services/grants.ts';
import { oauthError } from '../services/oauth-errors.ts';
import type { IdentityContext } from './context.ts';
import { requireInternal } from './context.ts';

export const internalQueries = {
  _authenticateUser: async (_: unknown, { token }: { token: string }, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.tokens.authenticate(token);
  },
  _introspectToken: async (_: unknown, { token, projectId }: { token: string; projectId: string }, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.tokens.introspect(token, projectId);
  },
  _checkAuthorizationRequest: async (_: unknown, args: { client: ClientFacts; input: AuthorizeInput }, ctx: IdentityContext) => {
    requireInternal(ctx);
    return checkAuthorizationRequest(args.client, args.input);
  },
  _identitySigningKeys: async (_: unknown, __: unknown, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.keys.all();
  },
};

export const internalMutations = {
  _issueTokens: async (_: unknown, args: { client: ClientFacts; grant: GrantInput }, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.grants.token(args.client, args.grant, ctx.ip);
  },
  _authorize: async (_: unknown, args: { client: ClientFacts; input: AuthorizeInput }, ctx: IdentityContext) => {
    requireInternal(ctx);
    return await ctx.services.grants.authorize(args.client, args.input, ctx.ip);
  },
  _revokeToken: async (_: unknown, args: { token: string; projectId: string }, ctx: IdentityContext) => {
    requireInternal(ctx);
    await ctx.services.tokens.revoke(args.token, args.projectId);
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
