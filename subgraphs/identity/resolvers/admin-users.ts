// The end-user admin API. Who may call it is the executor's business (platform/admin-scopes.ts: the secret API
// key, or a client token granted `admin:users`); here only the project it acts on.
import type { IdentityContext } from './context.ts';
import { requireProject } from './context.ts';
import type { AdminNewUser } from '../services/admin-users.ts';

type Id = { id: string };

export const adminUserQueries = {
  projectEndUsers: async (
    _: unknown,
    args: { search?: string; role?: string; disabled?: boolean; first?: number; after?: string },
    ctx: IdentityContext,
  ) => await ctx.services.adminUsers.list(requireProject(ctx).projectId, args),
  projectEndUser: async (_: unknown, { id }: Id, ctx: IdentityContext) =>
    await ctx.services.adminUsers.get(requireProject(ctx).projectId, id),
};

export const adminUserMutations = {
  createProjectEndUser: async (_: unknown, { input }: { input: AdminNewUser }, ctx: IdentityContext) =>
    await ctx.services.adminUsers.create(requireProject(ctx).projectId, input),
  resendProjectEndUserInvitation: async (_: unknown, { id }: Id, ctx: IdentityContext) => {
    await ctx.services.adminUsers.resendInvitation(requireProject(ctx).projectId, id);
    return true;
  },
  inviteProjectEndUser: async (_: unknown, { input }: { input: AdminNewUser }, ctx: IdentityContext) =>
    await ctx.services.adminUsers.invite(requireProject(ctx).projectId, input),
  updateProjectEndUser: async (
    _: unknown,
    { id, input }: Id & { input: { appMetadata?: unknown; roles?: unknown } },
    ctx: IdentityContext,
  ) => await ctx.services.adminUsers.update(requireProject(ctx).projectId, id, input),
  disableProjectEndUser: async (_: unknown, { id }: Id, ctx: IdentityContext) =>
    await ctx.services.adminUsers.disable(requireProject(ctx).projectId, id),
  enableProjectEndUser: async (_: unknown, { id }: Id, ctx: IdentityContext) =>
    await ctx.services.adminUsers.enable(requireProject(ctx).projectId, id),
  deleteProjectEndUser: async (_: unknown, { id }: Id, ctx: IdentityContext) => {
    await ctx.services.adminUsers.remove(requireProject(ctx).projectId, id);
    return true;
  },
  revokeProjectEndUserSessions: async (_: unknown, { id }: Id, ctx: IdentityContext) =>
    await ctx.services.adminUsers.revokeSessions(requireProject(ctx).projectId, id),
  resetProjectEndUserMfa: async (_: unknown, { id }: Id, ctx: IdentityContext) =>
    await ctx.services.adminUsers.resetMfa(requireProject(ctx).projectId, id),
};
