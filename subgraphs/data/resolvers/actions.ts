// The data API's root fields: thin, each hands the arguments (the REST body, as sent) to the actions service.
import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { errors } from '../../../platform/errors.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';
import type { ActionName, Body } from '../services/actions.ts';

type Ctx = SubgraphContext<DataServices>;

function literalValue(node: ValueNode, variables: Record<string, unknown> | null | undefined): unknown {
  switch (node.kind) {
    case Kind.NULL:
      return null;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.STRING:
    case Kind.ENUM:
      return node.value;
    case Kind.BOOLEAN:
      return node.value;
    case Kind.LIST:
      return node.values.map((v) => literalValue(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literalValue(f.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[node.name.value];
  }
}

/** Any JSON value, passed through unchanged (column names keep their spelling). */
export const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: (node, variables) => literalValue(node, variables),
});

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
      await ctx.services.actions.transaction(ctx.principal, args.operations, { rollback: args.rollback === true, depth: ctx.depth, requestId: ctx.requestId }),
  },
};
