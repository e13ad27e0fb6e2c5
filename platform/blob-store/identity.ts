// Which blob store this is: a random id kept in the store itself, under a key no object can have (the nil project's).
// The storage subgraph deletes objects' bytes, the front door streams them in and out: both must open the SAME store
// (a front door on the filesystem while storage instances use S3 answers 404 for objects uploaded elsewhere and 409 on
// upload). Comparing settings cannot prove that (two hosts' `fs` folders at one path are two stores; two endpoints
// may name one bucket); finding the same id in both stores does. The storage subgraph writes the id when the store
// has none and answers it (`_blobStoreId`); a front door reads it from its own store and refuses to start on a
// different one (rest-compat/handlers/storage.ts).
import crypto from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import { BlobNotFoundError, type BlobStore } from './types.ts';

/** The key of the store's id: the nil project's, which no project has (project ids are random UUIDs). */
export const STORE_ID_KEY = '00000000-0000-0000-0000-000000000000/00000000-0000-0000-0000-000000000000';

/** The store's id, or null when it has none (a store no storage subgraph has opened, or another store). */
export async function readStoreId(blobs: BlobStore): Promise<string | null> {
  let stream: Readable;
  try {
    stream = await blobs.get(STORE_ID_KEY);
  } catch (err) {
    if (err instanceof BlobNotFoundError) return null;
    throw err;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8').trim() || null;
}

/**
 * The store's id, made when it has none. Read again after writing: of storage instances starting side by side on a
 * new store the last write wins, and every later read answers that one.
 */
export async function ensureStoreId(blobs: BlobStore): Promise<string> {
  const id = await readStoreId(blobs);
  if (id) return id;
  await blobs.put(STORE_ID_KEY, Readable.from([Buffer.from(crypto.randomUUID())]), { contentType: 'text/plain' });
  return (await readStoreId(blobs))!;
}

/** How a store is described to an operator (never its credentials). */
export function describeStore(
  config: Pick<Config, 'storageDriver' | 's3Endpoint' | 's3Bucket' | 'storageDir' | 'dataDirAbs'>,
): string {
  if (config.storageDriver === 's3') return `s3 bucket "${config.s3Bucket}" at ${config.s3Endpoint || 'AWS S3'}`;
  return `fs folder ${config.storageDir ? path.resolve(config.storageDir) : path.join(config.dataDirAbs, 'blobs')}`;
}
