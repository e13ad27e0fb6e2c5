// S3-compatible driver (AWS S3, MinIO, Ceph, R2, s3rver). Uploads stream as a multipart upload, one
// part in memory at a time; a blob smaller than one part goes up in a single PutObject. The AWS SDK (~11 MB of
// resident memory) is loaded on first use, so a platform on the filesystem driver never pays for it.
import type { Readable } from 'node:stream';
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from './types.ts';
import { assertBlobKey, ByteMeter } from './keys.ts';

export type S3Settings = {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Bytes per multipart part (S3 wants at least 5 MiB for every part but the last). */
  partSize?: number;
};

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

type Sdk = typeof import('@aws-sdk/client-s3');
let sdkLoading: Promise<Sdk> | undefined;

/** A blob store in an S3 bucket (which must exist). */
export function createS3BlobStore(s: S3Settings): BlobStore {
  let client: S3Client | undefined;
  /** The SDK and this store's client, made on first use. */
  const aws = async (): Promise<{ sdk: Sdk; client: S3Client }> => {
    const sdk = await (sdkLoading ??= import('@aws-sdk/client-s3'));
    client ??= new sdk.S3Client({
      region: s.region,
      endpoint: s.endpoint,
      forcePathStyle: s.forcePathStyle,
      credentials:
        s.accessKeyId && s.secretAccessKey
          ? { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey }
          : undefined,
    });
    return { sdk, client };
  };
  const Bucket = s.bucket;
  const partSize = s.partSize ?? DEFAULT_PART_SIZE;

  return {
    driver: 's3',
    async put(key, body, opts = {}) {
      if (body.destroyed) throw new Error('the body stream was destroyed before it was read');
      assertBlobKey(key);
      const { sdk, client } = await aws();
      const {
        CreateMultipartUploadCommand,
        UploadPartCommand,
        CompleteMultipartUploadCommand,
        PutObjectCommand,
        AbortMultipartUploadCommand,
      } = sdk;
      const meter = new ByteMeter(opts.maxBytes);
      const ContentType = opts.contentType;
      let chunks: Buffer[] = [];
      let buffered = 0;
      let uploadId: string | undefined;
      const parts: CompletedPart[] = [];
      const flushPart = async () => {
        uploadId ??= (await client.send(new CreateMultipartUploadCommand({ Bucket, Key: key, ContentType }))).UploadId;
        const PartNumber = parts.length + 1;
        const res = await client.send(
          new UploadPartCommand({
            Bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber,
            Body: Buffer.concat(chunks, buffered),
          }),
        );
        parts.push({ ETag: res.ETag, PartNumber });
        chunks = [];
        buffered = 0;
      };
      try {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          if (!meter.add(chunk)) throw new BlobTooLargeError(meter.maxBytes);
          chunks.push(chunk);
          buffered += chunk.length;
          if (buffered >= partSize) await flushPart();
        }
        if (uploadId) {
          if (buffered > 0) await flushPart();
          await client.send(
            new CompleteMultipartUploadCommand({
              Bucket,
              Key: key,
              UploadId: uploadId,
              MultipartUpload: { Parts: parts },
            }),
          );
        } else {
          await client.send(
            new PutObjectCommand({ Bucket, Key: key, Body: Buffer.concat(chunks, buffered), ContentType }),
          );
        }
      } catch (err) {
        if (uploadId)
          await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId })).catch(() => {});
        body.destroy();
        throw err;
      }
      return { size: meter.size, sha256: meter.digest() };
    },
    async get(key, range) {
      assertBlobKey(key);
      const { sdk, client } = await aws();
      try {
        const res = await client.send(
          new sdk.GetObjectCommand({
            Bucket,
            Key: key,
            Range: range ? `bytes=${range.start}-${range.end}` : undefined,
          }),
        );
        return res.Body as Readable;
      } catch (err) {
        if (isNotFound(err)) throw new BlobNotFoundError(key);
        throw err;
      }
    },
    async stat(key) {
      assertBlobKey(key);
      const { sdk, client } = await aws();
      try {
        const res = await client.send(new sdk.HeadObjectCommand({ Bucket, Key: key }));
        return { size: Number(res.ContentLength ?? 0) };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async delete(key) {
      assertBlobKey(key);
      // S3 answers 204 whether or not the key existed: ask first so the answer means something.
      const existed = (await this.stat(key)) !== null;
      const { sdk, client } = await aws();
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: key }));
      return existed;
    },
    async close() {
      client?.destroy();
    },
  };
}
