// Starts one embedded PostgreSQL for the whole test run (unless DATABASE_URL points at a server);
// test files create their own databases on it (tests/support/database.ts). Each run gets its own
// cluster folder, so two test runs in one checkout never fight over one server.
import fs from 'node:fs';
import path from 'node:path';
import { startDatabase, type RunningDatabase } from '../../platform/database.ts';
import { createLogger } from '../../platform/logger.ts';

declare global {
  var __tesseraTestPg: { db: RunningDatabase; dir: string } | undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export default async function globalSetup(): Promise<void> {
  // Node's compile cache for every process the tests start (split mode starts seven per platform): a module compiled
  // once is read back from disk by the next process instead of being compiled again (about 40 % of a start's CPU).
  // Jest's workers are started after this and inherit it.
  process.env.NODE_COMPILE_CACHE ??= path.resolve('.tessera', 'compile-cache');
  if (process.env.DATABASE_URL) return;
  const base = path.resolve('.tessera', 'test-pg');
  fs.mkdirSync(base, { recursive: true, mode: 0o755 });
  fs.chmodSync(path.resolve('.tessera'), 0o755);
  fs.chmodSync(base, 0o755);
  // Clusters of runs whose process is gone (killed runs) are removed.
  for (const name of fs.readdirSync(base)) {
    const m = /^run-(\d+)$/.exec(name);
    if ((m && !alive(Number(m[1]))) || name === 'shared')
      fs.rmSync(path.join(base, name), { recursive: true, force: true });
  }
  const dir = path.join(base, `run-${process.pid}`);
  const db = await startDatabase({ dataDir: dir, logger: createLogger('silent') });
  globalThis.__tesseraTestPg = { db, dir };
  process.env.TESSERA_TEST_PG_URL = db.url;
  // The suite was written against the `free` plan's limits (3 projects, 600 requests a minute, 50 MB uploads, ...):
  // new accounts start on it here, where a fresh install starts them on `self-hosted` (no caps). A test of another
  // plan sets TESSERA_DEFAULT_PLAN for the platform it starts, or moves its tenant with the operator API.
  process.env.TESSERA_DEFAULT_PLAN ??= 'free';
}
