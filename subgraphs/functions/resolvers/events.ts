// Outbound event subscriptions and their delivery logs (the project's API key).
import type { SubscriptionInput } from '../services/event-subscriptions.ts';
import { requireProject, type FunctionsContext as Ctx } from './context.ts';

type DeliveryArgs = { subscriptionId: string; status?: string; event?: string; first?: number; after?: string };

export const eventQueries = {
  eventSubscriptions: async (_: unknown, _a: unknown, ctx: Ctx) =>
    await ctx.services.eventSubscriptions.list(requireProject(ctx).projectId),
  eventSubscription: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.eventSubscriptions.get(requireProject(ctx).projectId, id),
  eventDeliveries: async (_: unknown, args: DeliveryArgs, ctx: Ctx) =>
    await ctx.services.eventDeliveries.list(requireProject(ctx).projectId, args.subscriptionId, args),
  eventDelivery: async (_: unknown, { subscriptionId, id }: { subscriptionId: string; id: string }, ctx: Ctx) =>
    await ctx.services.eventDeliveries.get(requireProject(ctx).projectId, subscriptionId, id),
};

export const eventMutations = {
  createEventSubscription: async (_: unknown, { input }: { input: SubscriptionInput }, ctx: Ctx) =>
    await ctx.services.eventSubscriptions.create(requireProject(ctx).projectId, input),
  updateEventSubscription: async (
    _: unknown,
    { id, input }: { id: string; input: SubscriptionInput & { id?: unknown } },
    ctx: Ctx,
  ) => {
    const { id: _ignored, ...rest } = input;
    return await ctx.services.eventSubscriptions.update(requireProject(ctx).projectId, id, rest);
  },
  deleteEventSubscription: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    await ctx.services.eventSubscriptions.remove(requireProject(ctx).projectId, id);
    return true;
  },
  rotateEventSubscriptionSecret: async (_: unknown, { id, secret }: { id: string; secret?: string | null }, ctx: Ctx) =>
    await ctx.services.eventSubscriptions.rotateSecret(requireProject(ctx).projectId, id, { secret }),
  testEventSubscription: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.eventDeliveries.sendTest(requireProject(ctx).projectId, id),
  redeliverEvent: async (_: unknown, { subscriptionId, id }: { subscriptionId: string; id: string }, ctx: Ctx) =>
    await ctx.services.eventDeliveries.redeliver(requireProject(ctx).projectId, subscriptionId, id),
};
