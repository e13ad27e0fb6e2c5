// What an inbound webhook or an invoke needs before it can run — the function (a receiver's, or the one invoked by
// name) and the project's sealed secrets — kept in memory by every process that serves them, so a known receiver or
// function skips the lookup (one SQL statement whose planning alone cost more than the data insert the function
// makes).
//
// Changes take effect on the very next request in every process: every change to a project's receivers,
// functions or secrets (and its deletion) publishes `functions.changed` (platform/broadcast.ts) in the same
// transaction, and the process that made it also announces it locally after commit; every process drops the
// project's entries. A hit is served only after a round trip on the broadcast connection (`sync`, shared by
// concurrent requests), so whatever was committed before the request arrived has been handled even when the
// NOTIFY is still on its way. While the broadcast connection is down nothing is served from the cache, and it
// is emptied when the connection comes back (messages may have been missed). Entries also expire (TTL).
// Secrets stay sealed in the cache; they are opened for each run, as before.
import { LRUCache } from 'lru-cache';
import {
  announceLocally,
  publishBroadcast,
  startBroadcastListener,
  type BroadcastListener,
} from '../../../platform/broadcast.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { EdgeFunction } from './functions.ts';
import type { Sql } from './sql.ts';

export const RECEIVER_CACHE_MAX = 5_000;
/** The cache holds at most about this many bytes of definitions and sealed secrets (a larger entry is not kept). */
export const RECEIVER_CACHE_MAX_BYTES = 32 * 1024 * 1024;
export const RECEIVER_CACHE_TTL_MS = 60_000;

/** About how much memory an entry holds (its steps as JSON, its sealed secrets, the rest). */
function sizeOf(e: ReceiverEntry): number {
  let n = 512 + JSON.stringify(e.fn.steps).length;
  for (const [name, value] of Object.entries(e.sealedSecrets)) n += name.length + value.length;
  return n;
}

/** A receiver ready to run: its function as it is now and its project's secrets, sealed. */
export type ReceiverEntry = { fn: EdgeFunction; sealedSecrets: Record<string, string> };

/** Publishes `functions.changed` for the project inside `tx` (delivered at its commit). */
export async function publishFunctionsChanged(tx: Sql, projectId: string): Promise<void> {
  await publishBroadcast({ execute: async (sql, params) => await tx.run(sql, params) }, 'functions.changed', {
    projectId,
  });
}

/** After the commit: this process's caches drop the project's entries at once, without waiting for the NOTIFY. */
export function announceFunctionsChanged(projectId: string): void {
  announceLocally('functions.changed', { projectId });
}

export type ReceiverCache = ReturnType<typeof createReceiverCache>;

type Listener = Pick<BroadcastListener, 'on' | 'onReset' | 'listening' | 'sync' | 'stop'>;

/** The cache; it serves nothing until `start` (or `attach`) gave it a listening broadcast connection. */
export function createReceiverCache(opts: { max?: number; maxBytes?: number; ttlMs?: number } = {}) {
  const entries = new LRUCache<string, ReceiverEntry>({
    max: opts.max ?? RECEIVER_CACHE_MAX,
    maxSize: opts.maxBytes ?? RECEIVER_CACHE_MAX_BYTES,
    sizeCalculation: sizeOf,
    ttl: opts.ttlMs ?? RECEIVER_CACHE_TTL_MS,
  });
  let listener: Listener | undefined;
  let gen = 0;
  const keyOf = (projectId: string, slug: string) => `${projectId}/${slug}`;
  // A space is in no slug: a function's key never meets a receiver's.
  const functionKeyOf = (projectId: string, name: string) => `${projectId}/function ${name}`;

  const clear = () => {
    gen++;
    entries.clear();
  };
  const invalidate = (projectId: string) => {
    gen++;
    const prefix = `${projectId}/`;
    // Changes are rare and the cache is bounded: a scan is simpler than an index by project.
    for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
  };
  const attach = (l: Listener) => {
    l.on('functions.changed', (payload) => {
      if (typeof payload?.projectId === 'string') invalidate(payload.projectId);
      else clear();
    });
    l.onReset(clear);
    clear();
    listener = l;
  };

  return {
    keyOf,
    functionKeyOf,
    /** Listens for `functions.changed` on the database's broadcast channel. */
    async start(databaseUrl: string, logger: Logger): Promise<void> {
      attach(await startBroadcastListener({ url: databaseUrl, logger }));
    },
    /** Uses an existing listener (tests). */
    attach,
    /**
     * The entry, when cached and still valid after every change committed before the call; undefined
     * otherwise (then read the database, and `remember` what it answered).
     */
    async get(key: string): Promise<ReceiverEntry | undefined> {
      const l = listener;
      if (!l || !l.listening() || !entries.has(key)) return undefined;
      try {
        await l.sync();
      } catch {
        return undefined;
      }
      return l.listening() ? entries.get(key) : undefined;
    },
    /** A token for `remember`, taken before the database is read. */
    generation: () => gen,
    /** Caches what the database answered, unless something changed since `generation` was taken. */
    remember(key: string, entry: ReceiverEntry, generation: number): void {
      if (!listener || !listener.listening() || generation !== gen) return;
      entries.set(key, entry);
    },
    invalidate,
    clear,
    size: () => entries.size,
    async stop(): Promise<void> {
      const l = listener;
      listener = undefined;
      clear();
      await l?.stop();
    },
  };
}
