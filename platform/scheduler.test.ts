import os from 'node:os';
import pg from 'pg';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { waitFor } from '../tests/support/wait-for.ts';
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

  it('renews the lock of a run with a heartbeat: a run outliving its lock lifetime is not run again elsewhere', async () => {
    const runs = { beat: 0, plain: 0 };
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const make = () => {
      const s = createScheduler({ url: db.url, name: 'test', logger: createLogger('silent'), processEveryMs: 100 });
      s.define('test.beat', async () => void (runs.beat++, await released), {
        lockLifetimeMs: 1000,
        heartbeat: true,
        retries: 0,
      });
      s.define('test.plain', async () => void (runs.plain++, await released), { lockLifetimeMs: 1000, retries: 0 });
      return s;
    };
    const [a, b] = [make(), make()];
    await a.start();
    await b.start();
    try {
      await a.enqueue('test.beat', {});
      await a.enqueue('test.plain', {});
      // Without renewal the run outlives its 1 s lock and the job is run again (the control: the test can fail).
      await waitFor(() => runs.plain >= 2, { message: 'the unrenewed job run again', timeoutMs: 15_000 });
      expect(runs.beat).toBe(1);
      // The row names the process that locked it (the instance to look at when a job seems stuck).
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      const row = await c.query<{ by: string; locked: boolean }>(
        "select last_modified_by as by, locked_at is not null as locked from agenda_jobs where name = 'test.beat'",
      );
      expect(row.rows).toEqual([{ by: `test@${os.hostname()}/${process.pid}`, locked: true }]);
      release();
      // Once the run ends the job is unlocked at once (a renewal in flight does not lock it again).
      await waitFor(
        async () =>
          (await c.query("select 1 from agenda_jobs where name = 'test.beat' and locked_at is null")).rowCount === 1,
        { message: 'the finished job unlocked' },
      );
      await c.end();
      expect(runs.beat).toBe(1);
    } finally {
      release();
      await a.stop();
      await b.stop();
    }
  }, 30_000);
});
