// The operator's online moves and drains: thin resolvers over services/moves.ts. Who may run them is decided once, by
// every executor (platform/admin-scopes.ts OPERATOR_FIELDS: an operator key only).
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';
import { operatorOf } from './servers.ts';

type Ctx = SubgraphContext<DataServices>;

export const moveResolvers = {
  Query: {
    adminProjectMove: async (_: unknown, a: { id: string }, ctx: Ctx) => {
      operatorOf(ctx);
      return await ctx.services.moves.get(a.id);
    },
    adminProjectMoves: async (
      _: unknown,
      a: { projectId?: string | null; drainOf?: string | null; first?: number | null },
      ctx: Ctx,
    ) => {
      operatorOf(ctx);
      return await ctx.services.moves.list({
        projectId: a.projectId ?? undefined,
        drainOf: a.drainOf ?? undefined,
        first: a.first ?? undefined,
      });
    },
  },
  Mutation: {
    moveProject: async (_: unknown, a: { projectId: string; server: string }, ctx: Ctx) =>
      await ctx.services.moves.move(a.projectId, a.server, operatorOf(ctx)),
    drainProjectServer: async (_: unknown, a: { id: string }, ctx: Ctx) => {
      const s = await ctx.services.moves.drain(a.id, operatorOf(ctx));
      return { server: s.id, state: s.state };
    },
  },
};
