// The schema endpoint and migrations: thin, each hands its arguments to the migrations service.
import { errors } from '../../../platform/errors.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';
import { schemaToSql, type ProjectSchema } from '../services/schema-introspection.ts';

type Ctx = SubgraphContext<DataServices>;

const FORMATS = ['json', 'sql'];

export const schemaResolvers = {
  Query: {
    dataSchema: async (_: unknown, _args: unknown, ctx: Ctx) => await ctx.services.migrations.schema(ctx.principal),
    dataSchemaDocument: async (_: unknown, { format }: { format?: string | null }, ctx: Ctx) => {
      const f = format ?? 'json';
      if (!FORMATS.includes(f)) throw errors.validation('format', `expected one of ${FORMATS.join(', ')}, got "${f}"`);
      return f === 'sql'
        ? await ctx.services.migrations.schemaSql(ctx.principal)
        : await ctx.services.migrations.schema(ctx.principal);
    },
    dataMigrations: async (_: unknown, _args: unknown, ctx: Ctx) => await ctx.services.migrations.list(ctx.principal),
  },
  Mutation: {
    dataApplyMigration: async (
      _: unknown,
      args: { version: string; name: string; sql: string; recordOnly?: boolean | null },
      ctx: Ctx,
    ) => await ctx.services.migrations.apply(ctx.principal, args, { depth: ctx.depth, requestId: ctx.requestId }),
  },
  DataSchema: {
    sql: (s: ProjectSchema) => schemaToSql(s),
  },
};
