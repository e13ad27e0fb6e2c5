// Security tests are tables of attacks (DESIGN §9): each row names the attack, makes the requests a hostile
// caller would, says the refusal it must meet, and checks that the neighbour (another project, the platform,
// the rest of the same project) is intact afterwards.
import { expect, it } from '@jest/globals';
import type { Res } from '../support/http.ts';

export type Refusal = {
  status: number;
  /** `error.code` of the platform's error body. */
  code?: string;
  /** RFC 6749 `error` of the OAuth endpoints. */
  oauthError?: string;
  /** Headers the answer must carry (lower-case names), e.g. `retry-after`. */
  headers?: string[];
  /** Text that must NOT appear anywhere in the answer (a secret, a row, a detail). */
  notContaining?: () => string[];
};

export type Attack = {
  /** A sentence: what the hostile caller tries. */
  name: string;
  /** Makes the requests; answers the one that must be refused. */
  attack: () => Promise<Res>;
  refused: Refusal;
  /** The neighbour checked intact after the attack. */
  intact?: () => Promise<void>;
};

/** Checks one answer against its refusal. */
export function expectRefused(res: Res, r: Refusal): void {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? null);
  expect({ status: res.status, body: text.slice(0, 600) }).toEqual({ status: r.status, body: expect.any(String) });
  if (r.code) expect(res.body?.error?.code).toBe(r.code);
  if (r.oauthError) expect(res.body?.error).toBe(r.oauthError);
  for (const h of r.headers ?? []) expect(res.headers.get(h)).toBeTruthy();
  for (const s of r.notContaining?.() ?? []) expect(text).not.toContain(s);
}

/** One `it` per row: the attack is refused as said and the neighbour is intact. */
export function attackTable(rows: Attack[], timeoutMs = 30_000): void {
  for (const row of rows) {
    it(
      row.name,
      async () => {
        expectRefused(await row.attack(), row.refused);
        await row.intact?.();
      },
      timeoutMs,
    );
  }
}
