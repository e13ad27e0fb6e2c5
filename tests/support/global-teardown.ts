// Stops the embedded PostgreSQL of the global setup and removes its cluster.
import fs from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const pg = globalThis.__tesseraTestPg;
  if (!pg) return;
  await pg.db.stop();
  fs.rmSync(pg.dir, { recursive: true, force: true });
}
