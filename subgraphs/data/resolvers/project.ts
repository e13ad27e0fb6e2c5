import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';

type Ctx = SubgraphContext<DataServices>;
type Ref = { id: string };

export const projectResolvers = {
  Project: {
    __resolveReference: (ref: Ref) => ({ id: ref.id }),
    databaseSchema: (p: Ref, _: unknown, ctx: Ctx) => ctx.services.projectSchema.schemaOf(p.id),
    dataApiUrl: (_p: Ref, _: unknown, ctx: Ctx) => ctx.services.projectSchema.apiUrl(),
  },
};
