// Statement time shared across data processes (fair shares, see docs/architecture.md): each process tells the others,
// once a second, how much statement time it booked to each project (the `data.statement-time` broadcast, the same
// pattern as the front doors' `request-counts`), and books what it hears into its own window. N instances then allow
// about a plan's database_cpu_seconds_per_minute together, not N times it (a burst may overshoot by a second's worth).
import crypto from 'node:crypto';
import type pg from 'pg';
import { publishBroadcastNow, startBroadcastListener, type BroadcastListener } from '../../../platform/broadcast.ts';
import type { Logger } from '../../../platform/logger.ts';
import { createPgPool } from '../../../platform/pg-pool.ts';

const SHARE_EVERY_MS = 1_000;
/** Projects per message (a project id and its time take ~60 bytes of JSON). */
const PER_MESSAGE = 80;

/** Creates the sharing: `booked` is the pools' `onBooked`; `start` listens and publishes, `stop` ends both. */
export function createStatementTimeSharing(opts: {
  /** Books time heard from another process (the pools' addRemoteTime). */
  addRemote: (projectId: string, ms: number, at: number) => void;
  logger: Logger;
}) {
  const origin = crypto.randomUUID();
  let unsent = new Map<string, number>();
  let listener: BroadcastListener | undefined;
  let pool: pg.Pool | undefined;
  let timer: NodeJS.Timeout | undefined;
  return {
    /** Notes time booked here, to be told to the others at the next tick (nothing is kept before `start`). */
    booked(projectId: string, ms: number): void {
      if (!timer) return;
      unsent.set(projectId, (unsent.get(projectId) ?? 0) + ms);
    },
    async start(databaseUrl: string): Promise<void> {
      if (listener) return;
      listener = await startBroadcastListener({ url: databaseUrl, logger: opts.logger });
      listener.on('data.statement-time', (m) => {
        if (m.origin === origin) return;
        for (const [projectId, ms] of Object.entries(m.ms))
          if (typeof ms === 'number') opts.addRemote(projectId, ms, m.at);
      });
      pool = createPgPool(
        { connectionString: databaseUrl, max: 1, application_name: 'tessera-data-statement-time' },
        opts.logger,
        'data statement time',
      );
      timer = setInterval(() => {
        if (unsent.size === 0) return;
        const entries = [...unsent];
        unsent = new Map();
        const at = Date.now();
        // A NOTIFY payload holds at most 8,000 bytes: a message per PER_MESSAGE projects.
        for (let i = 0; i < entries.length; i += PER_MESSAGE) {
          const ms = Object.fromEntries(entries.slice(i, i + PER_MESSAGE));
          publishBroadcastNow(pool!, 'data.statement-time', { origin, at, ms }).catch((err: unknown) =>
            opts.logger.warn({ err: (err as Error).message }, 'data: statement time not shared'),
          );
        }
      }, SHARE_EVERY_MS);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await listener?.stop();
      listener = undefined;
      await pool?.end();
      pool = undefined;
    },
  };
}
