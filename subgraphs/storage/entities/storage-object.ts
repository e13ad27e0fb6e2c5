import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** A stored file. Its bytes are the blob `<projectId>/<id>` (platform/blob-store), never a user-given path. */
export const StorageObjectEntity = defineEntity({
  name: 'StorageObject',
  tableName: 'storage_objects',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    folder: p.text(),
    name: p.text(),
    /** `folder/name` (or `name` at the top level): the sort key and the uniqueness key of ready objects. */
    path: p.text(),
    contentType: p.text(),
    /** Null until the bytes are in. */
    size: p.bigint('number').nullable(),
    sha256: p.text().nullable(),
    /** `uploading` → `pending` → `ready`. */
    status: p.text(),
    /** The end-user who uploaded it, when one did. */
    ownerId: p.text().nullable(),
    /** Options chosen at upload: confirm as soon as the bytes are in; replace a ready object of the same path. */
    confirmOnComplete: p.boolean(),
    upsert: p.boolean(),
    /** Most bytes the upload may carry (fixed when it began). */
    maxBytes: p.bigint('number'),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    confirmedAt: p.datetime().nullable(),
  },
});

export type StorageObject = InferEntity<typeof StorageObjectEntity>;
