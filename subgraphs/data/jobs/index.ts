// The data subgraph's background jobs (platform/jobs.ts), one file each; a new job is one more file listed here.
import { defineJobs } from '../../../platform/jobs.ts';
import type { DataServices } from '../services/index.ts';
import { sweepHookOutboxJob } from './sweep-hook-outbox.ts';
import { moveProjectJob } from './move-project.ts';
import { drainServerJob } from './drain-server.ts';

export const dataJobs = defineJobs<DataServices>({ jobs: [sweepHookOutboxJob, moveProjectJob, drainServerJob] });
