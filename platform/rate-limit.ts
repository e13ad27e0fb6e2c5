// Counts failed sign-in and MFA attempts per key in fixed windows, in this process's memory. A limiter given a
// `share` (createLimitSharing) also tells every other process of each failure and reset over the platform's
// broadcasts (`rate-limits.changed`, keys hashed), and counts theirs: with several instances of a subgraph the
// limit holds for all of them together, not per instance. Checking stays a memory read; only a failure
// (or a reset after a success) costs a NOTIFY. Messages missed while a broadcast connection is down are not
// replayed, so during a reconnection a limit may briefly count only local failures.
import { createHash, randomUUID } from 'node:crypto';
import { errors } from './errors.ts';
import { startBroadcastListener, type BroadcastListener, type BroadcastTopics } from './broadcast.ts';
import type { Logger } from './logger.ts';

export type FailureLimiter = {
  /** Throws RATE_LIMITED when `key` already failed `limit` times in the current window. */
  check: (key: string) => void;
  /** Records one failure for `key`. */
  fail: (key: string) => void;
  /** Forgets `key` (after a success). */
  reset: (key: string) => void;
};

/** Creates a limiter allowing `limit` failures per `windowMs`. */
export function createFailureLimiter(opts: {
  limit: number;
  windowMs: number;
  now?: () => number;
  maxKeys?: number;
  share?: SharedScope;
}): FailureLimiter {
  const now = opts.now ?? Date.now;
  const maxKeys = opts.maxKeys ?? 100_000;
  const windows = new Map<string, { start: number; count: number }>();
  // Shared limiters keep hashed keys, the form other processes announce them in.
  const keyOf = opts.share
    ? (key: string) => createHash('sha256').update(key).digest('base64url')
    : (key: string) => key;

  const current = (key: string) => {
    const w = windows.get(key);
    if (w && now() - w.start < opts.windowMs) return w;
    if (w) windows.delete(key);
    return undefined;
  };

  const count = (k: string) => {
    const w = current(k);
    if (w) {
      w.count += 1;
      return;
    }
    // Bounded memory: drop the oldest entry (Map keeps insertion order).
    if (windows.size >= maxKeys) windows.delete(windows.keys().next().value as string);
    windows.set(k, { start: now(), count: 1 });
  };
  opts.share?.subscribe((op, k) => (op === 'fail' ? count(k) : windows.delete(k)));

  return {
    check(key) {
      const w = current(keyOf(key));
      if (w && w.count >= opts.limit)
        throw errors.rateLimited(Math.max(1, Math.ceil((w.start + opts.windowMs - now()) / 1000)));
    },
    fail(key) {
      const k = keyOf(key);
      count(k);
      opts.share?.publish('fail', k);
    },
    reset(key) {
      const k = keyOf(key);
      if (windows.delete(k)) opts.share?.publish('reset', k);
    },
  };
}

type LimitMessage = BroadcastTopics['rate-limits.changed'];

/** One limiter's link to the other processes (from `LimitSharing.scope`). */
export type SharedScope = {
  publish: (op: 'fail' | 'reset', hashedKey: string) => void;
  subscribe: (apply: (op: 'fail' | 'reset', hashedKey: string) => void) => void;
};

export type LimitSharing = {
  /** The link for the limiter named `name` (the same name in every process, e.g. `identity.signIn.account`). */
  scope: (name: string) => SharedScope;
  /** Starts hearing other processes (until then failures count locally and are still announced). */
  start: () => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * Links limiters across processes: `publish` sends a message (a `rate-limits.changed` broadcast, e.g. with
 * `publishBroadcast` on the subgraph's database); `start` listens on `url` (no url: local counting only).
 */
export function createLimitSharing(opts: {
  url?: string;
  logger: Logger;
  publish: (message: LimitMessage) => Promise<void>;
}): LimitSharing {
  const origin = randomUUID();
  const scopes = new Map<string, (op: 'fail' | 'reset', hashedKey: string) => void>();
  let listener: BroadcastListener | undefined;
  return {
    scope: (name) => ({
      publish: (op, key) => {
        opts
          .publish({ origin, scope: name, op, key })
          .catch((err: unknown) => opts.logger.warn({ err, scope: name }, 'rate-limit broadcast failed'));
      },
      subscribe: (apply) => void scopes.set(name, apply),
    }),
    async start() {
      if (listener || !opts.url) return;
      listener = await startBroadcastListener({ url: opts.url, logger: opts.logger });
      listener.on('rate-limits.changed', (m) => {
        if (m.origin !== origin) scopes.get(m.scope)?.(m.op, m.key);
      });
    },
    async stop() {
      await listener?.stop();
      listener = undefined;
    },
  };
}
