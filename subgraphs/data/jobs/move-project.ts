// One online move of a project's database (services/moves.ts), queued by the operator's moveProject: on one data
// instance; if that instance dies, the job runs again elsewhere once its lock has lapsed and finishes the move (the
// switch was committed) or undoes it (it was not: the project stays on its source).
import { defineJob } from '../../../platform/jobs.ts';
import type { DataServices } from '../services/index.ts';
import { MOVE_JOB, MOVE_LOCK_LIFETIME_MS } from '../services/moves.ts';

export const moveProjectJob = defineJob<DataServices, { moveId: string }>({
  name: MOVE_JOB,
  // A move's own failures are recorded on the move (it is not retried: the operator asks again).
  retries: 0,
  concurrency: 2,
  // Renewed while the move runs (a copy takes as long as the database is large); a dead instance's move is taken
  // over this long after it died.
  lockLifetimeMs: MOVE_LOCK_LIFETIME_MS,
  heartbeat: true,
  handler: async (s, data) => await s.moves.run(data.moveId),
});
