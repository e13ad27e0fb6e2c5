// Account, session and MFA operations.
import type { TenantContext } from './context.ts';
import { requireTenant } from './context.ts';

type Input<T> = { input: T };

export const accountQueries = {
  me: async (_: unknown, __: unknown, ctx: TenantContext) =>
    await ctx.services.accounts.get(requireTenant(ctx).tenantId),
  plans: async (_: unknown, __: unknown, ctx: TenantContext) => await ctx.services.plans.list(),
};

export const accountMutations = {
  signup: async (
    _: unknown,
    { input }: Input<{ email: string; password: string; name?: string | null }>,
    ctx: TenantContext,
  ) => ({
    tenant: await ctx.services.accounts.signup(input, ctx.ip),
  }),
  login: async (
    _: unknown,
    { input }: Input<{ email: string; password: string; totpCode?: string | null }>,
    ctx: TenantContext,
  ) => await ctx.services.sessions.login(input, ctx.ip),
  refreshSession: async (_: unknown, { refreshToken }: { refreshToken: string }, ctx: TenantContext) =>
    await ctx.services.sessions.refresh(refreshToken, ctx.ip),
  logout: async (_: unknown, __: unknown, ctx: TenantContext) => {
    const { tenantId, sessionId } = requireTenant(ctx);
    await ctx.services.sessions.logout(tenantId, sessionId);
    return true;
  },
  mfaEnroll: async (_: unknown, __: unknown, ctx: TenantContext) =>
    await ctx.services.mfa.enroll(requireTenant(ctx).tenantId),
  mfaVerify: async (_: unknown, { code }: { code: string }, ctx: TenantContext) =>
    await ctx.services.mfa.verify(requireTenant(ctx).tenantId, code),
  mfaDisable: async (_: unknown, { code }: { code: string }, ctx: TenantContext) =>
    await ctx.services.mfa.disable(requireTenant(ctx).tenantId, code),
};
