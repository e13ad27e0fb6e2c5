// Executions, their step logs and statistics.
import { requireProject, type FunctionsContext as Ctx } from './context.ts';

type ListArgs = { function?: string; status?: string; trigger?: string; since?: string; until?: string; first?: number; after?: string };

export const executionQueries = {
  functionExecutions: async (_: unknown, args: ListArgs, ctx: Ctx) => await ctx.services.executions.list(requireProject(ctx).projectId, args),
  functionExecution: async (_: unknown, { id }: { id: string }, ctx: Ctx) => await ctx.services.executions.get(requireProject(ctx).projectId, id),
  functionExecutionEvents: async (_: unknown, { id }: { id: string }, ctx: Ctx) => await ctx.services.executions.events(requireProject(ctx).projectId, id),
  functionStats: async (_: unknown, args: { since?: string; until?: string }, ctx: Ctx) => await ctx.services.executions.stats(requireProject(ctx).projectId, args),
};
