import { requireOperatorPrincipal } from '../../../platform/admin-scopes.ts';
import { errors } from '../../../platform/errors.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';

type Ctx = SubgraphContext<DataServices>;
type Ref = { id: string };

export const projectResolvers = {
  Project: {
    __resolveReference: (ref: Ref) => ({ id: ref.id }),
    databaseSchema: (p: Ref, _: unknown, ctx: Ctx) => ctx.services.projectSchema.schemaOf(p.id),
    dataApiUrl: (_p: Ref, _: unknown, ctx: Ctx) => ctx.services.projectSchema.apiUrl(),
    // A tenant reaches a Project only through tenant management's root fields, which check that it owns it (as the
    // tenant subgraph's own fields rely on); a project key reads its own project only.
    databaseUsage: async (p: Ref, _: unknown, ctx: Ctx) => {
      const who = ctx.principal;
      const allowed =
        who.kind === 'internal' ||
        who.kind === 'operator' ||
        who.kind === 'tenant' ||
        (who.kind === 'project' && who.projectId === p.id);
      if (!allowed) throw errors.forbidden("The project's secret key, its owning tenant or the operator may read this");
      return await ctx.services.quota.usage(await ctx.services.provisioning.ensure(p.id));
    },
    // Where a project lives is the operator's business (and the platform's): a tenant sees no server names.
    databaseServer: async (p: Ref, _: unknown, ctx: Ctx) => {
      const who = ctx.principal.kind;
      if (who !== 'operator' && who !== 'internal') throw errors.forbidden('Only the operator may read this');
      return await ctx.services.servers.serverOf(p.id);
    },
  },
  // An operator's tenant row: all the account's project databases together (the router hands over their ids).
  OperatorTenant: {
    databaseUsage: async (t: { projectIds?: string[] | null }, _: unknown, ctx: Ctx) => {
      requireOperatorPrincipal(ctx.principal);
      return await ctx.services.databaseTotals(t.projectIds ?? []);
    },
  },
};
