// Starts one embedded PostgreSQL for the whole test run (unless DATABASE_URL points at a server);
// test files create their own databases on it (tests/support/database.ts).
import fs from 'node:fs';
import path from 'node:path';
import { startDatabase, type RunningDatabase } from '../../platform/database.ts';
import { createLogger } from '../../platform/logger.ts';

declare global {
  var __tesseraTestPg: RunningDatabase | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (process.env.DATABASE_URL) return;
  const dir = path.resolve('.tessera', 'test-pg', 'shared');
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.resolve('.tessera'), 0o755);
  fs.chmodSync(path.dirname(dir), 0o755);
  globalThis.__tesseraTestPg = await startDatabase({ dataDir: dir, logger: createLogger('silent') });
  process.env.TESSERA_TEST_PG_URL = globalThis.__tesseraTestPg.url;
}
