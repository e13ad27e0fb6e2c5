// The data API's root fields: thin, each hands the arguments (the REST body, as sent) to the actions service.
import { errors } from '../../../platform/errors.ts';
import { JSONScalar } from '../../../platform/graphql-scalars.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';
import type { ActionName, Body } from '../services/actions.ts';

type Ctx = SubgraphContext<DataServices>;

// `depth` (how many function runs deep the caller is) bounds database hooks that write to their own tables.
const action = (name: Exclude<ActionName, 'transaction'>) => async (_: unknown, args: Body, ctx: Ctx) =>
  await ctx.services.actions.perform(ctx.principal, name, args, { depth: ctx.depth, requestId: ctx.requestId });

export const actionResolvers = {
  JSON: JSONScalar,
  Query: {
    dataFind: action('find'),
    dataFindOne: action('findOne'),
    dataAggregate: action('aggregate'),
    dataVectorSearch: action('vectorSearch'),
    dataUsage: async (_: unknown, _args: unknown, ctx: Ctx) => {
      if (ctx.principal.kind !== 'project') throw errors.forbidden("The project's secret key may read its usage");
      return await ctx.services.quota.usage(await ctx.services.provisioning.ensure(ctx.principal.projectId));
    },
    _projectTables: async (_: unknown, { projectId }: { projectId: string }, ctx: Ctx) => {
      if (ctx.principal.kind !== 'internal') throw errors.forbidden('Internal operation');
      return await ctx.services.tableNames(projectId);
    },
  },
  Mutation: {
    dataInsert: action('insert'),
    dataUpdate: action('update'),
    dataDelete: action('delete'),
    dataRawSql: action('rawSQL'),
    _hooksChanged: (_: unknown, { projectId }: { projectId: string }, ctx: Ctx) => {
      if (ctx.principal.kind !== 'internal') throw errors.forbidden('Internal operation');
      ctx.services.hooks.invalidate(projectId);
      return true;
    },
    dataTransaction: async (_: unknown, args: { operations: unknown; rollback?: boolean | null }, ctx: Ctx) =>
      await ctx.services.actions.transaction(ctx.principal, args.operations, {
        rollback: args.rollback === true,
        depth: ctx.depth,
        requestId: ctx.requestId,
      }),
  },
};
