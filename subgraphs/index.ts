// The five subgraphs, by the names supergraph.yaml uses. The only module that lists them all.
import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { tenantSubgraph } from './tenant/index.ts';
import { identitySubgraph } from './identity/index.ts';
import { dataSubgraph } from './data/index.ts';
import { storageSubgraph } from './storage/index.ts';
import { functionsSubgraph } from './functions/index.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const SUBGRAPHS: Record<string, SubgraphDefinition<any>> = {
  tenant: tenantSubgraph,
  identity: identitySubgraph,
  data: dataSubgraph,
  storage: storageSubgraph,
  functions: functionsSubgraph,
};
