// The storage subgraph's background jobs (platform/jobs.ts), one file each; a new job is one more file listed here.
import { defineJobs } from '../../../platform/jobs.ts';
import type { StorageServices } from '../services/index.ts';
import { sweepPendingJob } from './sweep.ts';

export const storageJobs = defineJobs<StorageServices>({
  // A short sweep interval (tests) is looked for as often; otherwise every 5 s.
  pollMs: (config) => Math.min(config.storageSweepInterval * 1000, 5000),
  jobs: [sweepPendingJob],
});
