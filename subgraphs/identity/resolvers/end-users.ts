// End-user operations: registration, MFA, passwords, e-mail verification, logout.
import type { IdentityContext } from './context.ts';
import { requireProjectOrVisitor, requireUser } from './context.ts';
import { errors } from '../../../platform/errors.ts';
import { claimsOf } from '../services/users.ts';

export const endUserQueries = {
  endUser: async (_: unknown, __: unknown, ctx: IdentityContext) =>
    await ctx.services.users.get(requireUser(ctx).userId),
  userInfo: async (_: unknown, __: unknown, ctx: IdentityContext) => {
    const p = ctx.principal;
    const user = await ctx.services.users.get(requireUser(ctx).userId);
    return claimsOf(user, p.kind === 'user' ? p.scopes : []);
  },
  identitySigningKeys: async (_: unknown, __: unknown, ctx: IdentityContext) => await ctx.services.keys.published(),
};

export const endUserMutations = {
  registerEndUser: async (_: unknown, { input }: { input: Record<string, unknown> }, ctx: IdentityContext) =>
    await ctx.services.users.register(requireProjectOrVisitor(ctx).projectId, input, ctx.ip),
  endUserMfaEnroll: async (_: unknown, __: unknown, ctx: IdentityContext) =>
    await ctx.services.mfa.enroll(requireUser(ctx).userId),
  endUserMfaVerify: async (_: unknown, { code }: { code: string }, ctx: IdentityContext) =>
    await ctx.services.mfa.verify(requireUser(ctx).userId, code),
  endUserMfaDisable: async (_: unknown, { code }: { code: string }, ctx: IdentityContext) =>
    await ctx.services.mfa.disable(requireUser(ctx).userId, code),
  changeEndUserPassword: async (
    _: unknown,
    { input }: { input: { currentPassword: string; newPassword: string } },
    ctx: IdentityContext,
  ) => {
    const { userId, sessionId } = requireUser(ctx);
    await ctx.services.recovery.changePassword(userId, sessionId, input.currentPassword, input.newPassword, ctx.ip);
    return true;
  },
  requestEndUserPasswordReset: async (_: unknown, { email }: { email: string }, ctx: IdentityContext) => {
    await ctx.services.recovery.requestPasswordReset(requireProjectOrVisitor(ctx).projectId, email, ctx.ip);
    return true;
  },
  confirmEndUserPasswordReset: async (
    _: unknown,
    { input }: { input: { token: string; newPassword: string } },
    ctx: IdentityContext,
  ) => {
    await ctx.services.recovery.confirmPasswordReset(input.token, input.newPassword);
    return true;
  },
  requestEndUserEmailVerification: async (_: unknown, { email }: { email?: string | null }, ctx: IdentityContext) => {
    if (ctx.principal.kind === 'user') {
      if (email !== undefined && email !== null)
        throw errors.validation('email', 'must be omitted with an end-user token: the mail goes to the signed-in user');
      await ctx.services.recovery.requestEmailVerification(ctx.principal.userId, ctx.ip);
      return true;
    }
    const { projectId } = requireProjectOrVisitor(ctx);
    if (email === undefined || email === null) throw errors.validation('email', 'is required with a project key');
    await ctx.services.recovery.requestEmailVerificationByEmail(projectId, email, ctx.ip);
    return true;
  },
  confirmEndUserEmailVerification: async (_: unknown, { token }: { token: string }, ctx: IdentityContext) => {
    await ctx.services.recovery.confirmEmailVerification(token);
    return true;
  },
  endUserLogout: async (_: unknown, __: unknown, ctx: IdentityContext) => {
    const { sessionId } = requireUser(ctx);
    if (sessionId) await ctx.services.tokens.revokeSession(sessionId, 'logout');
    return true;
  },
};
