// Edge functions subgraph: functions, invoke, hooks, webhooks, cron, e-mail, executions.
import { defineSubgraph } from '../../platform/subgraph.ts';
import type { SubgraphContext } from '../../platform/subgraph.ts';
import { createFunctionsServices, type FunctionsServices } from './services/locations.ts';

type Ref = { id: string };
type Ctx = SubgraphContext<FunctionsServices>;

export const functionsSubgraph = defineSubgraph<FunctionsServices>({
  name: 'functions',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: [],
  migrations: [],
  createServices: createFunctionsServices,
  resolvers: {
    Project: {
      __resolveReference: (ref: Ref) => ({ id: ref.id }),
      webhookBaseUrl: (p: Ref, _a: unknown, ctx: Ctx) => ctx.services.locations.webhookBaseUrl(p.id),
      functionsApiUrl: (_p: Ref, _a: unknown, ctx: Ctx) => ctx.services.locations.apiUrl(),
    },
  },
});
