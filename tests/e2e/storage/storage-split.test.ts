// Storage in split mode: the front door streams uploads into the blob store and reaches the storage
// subgraph (its own process) over HTTP for the records, policies and plan limits. The same flow runs in one
// process in storage-rest.test.ts (storage-flows.ts).
import { describe } from '@jest/globals';
import { splitPlatformForFile } from '../../support/split-suite.ts';
import { objectLifecycle } from './storage-flows.ts';

describe('storage across processes', () => {
  objectLifecycle(splitPlatformForFile());
});
