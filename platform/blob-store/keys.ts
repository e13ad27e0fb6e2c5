// Blob keys are made here and only here, from ids the platform generated: never from user input.
import crypto from 'node:crypto';
import { isUuid } from '../ids.ts';

/** Lower case only: a key names a file, and some file systems fold case. */
const isKeyPart = (id: string) => isUuid(id) && id === id.toLowerCase();
const KEY = /^[0-9a-f-]{36}\/[0-9a-f-]{36}$/;

/** The key of an object's bytes: `<projectId>/<objectId>`, both UUIDs. */
export function blobKeyOf(projectId: string, objectId: string): string {
  if (!isKeyPart(projectId) || !isKeyPart(objectId)) throw new Error('blob keys are made from UUIDs only');
  return `${projectId}/${objectId}`;
}

/** Throws unless `key` is a key made by blobKeyOf (a driver's last line of defence against traversal). */
export function assertBlobKey(key: string): void {
  if (!KEY.test(key)) throw new Error(`not a blob key: ${JSON.stringify(key.slice(0, 100))}`);
}

/** Counts, hashes and limits bytes going by. */
export class ByteMeter {
  size = 0;
  readonly maxBytes: number;
  private readonly hash = crypto.createHash('sha256');
  constructor(maxBytes = Number.POSITIVE_INFINITY) {
    this.maxBytes = maxBytes;
  }
  /** Accounts for a chunk; false when the limit is now exceeded. */
  add(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return false;
    this.hash.update(chunk);
    return true;
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}
