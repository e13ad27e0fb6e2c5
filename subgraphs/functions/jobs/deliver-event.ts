// Outbound event deliveries: each job makes one attempt of the deliveries it names (a failed attempt schedules the
// next itself); a job that fails to record (the database away) is retried by Agenda, and the sweep catches the rest.
import { defineJob } from '../../../platform/jobs.ts';
import { DELIVERY_JOB, type DeliveryJob } from '../services/event-deliveries.ts';
import type { FunctionsServices } from '../services/index.ts';

export const deliverEventJob = defineJob<FunctionsServices, DeliveryJob>({
  name: DELIVERY_JOB,
  handler: async (s, data) => await s.eventDeliveries.deliver(data),
  retries: 3,
  concurrency: 10,
  removeOnComplete: true,
  lockLimit: 20,
});
