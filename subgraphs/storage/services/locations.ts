// Public locations of the storage API.
import type { SubgraphDeps } from '../../../platform/subgraph.ts';

export type StorageServices = { locations: { apiUrl: () => string } };

export function createStorageServices({ config }: SubgraphDeps): StorageServices {
  return { locations: { apiUrl: () => `${config.issuer}/storage/api/v1/storage` } };
}
