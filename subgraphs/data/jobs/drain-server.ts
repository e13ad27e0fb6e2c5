// Moves every project off a draining server, a few at a time (services/moves.ts `runDrain`), queued by the operator's
// drainProjectServer. Taken over by another data instance if its own dies (the moves it left are finished or undone).
import { defineJob } from '../../../platform/jobs.ts';
import type { DataServices } from '../services/index.ts';
import { DRAIN_JOB, MOVE_LOCK_LIFETIME_MS } from '../services/moves.ts';

export const drainServerJob = defineJob<DataServices, { serverId: string }>({
  name: DRAIN_JOB,
  retries: 0,
  concurrency: 1,
  lockLifetimeMs: MOVE_LOCK_LIFETIME_MS,
  heartbeat: true,
  handler: async (s, data) => await s.moves.runDrain(data.serverId),
});
