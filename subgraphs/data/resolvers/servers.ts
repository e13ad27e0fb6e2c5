// The operator's project servers: thin resolvers over services/servers.ts. Who may run these is decided once, by every
// executor (platform/admin-scopes.ts OPERATOR_FIELDS); `operatorOf` names the acting operator for the audit log.
import { errors } from '../../../platform/errors.ts';
import type { OperatorActor } from '../../../platform/operator-audit.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';

type Ctx = SubgraphContext<DataServices>;
type Id = { id: string };
type AddInput = { id: string; url: string; weight?: number | null; state?: string | null };
type UpdateInput = { state?: string | null; weight?: number | null; url?: string | null };

/** The operator running the call (a second wall behind the executor's check). */
export function operatorOf(ctx: Ctx): OperatorActor {
  const p = ctx.principal;
  if (p.kind === 'operator') return { operator: p.operator };
  if (p.kind === 'anonymous') throw errors.unauthenticated('The admin API needs an operator key');
  throw errors.forbidden('The admin API needs an operator key');
}

export const serverResolvers = {
  Query: {
    adminServers: async (_: unknown, __: unknown, ctx: Ctx) => {
      operatorOf(ctx);
      return await ctx.services.servers.list();
    },
    adminServer: async (_: unknown, { id }: Id, ctx: Ctx) => {
      operatorOf(ctx);
      return await ctx.services.servers.get(id);
    },
  },
  Mutation: {
    addProjectServer: async (_: unknown, { input }: { input: AddInput }, ctx: Ctx) =>
      await ctx.services.servers.add(operatorOf(ctx), input),
    updateProjectServer: async (_: unknown, { id, input }: Id & { input: UpdateInput }, ctx: Ctx) =>
      await ctx.services.servers.update(operatorOf(ctx), id, input),
    removeProjectServer: async (_: unknown, { id }: Id, ctx: Ctx) =>
      await ctx.services.servers.remove(operatorOf(ctx), id),
  },
};
