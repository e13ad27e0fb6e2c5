// Every pool the platform opens on its database names its connections (application_name), so pg_stat_activity says
// whose a busy backend is: an operator looking at a loaded server, or bench N1's diagnosis (which backends took the
// CPU while a victim's finds waited).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from '../tests/support/database.ts';
import { openSubgraphDatabase } from './database.ts';
import { createLogger } from './logger.ts';
import { createSchedulerBackend } from './scheduler-backend.ts';

describe('the names of the platform database connections', () => {
  let testDb: { url: string; drop: () => Promise<void> };
  const names = async (): Promise<string[]> => {
    const c = new pg.Client({ connectionString: testDb.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ name: string }>(
        `select application_name as name from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      return rows.map((r) => r.name);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    testDb = await createTestDatabase();
  });
  afterAll(async () => {
    await testDb.drop();
  });

  it("names a subgraph's ORM connections tessera-<subgraph>", async () => {
    const db = await openSubgraphDatabase({
      name: 'naming',
      url: testDb.url,
      entities: [],
      migrations: [],
      logger: createLogger('silent'),
      poolMax: 2,
    });
    try {
      const rows = await db.em().execute(`select current_setting('application_name') as name`);
      expect(rows[0]).toEqual({ name: 'tessera-naming' });
      expect(await names()).toContain('tessera-naming');
    } finally {
      await db.close();
    }
  });

  it("names the scheduler's connections tessera-scheduler-<name>, spaces replaced", async () => {
    const scheduler = createSchedulerBackend(testDb.url, 'functions test', createLogger('silent'));
    try {
      await scheduler.backend.connect();
      expect(await names()).toContain('tessera-scheduler-functions-test');
    } finally {
      await scheduler.close();
    }
  });
});
