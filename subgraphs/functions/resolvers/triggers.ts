// Webhook receivers (and the internal operation of the public receiver) and cron jobs.
import { requireInternal, requireProject, type FunctionsContext as Ctx } from './context.ts';
import type { InboundRequest } from '../services/webhooks.ts';

type CronInput = {
  name?: string;
  schedule?: string;
  timezone?: string;
  function?: string;
  input?: unknown;
  enabled?: boolean;
};

export const triggerQueries = {
  webhookReceivers: async (_: unknown, _a: unknown, ctx: Ctx) =>
    await ctx.services.webhooks.list(requireProject(ctx).projectId),
  cronJobs: async (_: unknown, _a: unknown, ctx: Ctx) => await ctx.services.cron.list(requireProject(ctx).projectId),
};

export const triggerMutations = {
  createWebhookReceiver: async (
    _: unknown,
    { input }: { input: { slug?: string; function: string; description?: string } },
    ctx: Ctx,
  ) => await ctx.services.webhooks.create(requireProject(ctx).projectId, input),
  deleteWebhookReceiver: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    await ctx.services.webhooks.remove(requireProject(ctx).projectId, id);
    return true;
  },
  createCronJob: async (_: unknown, { input }: { input: CronInput }, ctx: Ctx) =>
    await ctx.services.cron.create(requireProject(ctx).projectId, input),
  updateCronJob: async (_: unknown, { id, input }: { id: string; input: CronInput }, ctx: Ctx) =>
    await ctx.services.cron.update(requireProject(ctx).projectId, id, input),
  deleteCronJob: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    await ctx.services.cron.remove(requireProject(ctx).projectId, id);
    return true;
  },
  /** The public receiver vouches for the request (internal principal); the function runs as its own project. */
  _receiveWebhook: async (
    _: unknown,
    args: { projectId: string; slug: string; request: InboundRequest & { headers: unknown; query: unknown } },
    ctx: Ctx,
  ) => {
    requireInternal(ctx);
    const { request } = args;
    const headers =
      request.headers && typeof request.headers === 'object' ? (request.headers as Record<string, string>) : {};
    const query = request.query && typeof request.query === 'object' ? (request.query as Record<string, unknown>) : {};
    return await ctx.services.webhooks.receive(args.projectId, args.slug, { ...request, headers, query });
  },
};
