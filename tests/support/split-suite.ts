// A split-mode platform for the tests of one file: started before them, closed after.
import { afterAll, beforeAll } from '@jest/globals';
import { startSplit, type TestPlatform } from './platform.ts';

/** Registers the file's beforeAll/afterAll; answers the running platform (read it inside tests). */
export function splitPlatformForFile(env: Record<string, string> = {}): () => TestPlatform {
  let platform: TestPlatform | undefined;
  beforeAll(async () => {
    platform = await startSplit(env);
  }, 120_000);
  afterAll(async () => {
    await platform?.close();
  }, 60_000);
  return () => platform!;
}
