// A cache of the tenant subgraph's answers to `_authenticate` (project API keys, tenant access tokens), kept
// by the process that authenticates (front door / router), so a request with a known credential skips the
// whole lookup: a GraphQL execution, an ES256 signature check and an SQL read (in split mode also an HTTP hop).
//
// Revocation stays instant: the tenant subgraph publishes `credentials.changed` (platform/broadcast.ts) in the
// same transaction as every change that ends a credential (API key regenerated, project deleted, session
// logged out or revoked, signing keys rotated), announces it locally after commit, and answers only a lease
// (SYNC_LEASE_MS) later; every process drops the matching entries. A hit is served only once a round trip on the
// broadcast connection SENT at most a lease before the request came in has returned (`syncSince`, shared by
// concurrent requests): whatever was committed before the change's answer went out has then been handled, even when
// the NOTIFY would otherwise still be on its way from another process. Round trips are kept going while requests
// come, so a hit rarely waits for one (bench N1: a round trip on a busy machine took 10-80 ms, every request's
// cost when each waited for its own). While the broadcast connection is down
// the cache is bypassed, and it is emptied when it comes back (messages may have been missed). Entries also
// expire (TTL, and a token's own `exp`) as a safety net. Only successful lookups are cached: a wrong key is
// checked against the database every time. Keys are SHA-256 hashes, never the credentials themselves.
import { LRUCache } from 'lru-cache';
import type { Principal } from '../platform/auth.ts';
import { sha256Hex } from '../platform/crypto.ts';
import {
  SYNC_LEASE_MS,
  startBroadcastListener,
  type BroadcastListener,
  type BroadcastTopics,
} from '../platform/broadcast.ts';
import type { Logger } from '../platform/logger.ts';

/** Principals the tenant subgraph vouches for. */
export type CachedPrincipal = Extract<
  Principal,
  { kind: 'tenant' } | { kind: 'project' } | { kind: 'publishable' } | { kind: 'operator' }
>;

export const CREDENTIAL_CACHE_MAX = 10_000;
export const CREDENTIAL_CACHE_TTL_MS = 30_000;

export type CredentialCache = {
  /** The cache key of an API key (its SHA-256, as stored in `projects.api_key_hash`) or of a token. */
  keyOf: (creds: { apiKey?: string; bearer?: string }) => string;
  /** The principal, when cached and still valid after every change answered before the call (see `syncSince`). */
  get: (key: string) => Promise<CachedPrincipal | undefined>;
  /** The entry as it stands, without waiting for pending changes (inspection, tests). */
  peek: (key: string) => CachedPrincipal | undefined;
  /** A token for `remember`: taken before the lookup, it makes `remember` a no-op if anything was invalidated meanwhile. */
  generation: () => number;
  /** Caches a successful lookup made since `generation` was taken; `expiresAt` (ms) bounds a token's entry. */
  remember: (key: string, principal: CachedPrincipal, generation: number, expiresAt?: number) => void;
  /**
   * Whether the entry should be checked again by its subgraph now, while it is still served: it has less than a
   * quarter of the TTL left (entries bounded by a token's expiry are not: checking again would not extend them).
   * Checked in the background (authenticate.ts), a busy credential's entry is renewed before it expires, rather than
   * every request in flight at its expiry making a lookup of its own (bench N1: 140-250 ms under load, once a TTL).
   */
  dueForRecheck: (key: string) => boolean;
  /**
   * Runs `lookup` of `key`, or joins the one of the same key already running, when it started at most SYNC_LEASE_MS
   * before this call: a revocation answered before this call committed a lease before its answer, so before that
   * lookup read anything. Concurrent misses of one credential then make one lookup, not one each.
   */
  shared: <T>(key: string, lookup: () => Promise<T>) => Promise<T>;
  /** Drops one entry (its subgraph no longer vouches for it). */
  forget: (key: string) => void;
  /** Drops what a `credentials.changed` message names. */
  invalidate: (change: BroadcastTopics['credentials.changed']) => void;
  clear: () => void;
  size: () => number;
  stop: () => Promise<void>;
};

/** Creates the cache; without a listener (no database URL) it caches nothing. */
export function createCredentialCache(
  listener: Pick<BroadcastListener, 'on' | 'onReset' | 'listening' | 'syncSince' | 'stop'> | undefined,
  opts: { max?: number; ttlMs?: number; now?: () => number } = {},
): CredentialCache {
  // `now` (milliseconds since the epoch): a test's clock, so that expiry is tested without waiting.
  const now = opts.now ?? Date.now;
  const ttlMs = opts.ttlMs ?? CREDENTIAL_CACHE_TTL_MS;
  // `until`: the expiry (ms) of the token the entry stands for, when it has one.
  const entries = new LRUCache<string, { principal: CachedPrincipal; until?: number }>({
    max: opts.max ?? CREDENTIAL_CACHE_MAX,
    ttl: ttlMs,
    ...(opts.now ? { perf: { now: opts.now }, ttlResolution: 0 } : {}),
  });
  const running = new Map<string, { startedAt: number; lookup: Promise<unknown> }>();
  let gen = 0;
  const trusted = () => listener !== undefined && listener.listening();

  const clear = () => {
    gen++;
    entries.clear();
  };
  const invalidate = (change: BroadcastTopics['credentials.changed']) => {
    gen++;
    if (change.all) return entries.clear();
    for (const h of change.apiKeyHashes ?? []) entries.delete(`k:${h}`);
    const sessions = new Set(change.sessionIds ?? []);
    const operatorKeys = new Set(change.operatorKeyIds ?? []);
    if (sessions.size === 0 && operatorKeys.size === 0 && !change.projectId && !change.tenantId) return;
    // Invalidations are rare and the cache is bounded: a scan is simpler than secondary indexes.
    for (const [key, { principal: p }] of entries.entries()) {
      if (
        (p.kind === 'tenant' && sessions.has(p.sessionId)) ||
        (p.kind === 'operator' && operatorKeys.has(p.keyId)) ||
        (change.projectId !== undefined &&
          (p.kind === 'project' || p.kind === 'publishable') &&
          p.projectId === change.projectId) ||
        (change.tenantId !== undefined && 'tenantId' in p && p.tenantId === change.tenantId)
      ) {
        entries.delete(key);
      }
    }
  };
  listener?.on('credentials.changed', invalidate);
  listener?.onReset(clear);

  return {
    keyOf: (creds) =>
      creds.apiKey !== undefined ? `k:${sha256Hex(creds.apiKey)}` : `t:${sha256Hex(creds.bearer ?? '')}`,
    get: async (key) => {
      if (!trusted() || !entries.has(key)) return undefined;
      try {
        await listener!.syncSince(performance.now() - SYNC_LEASE_MS);
      } catch {
        return undefined; // the connection went down: nothing is trusted until it is back
      }
      return trusted() ? entries.get(key)?.principal : undefined;
    },
    peek: (key) => (trusted() ? entries.get(key)?.principal : undefined),
    dueForRecheck: (key) => {
      const entry = entries.peek(key);
      if (!entry || running.has(key) || entries.getRemainingTTL(key) >= ttlMs / 4) return false;
      // A token close to its own expiry gains nothing from another check: its entry cannot outlive it.
      return entry.until === undefined || entry.until - now() >= ttlMs / 2;
    },
    shared: <T>(key: string, lookup: () => Promise<T>): Promise<T> => {
      const now = performance.now();
      const joined = running.get(key);
      if (joined && joined.startedAt >= now - SYNC_LEASE_MS) return joined.lookup as Promise<T>;
      const mine = { startedAt: now, lookup: lookup() };
      running.set(key, mine);
      const done = () => {
        if (running.get(key) === mine) running.delete(key);
      };
      mine.lookup.then(done, done);
      return mine.lookup as Promise<T>;
    },
    forget: (key) => {
      gen++;
      entries.delete(key);
    },
    generation: () => gen,
    remember: (key, principal, generation, expiresAt) => {
      if (!trusted() || generation !== gen) return;
      const ttl = expiresAt === undefined ? undefined : Math.min(ttlMs, expiresAt - now());
      if (ttl !== undefined && ttl <= 0) return;
      entries.set(key, { principal, until: expiresAt }, ttl === undefined ? undefined : { ttl });
    },
    invalidate,
    clear,
    size: () => entries.size,
    stop: async () => {
      clear();
      await listener?.stop();
    },
  };
}

/** Starts a broadcast listener on `url` and a cache fed by it; no URL, no cache (every lookup goes to the subgraph). */
export async function startCredentialCache(url: string | undefined, logger: Logger): Promise<CredentialCache> {
  if (!url) {
    logger.info('no database URL: credentials are not cached (every request is authenticated by its subgraph)');
    return createCredentialCache(undefined);
  }
  return createCredentialCache(await startBroadcastListener({ url, logger }));
}
