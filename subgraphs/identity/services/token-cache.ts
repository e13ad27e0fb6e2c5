// What the access-token check learnt from the database about client_credentials tokens: this jti is not
// revoked, its project is not deleted and its key was current or previous. Each check of such a token
// (router, /introspect) otherwise reads that back from the database, so it is kept in memory here.
// End-user tokens are not cached: their sessions end in too many ways (logout, password change, reuse).
// Every change that makes a token invalid drops what it touches at once: in this process right after its
// commit, in every other one through the `access-tokens.changed` broadcast sent in the same transaction.
// A read that overlapped a change is not stored (`generation` moves on every change); nothing is trusted
// while the broadcast connection is down and a reconnection empties the cache; nothing is kept longer
// than a minute; and nothing is cached until broadcasts are followed (`follow`).
import type { BroadcastTopics } from '../../../platform/broadcast.ts';

export type AccessTokenChange = BroadcastTopics['access-tokens.changed'];

const MAX_ENTRIES = 50_000;
const TTL_MS = 60_000;

type Entry = { projectId: string; kid: string; at: number };

export type TokenStateCache = ReturnType<typeof createTokenStateCache>;

export function createTokenStateCache() {
  const entries = new Map<string, Entry>();
  let generation = 0;
  /** Whether broadcasts are heard right now (set by `follow`); nothing is cached otherwise. */
  let live: () => boolean = () => false;
  return {
    /** Whether the token `jti` (of `projectId`, signed with `kid`) was found valid and nothing changed since. */
    known(jti: string, projectId: string, kid: string): boolean {
      const e = live() ? entries.get(jti) : undefined;
      if (!e) return false;
      if (Date.now() - e.at > TTL_MS || e.projectId !== projectId || e.kid !== kid) {
        entries.delete(jti);
        return false;
      }
      return true;
    },
    /** The generation to hand back to `remember` after reading the database. */
    begin: () => generation,
    remember(since: number, jti: string, projectId: string, kid: string): void {
      if (since !== generation || !live()) return;
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(jti, { projectId, kid, at: Date.now() });
    },
    /** Drops the tokens named, those of a project, or every one (a key change, or nothing named). */
    drop(change: AccessTokenChange): void {
      generation++;
      if (change.keys || (!change.jtis && !change.projectId)) return entries.clear();
      for (const jti of change.jtis ?? []) entries.delete(jti);
      if (change.projectId) for (const [jti, e] of entries) if (e.projectId === change.projectId) entries.delete(jti);
    },
    /** From now on, cache while `isLive()` says broadcasts are heard. */
    follow(isLive: () => boolean): void {
      generation++;
      entries.clear();
      live = isLive;
    },
    size: () => entries.size,
  };
}
