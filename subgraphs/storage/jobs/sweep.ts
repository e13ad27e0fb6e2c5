// The recurring job removing uploads never confirmed within TESSERA_STORAGE_PENDING_TTL, with their bytes.
import { createScheduler, type Scheduler } from '../../../platform/scheduler.ts';
import type { StorageServices } from '../services/index.ts';

export const SWEEP_JOB = 'storage.pending.sweep';

/** Starts the storage scheduler with the sweep every TESSERA_STORAGE_SWEEP_INTERVAL seconds. */
export async function startStorageJobs(s: StorageServices): Promise<Scheduler> {
  const scheduler = createScheduler({ url: s.config.schedulerUrl ?? s.databaseUrl, name: 'storage', logger: s.logger, processEveryMs: Math.min(s.config.storageSweepInterval * 1000, 5000) });
  scheduler.define(SWEEP_JOB, async () => {
    const removed = await s.objects.sweep(s.config.storagePendingTtl);
    if (removed > 0) s.logger.info({ removed }, 'unconfirmed uploads removed');
  }, { retries: 0, concurrency: 1 });
  await scheduler.start();
  await scheduler.agenda.every(`${s.config.storageSweepInterval} seconds`, SWEEP_JOB);
  return scheduler;
}
