// Everything the storage resolvers, jobs and event handlers use, built once per subgraph.
import type { SubgraphDeps } from '../../../platform/subgraph.ts';
import { ensureStoreId, openBlobStore, type BlobStore } from '../../../platform/blob-store/index.ts';
import type { Config } from '../../../platform/config.ts';
import type { Logger } from '../../../platform/logger.ts';
import { createPlanLimitsReader, type PlanLimitsReader } from '../../../platform/plan-limits.ts';
import { createLimitService, type LimitService } from './limits.ts';
import { createObjectService, type ObjectService } from './objects.ts';
import { createPolicyService, type PolicyService } from './policies.ts';

export type StorageServices = {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  blobs: BlobStore;
  /** The id kept in the blob store (made when it has none): front doors compare it with their own store's. */
  blobStoreId: () => Promise<string>;
  objects: ObjectService;
  policies: PolicyService;
  limits: LimitService;
  /** The project's plan as tenant management says (max_pending_uploads); emptied by the plans.changed broadcast. */
  planLimits: PlanLimitsReader;
  locations: { apiUrl: () => string; downloadPath: (id: string) => string };
};

export function createStorageServices({ config, db, logger, databaseUrl, router }: SubgraphDeps): StorageServices {
  const blobs = openBlobStore(config);
  const policies = createPolicyService({ db });
  const limits = createLimitService({ db, config, router });
  const planLimits = createPlanLimitsReader(router);
  const objects = createObjectService({ db, blobs, policies, limits, config, logger, planLimits });
  return {
    config,
    logger,
    databaseUrl,
    blobs,
    blobStoreId: async () => await ensureStoreId(blobs),
    objects,
    policies,
    limits,
    planLimits,
    locations: {
      apiUrl: () => `${config.issuer}/storage/api/v1/storage`,
      downloadPath: (id) => `/storage/api/v1/storage/download/${id}`,
    },
  };
}
