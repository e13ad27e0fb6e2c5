// The data API in split mode: actions reach the data subgraph's own process, and the realtime stream
// is forwarded by the front door to that process (signed context) and still streams changes over SSE.
// The same flow runs in one process in data-realtime.test.ts (data-flows.ts).
import { afterAll, beforeAll, describe } from '@jest/globals';
import { startSplit, type TestPlatform } from '../../support/platform.ts';
import { actionsAndSseRealtime } from './data-flows.ts';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startSplit();
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

describe('data API in split mode', () => {
  actionsAndSseRealtime(() => platform);
});
