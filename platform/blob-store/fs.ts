// Filesystem driver: `<root>/<projectId>/<objectId>`. Bytes land in `<root>/.partial/` first and are
// renamed into place once complete, so a reader never sees half a blob.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from './types.ts';
import { assertBlobKey, ByteMeter } from './keys.ts';

class MeterStream extends Transform {
  readonly meter: ByteMeter;
  constructor(maxBytes?: number) {
    super();
    this.meter = new ByteMeter(maxBytes);
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (!this.meter.add(chunk)) return cb(new BlobTooLargeError(this.meter.maxBytes));
    cb(null, chunk);
  }
}

const STALE_PARTIAL_MS = 24 * 3600 * 1000;

/**
 * Bytes the file stream buffers while a write is in flight. With the default (64 KiB) the upload pauses after every
 * socket read until that chunk's write came back from the thread pool; with more room the reads keep flowing and the
 * chunks buffered meanwhile go down in one writev (fewer writes: less CPU per GB on the main thread and the pool).
 * Memory per upload: at most this much more.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/** A blob store on the local filesystem under `root`. */
export function createFsBlobStore(root: string): BlobStore {
  const partial = path.join(root, '.partial');
  fs.mkdirSync(partial, { recursive: true });
  // Leftovers of a process that died mid-upload.
  for (const f of fs.readdirSync(partial)) {
    const file = path.join(partial, f);
    if (Date.now() - fs.statSync(file).mtimeMs > STALE_PARTIAL_MS) fs.rmSync(file, { force: true });
  }
  const fileOf = (key: string) => {
    assertBlobKey(key);
    return path.join(root, key);
  };
  return {
    driver: 'fs',
    async put(key, body, opts = {}) {
      if (body.destroyed) throw new Error('the body stream was destroyed before it was read');
      const file = fileOf(key);
      const tmp = path.join(partial, crypto.randomUUID());
      const meter = new MeterStream(opts.maxBytes);
      const out = fs.createWriteStream(tmp, { flags: 'wx', highWaterMark: WRITE_BUFFER_BYTES });
      try {
        await pipeline(body, meter, out);
        await fs.promises.mkdir(path.dirname(file), { recursive: true });
        await fs.promises.rename(tmp, file);
      } catch (err) {
        // The file may be opened after the pipeline failed: remove it once the stream is closed.
        if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()).destroy());
        await fs.promises.rm(tmp, { force: true });
        throw err;
      }
      return { size: meter.meter.size, sha256: meter.meter.digest() };
    },
    async get(key, range) {
      let handle: fs.promises.FileHandle;
      try {
        handle = await fs.promises.open(fileOf(key), 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(key);
        throw err;
      }
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {}) as Readable;
    },
    async stat(key) {
      try {
        const s = await fs.promises.stat(fileOf(key));
        return { size: s.size };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },
    async delete(key) {
      const file = fileOf(key);
      try {
        await fs.promises.unlink(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw err;
      }
      // The project's folder goes when its last blob does (fails harmlessly while others remain).
      await fs.promises.rmdir(path.dirname(file)).catch(() => {});
      return true;
    },
    async close() {},
  };
}
