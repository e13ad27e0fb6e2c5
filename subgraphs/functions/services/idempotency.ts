// Idempotency-Key, one implementation for the webhook receiver and invoke (sync and async). A key belongs to a
// scope of the project (`webhook/<slug>`, `invoke/<name>/<caller>`) and to one request (a digest of its body):
// - the first request with a key claims it (one statement: a concurrent request with the same key cannot claim it too),
//   runs, and stores its answer for 24 hours;
// - the same key and body later answers that stored answer (`X-Idempotent-Replay: true`) without running again, or
//   409 CONFLICT while the first is still running;
// - the same key with another body is 422 IDEMPOTENCY_KEY_REUSED (also while the first runs);
// - a run that fails (an error, not a function's own `{error, status}` answer) stores nothing and frees the key, so
//   the sender's retry runs again;
// - a claim whose process died (no answer by the end of its lease: the function's timeout plus a minute) is taken
//   over by the next request with that key instead of answering 409 until it expires.
// Expired keys are deleted by the executions sweep (`sweepExpired`).
import crypto from 'node:crypto';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Sql } from './sql.ts';

/** How long a key's answer is kept. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;
/** What a key may be: 1 to 255 visible ASCII characters (a UUID, `evt_123`, ...). */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** An answer to give over HTTP (what a receiver or invoke answers, and what a key stores). */
export type HttpAnswer = { status: number; body: unknown; headers: Record<string, string> };

export type IdempotentRequest = {
  projectId: string;
  /** What the key belongs to within the project. */
  scope: string;
  /** The caller's key; null or undefined: no idempotency (the work runs). */
  key: string | null | undefined;
  /** A digest of what makes two requests the same (`fingerprintOf`). */
  fingerprint: string;
  /** How long the claim stands before another request with the key may take it over (the run's longest time). */
  leaseMs: number;
};

/** The digest of a request: its kind and its body, as sent. */
export function fingerprintOf(...parts: string[]): string {
  return crypto.createHash('sha256').update(parts.join('\n')).digest('hex');
}

/** Checks a key's form; VALIDATION_FAILED naming the header otherwise. */
export function checkIdempotencyKey(key: unknown): string {
  if (typeof key !== 'string' || !KEY.test(key))
    throw errors.validation('Idempotency-Key', 'must be 1 to 255 visible ASCII characters');
  return key;
}

export type Idempotency = ReturnType<typeof createIdempotency>;

type Stored = { fingerprint: string | null; response: HttpAnswer | null };

/** Creates the key store over the subgraph's SQL. */
export function createIdempotency({ sql }: { sql: Sql }) {
  return {
    /** Runs `work` at most once per key and request within the window; see the file's header for the rules. */
    async run(req: IdempotentRequest, work: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
      if (req.key === null || req.key === undefined) return await work();
      const key = checkIdempotencyKey(req.key);
      const now = Date.now();
      const claimId = crypto.randomUUID();
      // Claim: a new key, or one past its window, or a claim whose lease ran out without an answer.
      const claimed = await sql.rows(
        `insert into function_idempotency (project_id, scope, key, fingerprint, response, created_at, claim_id, claimed_until)
         values (?, ?, ?, ?, null, ?, ?, ?)
         on conflict (project_id, scope, key) do update
           set fingerprint = excluded.fingerprint, response = null, created_at = excluded.created_at, claim_id = excluded.claim_id, claimed_until = excluded.claimed_until
           where function_idempotency.created_at < ? or (function_idempotency.response is null and function_idempotency.claimed_until < ?)
         returning claim_id`,
        [
          req.projectId,
          req.scope,
          key,
          req.fingerprint,
          new Date(now),
          claimId,
          new Date(now + req.leaseMs),
          new Date(now - IDEMPOTENCY_WINDOW_MS),
          new Date(now),
        ],
      );
      if (claimed.length === 0) {
        const [stored] = await sql.rows<Stored>(
          'select fingerprint, response from function_idempotency where project_id = ? and scope = ? and key = ?',
          [req.projectId, req.scope, key],
        );
        // Gone in between (a failed first run freed it): the caller may simply send it again.
        if (!stored)
          throw errors.conflict('A request with this Idempotency-Key is still being handled', { idempotency_key: key });
        if (stored.fingerprint !== null && stored.fingerprint !== req.fingerprint) {
          throw new AppError(
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was already used with a different request body (keys are kept 24 hours): use a new key for a new request',
            {
              idempotency_key: key,
            },
          );
        }
        if (!stored.response)
          throw errors.conflict('A request with this Idempotency-Key is still being handled', { idempotency_key: key });
        return { ...stored.response, headers: { ...stored.response.headers, 'x-idempotent-replay': 'true' } };
      }
      let answer: HttpAnswer;
      try {
        answer = await work();
      } catch (err) {
        // A failure is not stored: the key is freed so a retry runs again.
        await sql
          .run(
            'delete from function_idempotency where project_id = ? and scope = ? and key = ? and claim_id = ? and response is null',
            [req.projectId, req.scope, key, claimId],
          )
          .catch(() => {});
        throw err;
      }
      await sql.run(
        'update function_idempotency set response = ?::jsonb, claimed_until = null where project_id = ? and scope = ? and key = ? and claim_id = ?',
        [JSON.stringify(answer), req.projectId, req.scope, key, claimId],
      );
      return answer;
    },

    /** Deletes keys past their window (the executions sweep, every minute); answers how many. */
    async sweepExpired(): Promise<number> {
      return await sql.run('delete from function_idempotency where created_at < ?', [
        new Date(Date.now() - IDEMPOTENCY_WINDOW_MS),
      ]);
    },
  };
}
