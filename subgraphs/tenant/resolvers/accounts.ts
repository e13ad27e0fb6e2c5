// Account, session and MFA operations.
import type { TenantContext } from './context.ts';
import { requireTenant } from './context.ts';

type Input<T> = { input: T };

export const accountQueries = {
  me: async (_: unknown, __: unknown, ctx: TenantContext) =>
    await ctx.services.accounts.get(requireTenant(ctx).tenantId),
  plans: async (_: unknown, __: unknown, ctx: TenantContext) => await ctx.services.plans.list(),
  sessions: async (_: unknown, __: unknown, ctx: TenantContext) => {
    const { tenantId, sessionId } = requireTenant(ctx);
    return await ctx.services.lifecycle.listSessions(tenantId, sessionId);
  },
};

type Reauth = { currentPassword?: string | null; totpCode?: string | null };

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
    { input }: Input<{ email: string; password: string; totpCode?: string | null; recoveryCode?: string | null }>,
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
    await ctx.services.lifecycle.enableMfa(requireTenant(ctx).tenantId, code),
  mfaDisable: async (_: unknown, { code }: { code: string }, ctx: TenantContext) =>
    await ctx.services.lifecycle.disableMfa(requireTenant(ctx).tenantId, code),
  regenerateRecoveryCodes: async (_: unknown, { code }: { code: string }, ctx: TenantContext) => ({
    recoveryCodes: await ctx.services.lifecycle.regenerateRecoveryCodes(requireTenant(ctx).tenantId, code),
  }),
  requestPasswordReset: async (_: unknown, { email }: { email: string }, ctx: TenantContext) => {
    await ctx.services.lifecycle.requestPasswordReset(email, ctx.ip);
    return true;
  },
  resetPassword: async (_: unknown, { input }: Input<{ token: string; newPassword: string }>, ctx: TenantContext) => {
    await ctx.services.lifecycle.resetPassword(input);
    return true;
  },
  changePassword: async (_: unknown, { input }: Input<Reauth & { newPassword: string }>, ctx: TenantContext) => {
    const { tenantId, sessionId } = requireTenant(ctx);
    await ctx.services.lifecycle.changePassword(tenantId, sessionId, input, ctx.ip);
    return true;
  },
  requestEmailChange: async (_: unknown, { input }: Input<Reauth & { newEmail: string }>, ctx: TenantContext) => {
    await ctx.services.lifecycle.requestEmailChange(requireTenant(ctx).tenantId, input, ctx.ip);
    return true;
  },
  confirmEmailChange: async (_: unknown, { token }: { token: string }, ctx: TenantContext) =>
    await ctx.services.lifecycle.confirmEmailChange(token),
  revokeSession: async (_: unknown, { id }: { id: string }, ctx: TenantContext) => {
    await ctx.services.lifecycle.revokeSession(requireTenant(ctx).tenantId, id);
    return true;
  },
  revokeSessions: async (_: unknown, { keepCurrent }: { keepCurrent?: boolean | null }, ctx: TenantContext) => {
    const { tenantId, sessionId } = requireTenant(ctx);
    return await ctx.services.lifecycle.revokeSessions(tenantId, keepCurrent ? sessionId : undefined);
  },
  deleteAccount: async (_: unknown, { input }: Input<Reauth & { confirm: string }>, ctx: TenantContext) => ({
    deletedProjects: await ctx.services.lifecycle.deleteAccount(requireTenant(ctx).tenantId, input, ctx.ip),
  }),
};
