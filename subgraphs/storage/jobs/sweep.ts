// The recurring job removing uploads never confirmed within TESSERA_STORAGE_PENDING_TTL, with their bytes, every
// TESSERA_STORAGE_SWEEP_INTERVAL seconds on one process.
import { defineJob } from '../../../platform/jobs.ts';
import type { StorageServices } from '../services/index.ts';

export const SWEEP_JOB = 'storage.pending.sweep';

export const sweepPendingJob = defineJob<StorageServices>({
  name: SWEEP_JOB,
  every: (config) => `${config.storageSweepInterval} seconds`,
  retries: 0,
  concurrency: 1,
  handler: async (s) => {
    const removed = await s.objects.sweep(s.config.storagePendingTtl);
    if (removed > 0) s.logger.info({ removed }, 'unconfirmed uploads removed');
  },
});
