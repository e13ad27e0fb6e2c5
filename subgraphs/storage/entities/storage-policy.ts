import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** An ACL policy: `principal` may do `operations` on objects in `folder` and its subfolders. */
export const StoragePolicyEntity = defineEntity({
  name: 'StoragePolicy',
  tableName: 'storage_policies',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    name: p.text(),
    folder: p.text(),
    operations: p.array(),
    principal: p.text(),
    contentTypes: p.array().nullable(),
    createdAt: p.datetime(),
  },
});

export type StoragePolicy = InferEntity<typeof StoragePolicyEntity>;
