// E-mail templates and SMTP settings (and the internal seam for the identity domain).
import { requireInternal, requireProject, type FunctionsContext as Ctx } from './context.ts';
import { isUuid } from '../../../platform/ids.ts';

type TemplateInput = Record<string, unknown>;

export const emailQueries = {
  emailTemplates: async (_: unknown, _a: unknown, ctx: Ctx) =>
    await ctx.services.email.listTemplates(requireProject(ctx).projectId),
  emailTemplate: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.email.getTemplate(requireProject(ctx).projectId, id),
  emailConfig: async (_: unknown, _a: unknown, ctx: Ctx) =>
    await ctx.services.email.getConfig(requireProject(ctx).projectId),
  _emailConfig: async (_: unknown, { projectId }: { projectId: string }, ctx: Ctx) => {
    requireInternal(ctx);
    return isUuid(projectId) ? await ctx.services.email.settings(projectId) : null;
  },
};

export const emailMutations = {
  createEmailTemplate: async (_: unknown, { input }: { input: TemplateInput }, ctx: Ctx) =>
    await ctx.services.email.createTemplate(requireProject(ctx).projectId, input),
  updateEmailTemplate: async (_: unknown, { id, input }: { id: string; input: TemplateInput }, ctx: Ctx) => {
    const { id: _ignored, ...rest } = input;
    return await ctx.services.email.updateTemplate(requireProject(ctx).projectId, id, rest);
  },
  deleteEmailTemplate: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    await ctx.services.email.deleteTemplate(requireProject(ctx).projectId, id);
    return true;
  },
  previewEmailTemplate: async (_: unknown, { id, variables }: { id: string; variables?: unknown }, ctx: Ctx) =>
    await ctx.services.email.preview(requireProject(ctx).projectId, id, variables),
  setEmailConfig: async (_: unknown, { input }: { input: Record<string, unknown> }, ctx: Ctx) =>
    await ctx.services.email.setConfig(requireProject(ctx).projectId, input),
  deleteEmailConfig: async (_: unknown, _a: unknown, ctx: Ctx) => {
    await ctx.services.email.deleteConfig(requireProject(ctx).projectId);
    return true;
  },
  testEmailConfig: async (_: unknown, { to }: { to: string }, ctx: Ctx) =>
    await ctx.services.email.testConfig(requireProject(ctx).projectId, to),
};
