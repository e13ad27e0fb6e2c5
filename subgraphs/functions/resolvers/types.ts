// Field resolvers of the object types: ISO dates, names of referenced functions, computed fields.
import type { CronJob } from '../services/cron.ts';
import type { DeliveryAttempt, EventDelivery } from '../services/event-deliveries.ts';
import type { EventSubscription } from '../services/event-subscriptions.ts';
import type { Execution, ExecutionEvent } from '../services/executions.ts';
import type { Hook } from '../services/hooks.ts';
import type { WebhookReceiver } from '../services/webhooks.ts';
import { requireOperatorPrincipal } from '../../../platform/admin-scopes.ts';
import { usageReader, type FunctionsContext as Ctx } from './context.ts';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const dates = {
  createdAt: (o: { createdAt: Date }) => iso(o.createdAt),
  updatedAt: (o: { updatedAt: Date }) => iso(o.updatedAt),
};

export const typeResolvers = {
  EdgeFunction: dates,
  FunctionSecret: dates,
  EmailTemplate: dates,
  EmailConfig: { updatedAt: (o: { updatedAt: Date }) => iso(o.updatedAt) },
  WebhookReceiver: {
    function: (w: WebhookReceiver) => w.functionName,
    url: (w: WebhookReceiver, _: unknown, ctx: Ctx) =>
      `${ctx.services.locations.webhookBaseUrl(w.projectId)}/${w.slug}`,
    createdAt: (w: WebhookReceiver) => iso(w.createdAt),
  },
  FunctionHook: {
    function: (h: Hook) => h.functionName,
    createdAt: (h: Hook) => iso(h.createdAt),
  },
  CronJob: {
    ...dates,
    function: (c: CronJob) => c.functionName,
    nextRuns: (c: CronJob, _: unknown, ctx: Ctx) => ctx.services.cron.nextRuns(c).map((d) => d.toISOString()),
    lastRunAt: (c: CronJob) => iso(c.lastRunAt),
  },
  FunctionExecution: {
    function: (e: Execution) => e.functionName,
    createdAt: (e: Execution) => iso(e.createdAt),
    startedAt: (e: Execution) => iso(e.startedAt),
    finishedAt: (e: Execution) => iso(e.finishedAt),
  },
  FunctionExecutionEvent: { at: (e: ExecutionEvent) => iso(e.at) },
  EventSubscription: {
    createdAt: (s: EventSubscription) => iso(s.createdAt),
    updatedAt: (s: EventSubscription) => iso(s.updatedAt),
    secret: (s: EventSubscription) => s.secret ?? null,
  },
  EventDelivery: {
    nextAttemptAt: (d: EventDelivery) => iso(d.nextAttemptAt),
    lastAttemptAt: (d: EventDelivery) => iso(d.lastAttemptAt),
    createdAt: (d: EventDelivery) => iso(d.createdAt),
    deliveredAt: (d: EventDelivery) => iso(d.deliveredAt),
    attemptLog: async (d: EventDelivery, _: unknown, ctx: Ctx) =>
      d.attemptLog ?? (await ctx.services.eventDeliveries.attemptsOf(d.id)),
  },
  EventDeliveryAttempt: { at: (a: DeliveryAttempt) => iso(a.at) },
  FunctionStats: { since: (s: { since: Date }) => iso(s.since), until: (s: { until: Date }) => iso(s.until) },
  Project: {
    __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
    webhookBaseUrl: (p: { id: string }, _a: unknown, ctx: Ctx) => ctx.services.locations.webhookBaseUrl(p.id),
    functionsApiUrl: (_p: { id: string }, _a: unknown, ctx: Ctx) => ctx.services.locations.apiUrl(),
    functionUsage: async (p: { id: string }, _a: unknown, ctx: Ctx) =>
      await ctx.services.runLimits.usage(usageReader(ctx, p.id)),
  },
  // An operator's tenant row: all the account's projects together (the router hands over their ids).
  OperatorTenant: {
    functionUsage: async (t: { projectIds?: string[] | null }, _a: unknown, ctx: Ctx) => {
      requireOperatorPrincipal(ctx.principal);
      return await ctx.services.runLimits.usageTotals(t.projectIds ?? []);
    },
  },
};
