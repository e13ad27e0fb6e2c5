// The identity provider in split mode (every subgraph, the router and the front door in their own
// processes): the same wire behaviour as in one process (identity-flows.ts, also run by identity-end-users).
import { afterAll, beforeAll, describe } from '@jest/globals';
import { startSplit, type TestPlatform } from '../../support/platform.ts';
import { tokenLifecycle } from './identity-flows.ts';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startSplit();
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

describe('identity provider in split mode', () => {
  tokenLifecycle(() => platform);
});
