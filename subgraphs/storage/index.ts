// Storage subgraph: objects, folders, usage and ACL policies.
import { defineSubgraph } from '../../platform/subgraph.ts';
import type { SubgraphContext } from '../../platform/subgraph.ts';
import { createStorageServices, type StorageServices } from './services/locations.ts';

type Ref = { id: string };

export const storageSubgraph = defineSubgraph<StorageServices>({
  name: 'storage',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: [],
  migrations: [],
  createServices: createStorageServices,
  resolvers: {
    Project: {
      __resolveReference: (ref: Ref) => ({ id: ref.id }),
      storageApiUrl: (_p: Ref, _a: unknown, ctx: SubgraphContext<StorageServices>) => ctx.services.locations.apiUrl(),
    },
  },
});
