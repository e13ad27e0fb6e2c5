// The identity provider in split mode (every subgraph, the router and the front door in their own
// processes): the same wire behaviour as in one process (identity-flows.ts, also run by identity-end-users).
import { describe } from '@jest/globals';
import { splitPlatformForFile } from '../../support/split-suite.ts';
import { tokenLifecycle } from './identity-flows.ts';

describe('identity provider in split mode', () => {
  tokenLifecycle(splitPlatformForFile());
});
