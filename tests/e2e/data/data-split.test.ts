// The data API in split mode: actions reach the data subgraph's own process, and the realtime stream
// is forwarded by the front door to that process (signed context) and still streams changes over SSE.
// The same flow runs in one process in data-realtime.test.ts (data-flows.ts).
import { describe } from '@jest/globals';
import { splitPlatformForFile } from '../../support/split-suite.ts';
import { actionsAndSseRealtime } from './data-flows.ts';

describe('data API in split mode', () => {
  actionsAndSseRealtime(splitPlatformForFile());
});
