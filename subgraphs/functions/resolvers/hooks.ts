// Database hooks: CRUD with the project API key, and the internal operations the data API calls.
import { errors } from '../../../platform/errors.ts';
import { HOOK_EVENTS, type HookEvent } from '../services/hooks.ts';
import { isUuid } from '../../../platform/ids.ts';
import { requireInternal, requireProject, type FunctionsContext as Ctx } from './context.ts';

type HookInput = { table?: unknown; timing?: unknown; events?: unknown; function?: unknown };
type WriteArgs = {
  projectId: string;
  table: string;
  event: string;
  rows: unknown;
  userId?: string | null;
  depth: number;
};

/** The write the data API describes (it is trusted, but a malformed call is still a clear 400). */
function checkWrite(a: WriteArgs): { event: HookEvent; rows: unknown[] } {
  if (!isUuid(a.projectId)) throw errors.validation('projectId', 'must be a project id');
  if (!HOOK_EVENTS.includes(a.event as HookEvent)) throw errors.validation('event', 'must be insert, update or delete');
  if (!Array.isArray(a.rows)) throw errors.validation('rows', 'must be a list');
  if (!Number.isInteger(a.depth) || a.depth < 1) throw errors.validation('depth', 'must be 1 or more');
  return { event: a.event as HookEvent, rows: a.rows };
}

export const hookQueries = {
  functionHooks: async (_: unknown, _a: unknown, ctx: Ctx) =>
    await ctx.services.hooks.list(requireProject(ctx).projectId),
  _hookTriggers: async (_: unknown, { projectId }: { projectId: string }, ctx: Ctx) => {
    requireInternal(ctx);
    return await ctx.services.hooks.triggers(projectId);
  },
};

export const hookMutations = {
  createFunctionHook: async (_: unknown, { input }: { input: HookInput }, ctx: Ctx) =>
    await ctx.services.hooks.create({ ...requireProject(ctx), requestId: ctx.requestId }, input),
  deleteFunctionHook: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    await ctx.services.hooks.remove(requireProject(ctx).projectId, id);
    return true;
  },
  _runBeforeHooks: async (_: unknown, args: WriteArgs & { where?: unknown; dryRun?: boolean | null }, ctx: Ctx) => {
    requireInternal(ctx);
    const { event, rows } = checkWrite(args);
    return await ctx.services.hooks.runBefore({
      ...args,
      event,
      rows,
      where: args.where ?? null,
      userId: args.userId ?? null,
      dryRun: args.dryRun === true,
    });
  },
  _enqueueAfterHooks: async (_: unknown, args: WriteArgs, ctx: Ctx) => {
    requireInternal(ctx);
    const { event, rows } = checkWrite(args);
    return await ctx.services.hooks.enqueueAfter({ ...args, event, rows, userId: args.userId ?? null });
  },
};
