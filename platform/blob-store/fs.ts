// Filesystem driver: `<root>/<projectId>/<objectId>`. Bytes land in `<root>/.partial/` first and are
// renamed into place once complete, so a reader never sees half a blob.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from './types.ts';
import { assertBlobKey, ByteMeter } from './keys.ts';

/**
 * Bytes buffered while a write is in flight. With the default (64 KiB) the upload pauses after every socket read
 * until that chunk's write came back from the thread pool; with more room the reads keep flowing and the chunks
 * buffered meanwhile go down in one writev (fewer writes: less CPU per GB on the main thread and the pool).
 * Memory per upload: at most this much more.
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

/**
 * Releases a chunk's memory now instead of at the garbage collector's next pass, when the chunk is the only view of
 * its ArrayBuffer (never a slice of Node's shared Buffer pool, nor part of a bigger buffer). Without it, the request
 * body's chunks wait for collection as external memory, and V8 answers every ~50 MB of it with a full mark-compact
 * over the whole heap (measured: ~22 per GiB uploaded, CPU per GiB twice what it is with the release) while the RSS
 * grows by the uncollected chunks (70-130 MB; 0-3 MB with the release).
 */
function release(chunk: Buffer): void {
  const ab = chunk.buffer;
  // (A SharedArrayBuffer has no transfer; `instanceof ArrayBuffer` would miss buffers made in another realm.)
  if (
    chunk.byteOffset === 0 &&
    chunk.byteLength === ab.byteLength &&
    ab.byteLength > 0 &&
    'transfer' in ab &&
    !ab.detached
  )
    ab.transfer(0);
}

/**
 * Writes a stream into a new file `path` (created exclusively), counting, limiting and hashing the bytes on the
 * way; `releaseChunks`: each chunk is released once written (see `release`). The file is closed when 'finish' fires.
 */
class FileSink extends Writable {
  readonly meter: ByteMeter;
  private readonly file: string;
  private readonly releaseChunks: boolean;
  private fd: number | undefined;
  constructor(file: string, maxBytes: number | undefined, releaseChunks: boolean) {
    super({ highWaterMark: WRITE_BUFFER_BYTES });
    this.file = file;
    this.meter = new ByteMeter(maxBytes);
    this.releaseChunks = releaseChunks;
  }
  override _construct(cb: (err?: Error | null) => void): void {
    // Only the platform's user may read a blob (0600), whatever the umask.
    fs.open(this.file, 'wx', 0o600, (err, fd) => {
      this.fd = fd;
      cb(err);
    });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this._writev([{ chunk }], cb);
  }
  override _writev(entries: { chunk: Buffer }[], cb: (err?: Error | null) => void): void {
    const chunks = entries.map((e) => e.chunk);
    for (const c of chunks) if (!this.meter.add(c)) return cb(new BlobTooLargeError(this.meter.maxBytes));
    this.writeAll(chunks, 0, (err) => {
      if (!err && this.releaseChunks) for (const c of chunks) release(c);
      cb(err);
    });
  }
  /** writev until every byte is down (a write may take fewer bytes than asked). */
  private writeAll(chunks: Buffer[], from: number, cb: (err: Error | null) => void): void {
    fs.writev(this.fd!, from === 0 ? chunks : remainder(chunks, from), (err, written) => {
      if (err) return cb(err);
      const total = chunks.reduce((n, c) => n + c.byteLength, 0);
      if (from + written < total) return this.writeAll(chunks, from + written, cb);
      cb(null);
    });
  }
  override _final(cb: (err?: Error | null) => void): void {
    const fd = this.fd!;
    this.fd = undefined;
    fs.close(fd, (err) => cb(err));
  }
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (this.fd === undefined) return cb(err);
    const fd = this.fd;
    this.fd = undefined;
    fs.close(fd, () => cb(err));
  }
}

/** The bytes of `chunks` from offset `from` on (views, no copy). */
function remainder(chunks: Buffer[], from: number): Buffer[] {
  const out: Buffer[] = [];
  let skip = from;
  for (const c of chunks) {
    if (skip >= c.byteLength) {
      skip -= c.byteLength;
      continue;
    }
    out.push(skip > 0 ? c.subarray(skip) : c);
    skip = 0;
  }
  return out;
}

const STALE_PARTIAL_MS = 24 * 3600 * 1000;

/** A blob store on the local filesystem under `root`. */
export function createFsBlobStore(root: string): BlobStore {
  const partial = path.join(root, '.partial');
  fs.mkdirSync(partial, { recursive: true, mode: 0o700 });
  fs.chmodSync(root, 0o700);
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
      const out = new FileSink(tmp, opts.maxBytes, opts.releaseChunks === true);
      try {
        await pipeline(body, out);
        await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
        await fs.promises.rename(tmp, file);
      } catch (err) {
        // The file may be opened after the pipeline failed: remove it once the stream is closed.
        if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()).destroy());
        await fs.promises.rm(tmp, { force: true });
        throw err;
      }
      return { size: out.meter.size, sha256: out.meter.digest() };
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
