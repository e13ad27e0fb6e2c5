import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { IdentityServices } from '../services/issuer.ts';

type Ctx = SubgraphContext<IdentityServices>;
type Ref = { id: string };

export const projectResolvers = {
  Project: {
    __resolveReference: (ref: Ref) => ({ id: ref.id }),
    issuer: (p: Ref, _: unknown, ctx: Ctx) => ctx.services.issuer.issuerOf(p.id),
    discoveryUrl: (p: Ref, _: unknown, ctx: Ctx) => ctx.services.issuer.discoveryUrlOf(p.id),
  },
};
