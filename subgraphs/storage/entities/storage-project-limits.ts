import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/**
 * The plan limits of a project as the router last handed them to storage (federation `@requires` on
 * Project.storageLimits / storageUsage). Tenant management owns plans; this is a copy refreshed on
 * every upload through the front door.
 */
export const StorageProjectLimitsEntity = defineEntity({
  name: 'StorageProjectLimits',
  tableName: 'storage_project_limits',
  properties: {
    projectId: p.uuid().primary(),
    maxStorageBytes: p.bigint('number').nullable(),
    maxUploadBytes: p.bigint('number').nullable(),
    updatedAt: p.datetime(),
  },
});

export type StorageProjectLimits = InferEntity<typeof StorageProjectLimitsEntity>;
