import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createTestDatabase } from '../tests/support/database.ts';
import { createLogger } from './logger.ts';
import { createScheduler } from './scheduler.ts';

describe('the scheduler (Agenda on PostgreSQL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('runs a queued job once, retrying it after a failure', async () => {
    const s = createScheduler({ url: db.url, name: 'test', logger: createLogger('silent'), processEveryMs: 100 });
    const runs: string[] = [];
    let failures = 1;
    const done = new Promise<void>((resolve) => {
      s.define<{ to: string }>(
        'test.mail.send',
        async (data) => {
          if (failures-- > 0) throw new Error('SMTP down');
          runs.push(data.to);
          resolve();
        },
        { retries: 3 },
      );
    });
    await s.start();
    await s.enqueue('test.mail.send', { to: 'a@example.com' });
    await done;
    await new Promise((r) => setTimeout(r, 300)); // three polls: proves no second run follows the success
    expect(runs).toEqual(['a@example.com']);
    await s.stop();
  }, 20_000);
});
