// Every entity of the storage subgraph.
import { StorageObjectEntity } from './storage-object.ts';
import { StoragePolicyEntity } from './storage-policy.ts';
import { StorageProjectLimitsEntity } from './storage-project-limits.ts';

export { StorageObjectEntity, StoragePolicyEntity, StorageProjectLimitsEntity };
export type { StorageObject } from './storage-object.ts';
export type { StoragePolicy } from './storage-policy.ts';
export type { StorageProjectLimits } from './storage-project-limits.ts';

export const storageEntities = [StorageObjectEntity, StoragePolicyEntity, StorageProjectLimitsEntity];
