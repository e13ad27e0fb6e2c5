// A scheduler process for the scheduler tests: defines `test.slow` (prints "started <id>" and never finishes) on
// the scheduler URL of SCHEDULER_URL, so the test can kill it while it holds the job's lock.
import { createScheduler } from '../../platform/scheduler.ts';
import { createLogger } from '../../platform/logger.ts';

const s = createScheduler({
  url: process.env.SCHEDULER_URL!,
  name: 'worker',
  logger: createLogger('silent'),
  processEveryMs: 100,
});
s.define<{ id: string }>(
  'test.slow',
  async (data) => {
    process.stdout.write(`started ${data.id}\n`);
    await new Promise(() => {});
  },
  { lockLifetimeMs: 2000, retries: 0 },
);
await s.start();
process.stdout.write('ready\n');
