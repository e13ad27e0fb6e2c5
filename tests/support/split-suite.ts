// A split-mode platform for the tests of one file: started before them, closed after.
import { afterAll, beforeAll } from '@jest/globals';
import { SPLIT_START_HOOK_MS, startSplit, type TestPlatform } from './platform.ts';

/** Registers the file's beforeAll/afterAll; answers the running platform (read it inside tests). */
export function splitPlatformForFile(env: Record<string, string> = {}): () => TestPlatform {
  let platform: TestPlatform | undefined;
  beforeAll(async () => {
    platform = await startSplit(env);
  }, SPLIT_START_HOOK_MS);
  afterAll(async () => {
    await platform?.close();
  }, 60_000);
  return () => platform!;
}
