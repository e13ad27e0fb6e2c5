// Realtime subscribers counted across data processes against the plan's max_realtime_subscribers (docs/architecture.md,
// "Plan limits"). A project's subscribers live in the process that listens for it, so each data process tells the
// others how many each project has there (the `data.realtime-subscribers` broadcast, platform/broadcast-sharing.ts):
// about once a second the counts that changed, and the open ones again every REFRESH_MS so that they are not forgotten.
// A process keeps the latest count each other process reported per project and forgets one not heard again within
// STALE_MS, so a process that died or stopped holds no slot for longer than that. N instances together allow about the
// plan's number, not N times it; subscriptions opened on several instances within the same second may overshoot it.
import { createBroadcastSharing, inMessages } from '../../../platform/broadcast-sharing.ts';
import type { BroadcastTopics } from '../../../platform/broadcast.ts';
import type { Logger } from '../../../platform/logger.ts';

/** How often a count still open is told again although it did not change (well within STALE_MS). */
export const REFRESH_MS = 2_000;
/** How long a count heard from another process counts without being heard again. */
export const STALE_MS = 5_000;

type Message = BroadcastTopics['data.realtime-subscribers'];
type Said = { n: number; at: number };

/** The bookkeeping (no I/O): what this process tells, what it heard, and the sum of the others' live counts. */
export function createSubscriberCounts(now: () => number = Date.now) {
  /** What this process last told of each project it has subscribers for, and when. */
  const said = new Map<string, Said>();
  /** Per project, per other process (its origin): its latest count and when it was heard. */
  const heard = new Map<string, Map<string, Said>>();

  const elsewhere = (projectId: string, at = now()): number => {
    const byOrigin = heard.get(projectId);
    if (!byOrigin) return 0;
    let sum = 0;
    for (const [origin, h] of byOrigin) {
      if (at - h.at > STALE_MS) byOrigin.delete(origin);
      else sum += h.n;
    }
    if (byOrigin.size === 0) heard.delete(projectId);
    return sum;
  };

  return {
    /** The messages that tell the others `local` (project → subscribers here): changed counts, open ones again every REFRESH_MS, 0 once none is left. */
    outgoing(origin: string, local: Iterable<[string, number]>): Message[] {
      const at = now();
      const open = new Map([...local].filter(([, n]) => n > 0));
      const tell: [string, number][] = [];
      for (const [projectId, n] of open) {
        const last = said.get(projectId);
        if (last && last.n === n && at - last.at < REFRESH_MS) continue;
        tell.push([projectId, n]);
        said.set(projectId, { n, at });
      }
      for (const projectId of said.keys())
        if (!open.has(projectId)) {
          tell.push([projectId, 0]);
          said.delete(projectId);
        }
      return inMessages(tell).map((counts) => ({ origin, counts }));
    },
    /** Keeps the counts another process told. */
    heard(m: Message): void {
      const at = now();
      for (const [projectId, n] of Object.entries(m.counts)) {
        if (typeof n !== 'number' || !Number.isFinite(n)) continue;
        const byOrigin = heard.get(projectId) ?? new Map<string, Said>();
        if (n > 0) byOrigin.set(m.origin, { n, at });
        else byOrigin.delete(m.origin);
        if (byOrigin.size > 0) heard.set(projectId, byOrigin);
        else heard.delete(projectId);
      }
    },
    /** Subscribers of the project the other processes reported, forgetting counts not heard within STALE_MS. */
    elsewhere: (projectId: string): number => elsewhere(projectId),
    /** Subscribers of every project the other processes reported (for /metrics); forgets the stale counts. */
    total(): number {
      const at = now();
      let sum = 0;
      for (const projectId of [...heard.keys()]) sum += elsewhere(projectId, at);
      return sum;
    },
  };
}

/** Creates the sharing of this process's subscriber counts (`local`: project → subscribers here). */
export function createRealtimeSharing(opts: { local: () => Iterable<[string, number]>; logger: Logger }) {
  const counts = createSubscriberCounts();
  const sharing = createBroadcastSharing({
    topic: 'data.realtime-subscribers',
    name: 'data realtime subscribers',
    logger: opts.logger,
    outgoing: (origin) => {
      counts.total(); // forgets the stale counts of projects nobody asks about
      return counts.outgoing(origin, opts.local());
    },
    heard: (m) => counts.heard(m),
  });
  return { elsewhere: counts.elsewhere, total: counts.total, start: sharing.start, stop: sharing.stop };
}
