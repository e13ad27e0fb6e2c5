// Storage in split mode: the front door streams uploads into the blob store and reaches the storage
// subgraph (its own process) over HTTP for the records, policies and plan limits. The same flow runs in one
// process in storage-rest.test.ts (storage-flows.ts).
import { afterAll, beforeAll, describe } from '@jest/globals';
import { startSplit, type TestPlatform } from '../../support/platform.ts';
import { objectLifecycle } from './storage-flows.ts';

let p: TestPlatform;

beforeAll(async () => {
  p = await startSplit();
}, 120_000);

afterAll(async () => {
  await p?.close();
});

describe('storage across processes', () => {
  objectLifecycle(() => p);
});
