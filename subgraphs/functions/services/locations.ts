// Public locations of the edge-functions API and a project's webhook receivers.
import type { SubgraphDeps } from '../../../platform/subgraph.ts';

export type FunctionsServices = { locations: { apiUrl: () => string; webhookBaseUrl: (projectId: string) => string } };

export function createFunctionsServices({ config }: SubgraphDeps): FunctionsServices {
  return {
    locations: {
      apiUrl: () => `${config.issuer}/edge/api/v1`,
      webhookBaseUrl: (projectId) => `${config.issuer}/webhooks/${projectId}`,
    },
  };
}
