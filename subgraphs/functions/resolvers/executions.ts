// Executions, their step logs and statistics; replay from a step and the diff of two executions.
import type { ReplayOptions } from '../services/replay.ts';
import { requireProject, type FunctionsContext as Ctx } from './context.ts';

type ListArgs = {
  function?: string;
  status?: string;
  trigger?: string;
  since?: string;
  until?: string;
  first?: number;
  after?: string;
};

export const executionQueries = {
  functionExecutions: async (_: unknown, args: ListArgs, ctx: Ctx) =>
    await ctx.services.executions.list(requireProject(ctx).projectId, args),
  functionExecution: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.executions.get(requireProject(ctx).projectId, id),
  functionExecutionEvents: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.executions.events(requireProject(ctx).projectId, id),
  functionStats: async (_: unknown, args: { since?: string; until?: string }, ctx: Ctx) =>
    await ctx.services.executions.stats(requireProject(ctx).projectId, args),
  functionExecutionDiff: async (_: unknown, { id, other }: { id: string; other: string }, ctx: Ctx) =>
    await ctx.services.replay.diff(requireProject(ctx).projectId, id, other),
};

export const executionMutations = {
  replayFunctionExecution: async (_: unknown, { id, input }: { id: string; input?: ReplayOptions | null }, ctx: Ctx) =>
    await ctx.services.replay.replay(requireProject(ctx).projectId, id, input ?? {}),
};
