// Operations only the router (and the identity provider through it) may call; hidden from the public schema.
import { errors } from '../../../platform/errors.ts';
import type { TenantContext } from './context.ts';
import { requireInternal } from './context.ts';
import { OPERATOR_KEY_PREFIX } from '../services/operator-keys.ts';

export const internalQueries = {
  /** Exactly one of `apiKey` and `token`. */
  _authenticate: async (
    _: unknown,
    { apiKey, token }: { apiKey?: string | null; token?: string | null },
    ctx: TenantContext,
  ) => {
    requireInternal(ctx);
    if (typeof apiKey === 'string' && typeof token === 'string')
      throw errors.validation('apiKey', 'give an API key or a token, not both');
    if (typeof apiKey === 'string') {
      const { projectId, tenantId, kind } = await ctx.services.projects.authenticate(apiKey);
      return { kind, projectId, tenantId, sessionId: null };
    }
    if (typeof token === 'string' && token.startsWith(OPERATOR_KEY_PREFIX)) {
      const { operator, keyId } = await ctx.services.operatorKeys.authenticate(token);
      return { kind: 'operator', operator, keyId, tenantId: null, projectId: null, sessionId: null };
    }
    if (typeof token === 'string') {
      const { tenantId, sessionId } = await ctx.services.sessions.authenticate(token);
      return { kind: 'tenant', tenantId, sessionId, projectId: null };
    }
    throw errors.validation('apiKey', 'give an API key or a token');
  },
  _corsRules: async (_: unknown, __: unknown, ctx: TenantContext) => {
    requireInternal(ctx);
    return await ctx.services.cors.all();
  },
  /** The plan limits of a project and its suspension (every process enforcing a limit reads it); null when unknown. */
  _projectPlanLimits: async (_: unknown, { projectId }: { projectId: string }, ctx: TenantContext) => {
    requireInternal(ctx);
    return await ctx.services.plans.ofProject(projectId);
  },
  _projectBranding: async (_: unknown, { projectId }: { projectId: string }, ctx: TenantContext) => {
    requireInternal(ctx);
    return await ctx.services.branding.get(projectId);
  },
  _oidcClient: async (_: unknown, args: { clientId: string; clientSecret?: string | null }, ctx: TenantContext) => {
    requireInternal(ctx);
    return await ctx.services.oidcClients.resolve(args.clientId, args.clientSecret);
  },
};
