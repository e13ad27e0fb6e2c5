// Functions, secrets and invocations.
import type { FunctionInput } from '../services/definitions.ts';
import { sha256Hex } from '../../../platform/crypto.ts';
import { requireProject, type FunctionsContext as Ctx } from './context.ts';

type InvokeArgs = {
  name: string;
  input?: unknown;
  async?: boolean | null;
  dryRun?: boolean | null;
  idempotencyKey?: string | null;
};

/**
 * The secret API key runs any function; the publishable key and end-users only functions marked public. Each caller's
 * Idempotency-Keys are its own: an end-user's by its id, a visitor's (publishable key) by its client address (hashed),
 * so two visitors sending the same key and body never get each other's stored answer.
 */
async function invokeAs(ctx: Ctx, args: InvokeArgs) {
  const p = ctx.principal;
  if (p.kind === 'user') return await ctx.services.invoke.invoke(p.projectId, args, 'user', `user:${p.userId}`);
  if (p.kind === 'publishable') {
    const visitor = ctx.ip ? `publishable:${sha256Hex(ctx.ip).slice(0, 32)}` : 'publishable';
    return await ctx.services.invoke.invoke(p.projectId, args, 'publishable', visitor);
  }
  return await ctx.services.invoke.invoke(requireProject(ctx).projectId, args);
}

export const functionQueries = {
  edgeFunctions: async (_: unknown, args: { first?: number; after?: string }, ctx: Ctx) =>
    await ctx.services.functions.list(requireProject(ctx).projectId, args),
  edgeFunction: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.functions.get(requireProject(ctx).projectId, id),
  functionSecrets: async (_: unknown, _a: unknown, ctx: Ctx) =>
    await ctx.services.secrets.list(requireProject(ctx).projectId),
};

export const functionMutations = {
  createEdgeFunction: async (_: unknown, { input }: { input: FunctionInput }, ctx: Ctx) =>
    await ctx.services.functions.create(requireProject(ctx), input),
  updateEdgeFunction: async (_: unknown, { id, input }: { id: string; input: FunctionInput }, ctx: Ctx) =>
    await ctx.services.functions.update(requireProject(ctx).projectId, id, input),
  deleteEdgeFunction: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    const { projectId } = requireProject(ctx);
    const crons = (await ctx.services.cron.list(projectId)).filter((c) => c.functionId === id);
    await ctx.services.functions.remove(projectId, id);
    await ctx.services.hooks.changed(projectId); // its hooks went with it
    for (const c of crons)
      await ctx.services.scheduler.agenda.cancel({ name: 'functions.cron.tick', data: { cronId: c.id } });
    return true;
  },
  invokeEdgeFunction: async (_: unknown, args: InvokeArgs, ctx: Ctx) => await invokeAs(ctx, args),
  setFunctionSecret: async (_: unknown, { input }: { input: { name: string; value: string } }, ctx: Ctx) =>
    await ctx.services.secrets.set(requireProject(ctx).projectId, input),
  deleteFunctionSecret: async (_: unknown, { name }: { name: string }, ctx: Ctx) => {
    await ctx.services.secrets.remove(requireProject(ctx).projectId, name);
    return true;
  },
};
