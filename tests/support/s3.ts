// An S3-compatible server for the tests of the S3 blob driver: s3rver on loopback, in a temporary folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

type S3rverServer = { run: () => Promise<AddressInfo>; close: () => Promise<void> };
const S3rver = createRequire(import.meta.url)('s3rver') as new (opts: Record<string, unknown>) => S3rverServer;

/** s3rver's fixed credentials. */
export const S3_KEY = 'S3RVER';

export type TestS3 = {
  endpoint: string;
  bucket: string;
  /** Settings that point Tessera's S3 blob driver at the bucket. */
  env: Record<string, string>;
  /** Stops the server and removes its folder. */
  close: () => Promise<void>;
};

/** Starts s3rver on 127.0.0.1 (a free port) with one empty bucket. */
export async function startS3(bucket: string): Promise<TestS3> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-s3-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  const endpoint = `http://127.0.0.1:${(await server.run()).port}`;
  return {
    endpoint,
    bucket,
    env: {
      TESSERA_STORAGE_DRIVER: 's3',
      TESSERA_S3_ENDPOINT: endpoint,
      TESSERA_S3_BUCKET: bucket,
      TESSERA_S3_ACCESS_KEY_ID: S3_KEY,
      TESSERA_S3_SECRET_ACCESS_KEY: S3_KEY,
    },
    close: async () => {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
