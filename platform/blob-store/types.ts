// The blob store: where storage keeps the bytes of objects. Infrastructure, not domain logic: it knows
// keys and bytes, nothing about projects, folders or policies. Drivers: filesystem (default) and S3.
import type { Readable } from 'node:stream';

/** What `put` learned while the bytes went by. */
export type BlobInfo = { size: number; sha256: string };

/** An inclusive byte range, as in HTTP `Range: bytes=start-end`. */
export type ByteRange = { start: number; end: number };

export type BlobStore = {
  /** `fs` or `s3`. */
  driver: string;
  /**
   * Streams `body` into the blob `key`, computing size and SHA-256 on the way. The blob appears only when
   * every byte arrived; on any failure (including `maxBytes` exceeded: BlobTooLargeError) nothing is left.
   * `releaseChunks`: the caller hands over the body's chunks (no one else reads or keeps them, as with the fresh
   * copies Node's HTTP parser makes of a request body): a driver may release each chunk's memory once it is written,
   * without waiting for the garbage collector (the filesystem driver does; chunks sharing their ArrayBuffer with
   * other data are always left alone).
   */
  put: (
    key: string,
    body: Readable,
    opts?: { maxBytes?: number; contentType?: string; releaseChunks?: boolean },
  ) => Promise<BlobInfo>;
  /** A stream of the blob (or of `range` of it); BlobNotFoundError when there is no such blob. */
  get: (key: string, range?: ByteRange) => Promise<Readable>;
  /** The blob's size, or null when there is no such blob. */
  stat: (key: string) => Promise<{ size: number } | null>;
  /** Removes the blob; true when it existed. Deleting a missing blob is not an error. */
  delete: (key: string) => Promise<boolean>;
  close: () => Promise<void>;
};

/** The stream carried more than the allowed bytes; the partial blob was discarded. */
export class BlobTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`the body exceeds ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/** No blob under that key. */
export class BlobNotFoundError extends Error {
  constructor(key: string) {
    super(`no blob ${key}`);
    this.name = 'BlobNotFoundError';
  }
}
