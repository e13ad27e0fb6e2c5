// Sessions whose refresh token rotates on every use, with reuse detection (OAuth 2.0 Security BCP §4.14.2): the
// tenant sessions (subgraphs/tenant) and the end-users' sessions (subgraphs/identity) are each one row of a table of
// their subgraph holding the columns below. The swap is one conditional UPDATE, so of two requests presenting the
// same token only one wins; presenting a token that was already rotated away revokes the session (the family).
// Each subgraph keeps its own table, principal and error wording; the columns, the statements and the life of a
// token are these.
import { p } from '@mikro-orm/postgresql';
import { sha256Hex } from './crypto.ts';

/** How many rotated refresh tokens a session remembers for reuse detection. */
export const ROTATED_KEPT = 100;

/** The columns every refresh session has, as entity properties (spread into the subgraph's entity; fresh builders each call). */
export const refreshSessionProperties = () => ({
  /** SHA-256 of the current refresh token. */
  refreshTokenHash: p.text(),
  /** SHA-256 of recently rotated refresh tokens (newest first): presenting one revokes the session. */
  rotatedRefreshTokenHashes: p.array(),
  createdAt: p.datetime(),
  lastRefreshedAt: p.datetime().nullable(),
  /** End of the refresh token's life; sliding, moved on every refresh. */
  expiresAt: p.datetime(),
  revokedAt: p.datetime().nullable(),
  /** `logout`, `refresh_token_reuse`, ... */
  revokedReason: p.text().nullable(),
  ip: p.text().nullable(),
});

/** When a refresh token issued now stops working. */
export const refreshExpiry = (ttlSeconds: number): Date => new Date(Date.now() + ttlSeconds * 1000);

/** The refresh columns of a new session holding `refreshToken`. */
export function newRefreshSession(refreshToken: string, ttlSeconds: number, ip: string | undefined) {
  return {
    refreshTokenHash: sha256Hex(refreshToken),
    rotatedRefreshTokenHashes: [] as string[],
    createdAt: new Date(),
    lastRefreshedAt: null,
    expiresAt: refreshExpiry(ttlSeconds),
    revokedAt: null,
    revokedReason: null,
    ip: ip ?? null,
  };
}

type Execute = { execute: <T>(sql: string, params?: unknown[]) => Promise<T> };

/**
 * Swaps the live session's current token hash `oldHash` for `nextToken`'s (keeping the old one among the rotated)
 * and slides its expiry; `where` narrows the sessions (e.g. `and client_id = ?`, with its `params`). Answers the
 * `returning` columns of the session swapped, or nothing: then the token is unknown, expired, revoked or reused.
 */
export async function rotateRefreshToken<T>(
  em: Execute,
  opts: {
    table: string;
    oldHash: string;
    nextToken: string;
    ttlSeconds: number;
    returning: string;
    where?: string;
    params?: unknown[];
    /** More columns to set in the same statement (`, a = ?, b = ?`), with their `setParams`. */
    set?: string;
    setParams?: unknown[];
  },
): Promise<T | undefined> {
  const rows = await em.execute<T[]>(
    `update ${opts.table}
        set refresh_token_hash = ?,
            rotated_refresh_token_hashes = (array_prepend(refresh_token_hash, rotated_refresh_token_hashes))[1:${ROTATED_KEPT}],
            last_refreshed_at = now(),
            expires_at = ? ${opts.set ?? ''}
      where refresh_token_hash = ? ${opts.where ?? ''} and revoked_at is null and expires_at > now()
      returning ${opts.returning}`,
    [
      sha256Hex(opts.nextToken),
      refreshExpiry(opts.ttlSeconds),
      ...(opts.setParams ?? []),
      opts.oldHash,
      ...(opts.params ?? []),
    ],
  );
  return rows[0];
}

/** Revokes the live sessions that rotated `oldHash` away (it was presented again); answers their ids. */
export async function revokeReusedSessions(em: Execute, table: string, oldHash: string): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `update ${table} set revoked_at = now(), revoked_reason = 'refresh_token_reuse'
      where rotated_refresh_token_hashes @> array[?]::text[] and revoked_at is null
      returning id`,
    [oldHash],
  );
  return rows.map((r) => r.id);
}
