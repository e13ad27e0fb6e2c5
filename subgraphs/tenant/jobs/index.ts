// The tenant subgraph's background jobs (platform/jobs.ts), one file each; a new job is one more file listed here.
import { defineJobs } from '../../../platform/jobs.ts';
import type { TenantServices } from '../services/index.ts';
import { sendMailJob } from './send-mail.ts';

export const tenantJobs = defineJobs<TenantServices>({ jobs: [sendMailJob] });
