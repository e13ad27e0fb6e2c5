// Public locations of the edge-functions API and a project's webhook receivers.
import type { Config } from '../../../platform/config.ts';

export type Locations = { apiUrl: () => string; webhookBaseUrl: (projectId: string) => string };

/** Where the API and the receivers are reached (from the public URL, read at call time). */
export function createLocations(config: Config): Locations {
  return {
    apiUrl: () => `${config.issuer}/edge/api/v1`,
    webhookBaseUrl: (projectId) => `${config.issuer}/webhooks/${projectId}`,
  };
}
