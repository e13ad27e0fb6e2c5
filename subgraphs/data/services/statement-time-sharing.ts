// Statement time shared across data processes (fair shares, see docs/architecture.md): each process tells the others,
// once a second, how much statement time it booked to each project (the `data.statement-time` broadcast, the same
// pattern as the front doors' `request-counts`: platform/broadcast-sharing.ts), and books what it hears into its own
// window. N instances then allow about a plan's database_cpu_seconds_per_minute together, not N times it (a burst may
// overshoot by a second's worth).
import { createBroadcastSharing, inMessages } from '../../../platform/broadcast-sharing.ts';
import type { Logger } from '../../../platform/logger.ts';

/** Creates the sharing: `booked` is the pools' `onBooked`; `start` listens and publishes, `stop` ends both. */
export function createStatementTimeSharing(opts: {
  /** Books time heard from another process (the pools' addRemoteTime). */
  addRemote: (projectId: string, ms: number, at: number) => void;
  logger: Logger;
}) {
  let unsent = new Map<string, number>();
  const sharing = createBroadcastSharing({
    topic: 'data.statement-time',
    name: 'data statement time',
    logger: opts.logger,
    outgoing: (origin) => {
      const entries = unsent;
      unsent = new Map();
      const at = Date.now();
      return inMessages(entries).map((ms) => ({ origin, at, ms }));
    },
    heard: (m) => {
      for (const [projectId, ms] of Object.entries(m.ms))
        if (typeof ms === 'number') opts.addRemote(projectId, ms, m.at);
    },
  });
  return {
    /** Notes time booked here, to be told to the others at the next tick (nothing is kept before `start`). */
    booked(projectId: string, ms: number): void {
      if (!sharing.started()) return;
      unsent.set(projectId, (unsent.get(projectId) ?? 0) + ms);
    },
    start: sharing.start,
    stop: sharing.stop,
  };
}
