// Picks the blob store driver from the configuration. The front door (which streams uploads and
// downloads) and the storage subgraph (which deletes) each open one over the same location.
import path from 'node:path';
import type { Config } from '../config.ts';
import { createFsBlobStore } from './fs.ts';
import { createS3BlobStore } from './s3.ts';
import type { BlobStore } from './types.ts';

export type { BlobStore, BlobInfo, ByteRange } from './types.ts';
export { BlobNotFoundError, BlobTooLargeError } from './types.ts';
export { blobKeyOf } from './keys.ts';
export { createFsBlobStore } from './fs.ts';
export { createS3BlobStore, type S3Settings } from './s3.ts';
export { STORE_ID_KEY, describeStore, ensureStoreId, readStoreId } from './identity.ts';

/** The blob store the configuration names (`TESSERA_STORAGE_DRIVER`). */
export function openBlobStore(config: Config): BlobStore {
  if (config.storageDriver === 's3') {
    if (!config.s3Bucket) throw new Error('TESSERA_S3_BUCKET is required when TESSERA_STORAGE_DRIVER=s3');
    return createS3BlobStore({
      endpoint: config.s3Endpoint,
      region: config.s3Region,
      bucket: config.s3Bucket,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
      forcePathStyle: config.s3ForcePathStyle,
    });
  }
  return createFsBlobStore(config.storageDir ? path.resolve(config.storageDir) : path.join(config.dataDirAbs, 'blobs'));
}
