// Per-project figures shared across processes by broadcast: about once a second a process publishes what it has to
// tell the others, split into messages of at most PROJECTS_PER_MESSAGE projects (a NOTIFY payload holds at most 8,000
// bytes), on a one-connection pool of its own, and hears what the others publish (its own messages, known by `origin`,
// are skipped). Messages are signed like every broadcast (platform/broadcast.ts). Used by the front doors' request
// counts (router/request-quota.ts) and the data processes' statement time and realtime subscribers.
import crypto from 'node:crypto';
import type pg from 'pg';
import {
  publishBroadcastNow,
  startBroadcastListener,
  type BroadcastListener,
  type BroadcastTopic,
  type BroadcastTopics,
} from './broadcast.ts';
import type { Logger } from './logger.ts';
import { createPgPool } from './pg-pool.ts';

const SHARE_EVERY_MS = 1_000;
/** Projects per message: a project id and its figure take ~60 bytes of JSON, 80 of them stay far under 8,000. */
export const PROJECTS_PER_MESSAGE = 80;

/** The topics whose messages say which process sent them (`origin`). */
export type SharingTopic = {
  [K in BroadcastTopic]: BroadcastTopics[K] extends { origin: string } ? K : never;
}[BroadcastTopic];

/** `entries` as the per-message maps that carry them (none when there are none). */
export function inMessages(
  entries: Iterable<[string, number]>,
  perMessage = PROJECTS_PER_MESSAGE,
): Record<string, number>[] {
  const all = [...entries];
  const parts: Record<string, number>[] = [];
  for (let i = 0; i < all.length; i += perMessage) parts.push(Object.fromEntries(all.slice(i, i + perMessage)));
  return parts;
}

export type BroadcastSharing = {
  /** Whether `start` ran (and `stop` did not since). */
  started: () => boolean;
  /** Listens on the platform database and publishes once a second. */
  start: (databaseUrl: string) => Promise<void>;
  stop: () => Promise<void>;
};

/** Creates the sharing of one topic; `name` names its pool ('data statement time' → tessera-data-statement-time). */
export function createBroadcastSharing<T extends SharingTopic>(opts: {
  topic: T;
  name: string;
  /** The messages to publish now, as made with `inMessages` (none: nothing is sent this second). */
  outgoing: (origin: string) => BroadcastTopics[T][];
  /** A message of another process. */
  heard: (message: BroadcastTopics[T]) => void;
  logger: Logger;
}): BroadcastSharing {
  const origin = crypto.randomUUID();
  let listener: BroadcastListener | undefined;
  let pool: pg.Pool | undefined;
  let timer: NodeJS.Timeout | undefined;
  return {
    started: () => timer !== undefined,
    async start(databaseUrl) {
      if (listener) return;
      listener = await startBroadcastListener({ url: databaseUrl, logger: opts.logger });
      listener.on(opts.topic, (m) => {
        if (m.origin !== origin) opts.heard(m);
      });
      pool = createPgPool(
        { connectionString: databaseUrl, max: 1, application_name: `tessera-${opts.name.replaceAll(' ', '-')}` },
        opts.logger,
        opts.name,
      );
      timer = setInterval(() => {
        for (const message of opts.outgoing(origin))
          publishBroadcastNow(pool!, opts.topic, message).catch((err: unknown) =>
            opts.logger.warn({ err: (err as Error).message, topic: opts.topic }, `${opts.name}: not shared`),
          );
      }, SHARE_EVERY_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await listener?.stop();
      listener = undefined;
      await pool?.end();
      pool = undefined;
    },
  };
}
