// A ring of ES256 keys signing JWTs, kept in one table of the calling subgraph: one `current` key signs,
// `previous` ones still verify, `retired` ones do nothing. The private halves are sealed with the
// subgraph's secret box. Creation and rotation are serialised across instances by a transaction-scoped
// advisory lock; keys are cached and re-read every `refreshMs` (another instance may have rotated) and
// on an unknown kid (at most every `reloadMinIntervalMs`). Plain SQL, so it depends on no entity.
//
// The table must have the columns
//   kid text primary key, alg text, public_jwk jsonb, private_jwk_sealed text,
//   status text ('current' | 'previous' | 'retired'), created_at timestamptz, retired_at timestamptz
// and, with `keepPreviousForMs`, demoted_at timestamptz. Audience, issuer, claims, publication and
// explicit retirement belong to the callers.
// Signing and verifying run on node:crypto KeyObjects imported once per key (JWS compact serialisation,
// RFC 7515/7518: ECDSA P-256 SHA-256 with the 64-byte r||s signature): measured 25 µs of CPU per
// signature against 120 µs through jose's WebCrypto path, which every issued token pays.
import crypto from 'node:crypto';
import { p } from '@mikro-orm/postgresql';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload } from 'jose';
import type { SecretBox } from './crypto.ts';
import { errors } from './errors.ts';

export const SIGNING_ALG = 'ES256';

/** The ring's columns as entity properties, for a subgraph's entity over its key table (fresh builders each call). */
export const signingKeyProperties = () => ({
  kid: p.text().primary(),
  alg: p.text(),
  publicJwk: p.json<Record<string, unknown>>(),
  /** Sealed private JWK (JSON). */
  privateJwkSealed: p.text(),
  /** `current`, `previous` or `retired`. */
  status: p.text(),
  createdAt: p.datetime(),
  retiredAt: p.datetime().nullable(),
});

/** Runs SQL with `?` placeholders and returns the rows (a MikroORM EntityManager is one). */
export type SqlExecutor = { execute: (sql: string, params?: unknown[]) => Promise<unknown> };

/** An executor that can also run a callback in one transaction. */
export type SqlDatabase = SqlExecutor & { transactional: <T>(fn: (tx: SqlExecutor) => Promise<T>) => Promise<T> };

export type SigningKeyRingOptions = {
  /** A database handle for one unit of work, e.g. `() => db.em()`. */
  db: () => SqlDatabase;
  /** The table holding the keys (a plain lower-case identifier). */
  table: string;
  /** Any fixed number shared by every instance of the subgraph, and by nothing else. */
  lockId: number;
  box: SecretBox;
  /** The keys are re-read when older than this. */
  refreshMs: number;
  /** An unknown kid re-reads the keys at most this often. */
  reloadMinIntervalMs: number;
  /**
   * With this (the table then has `demoted_at`): a rotation retires the previous keys demoted longer
   * ago than this. Without it: a rotation retires every previous key.
   */
  keepPreviousForMs?: number;
};

export type VerifyOptions = {
  issuer: string;
  audience?: string;
  /** The protected header's `typ` must be this. */
  typ?: string;
  /** Accept an expired token (e.g. an id_token_hint at logout). */
  allowExpired?: boolean;
};

type LoadedKey = {
  kid: string;
  status: string;
  publicJwk: JWK;
  publicKey: crypto.KeyObject;
  privateKey?: crypto.KeyObject;
};

type KeyRow = { kid: string; status: string; public_jwk: JWK | string; private_jwk_sealed: string };

export type SigningKeyRing = ReturnType<typeof createSigningKeyRing>;

const MAX_TOKEN_LENGTH = 16_384;
/** Verified tokens remembered (oldest forgotten first). */
const VERIFIED_MAX = 10_000;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function importKey(jwk: JWK, kind: 'public' | 'private'): crypto.KeyObject {
  const key = { key: jwk as crypto.JsonWebKey, format: 'jwk' as const };
  return kind === 'public' ? crypto.createPublicKey(key) : crypto.createPrivateKey(key);
}

// JWS carries an ECDSA signature as r||s, 32 bytes each (RFC 7518 §3.4); OpenSSL speaks DER. Node converts
// when asked (`dsaEncoding: 'ieee-p1363'`), but that option path costs more than the P-256 signature itself.

/** DER `SEQUENCE { INTEGER r, INTEGER s }` (as OpenSSL signs) to the 64 bytes r||s. */
export function derToRaw(der: Buffer): Buffer {
  const out = Buffer.alloc(64);
  // P-256 signatures are at most 72 bytes: the sequence length always fits in one byte.
  if (der[0] !== 0x30 || der[1] !== der.length - 2) throw new Error('not a DER ECDSA signature');
  let at = 2;
  for (const half of [0, 32]) {
    if (der[at] !== 0x02) throw new Error('not a DER ECDSA signature');
    const len = der[at + 1]!;
    let start = at + 2;
    let n = len;
    while (n > 32 && der[start] === 0) {
      start++;
      n--;
    }
    if (n > 32) throw new Error('ECDSA integer too long');
    der.copy(out, half + 32 - n, start, start + n);
    at += 2 + len;
  }
  return out;
}

/** The 64 bytes r||s to DER (minimal INTEGERs, a 0x00 before a high bit). */
export function rawToDer(raw: Buffer): Buffer {
  const int = (b: Buffer) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = b.subarray(i);
    return v[0]! & 0x80
      ? Buffer.concat([Buffer.from([0x02, v.length + 1, 0]), v])
      : Buffer.concat([Buffer.from([0x02, v.length]), v]);
  };
  const body = Buffer.concat([int(raw.subarray(0, 32)), int(raw.subarray(32, 64))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

function deepFreeze(value: unknown): void {
  if (!value || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

// Signatures are made in batches. Interleaved with request handling, one P-256 signature cost ~55 µs of CPU
// (its code and precomputed tables are evicted from the CPU caches by everything else a request does);
// back to back they cost ~25 µs. So a signature asked for is queued, and the queue is signed in one go once
// the event loop has finished its current phase (setImmediate): under load, every request whose bytes came in
// the same turn is signed together; alone, a request waits for nothing but the end of its own turn. Every
// ring of the process shares the queue; each entry carries its own key.
type PendingSignature = {
  input: string;
  key: crypto.KeyObject;
  resolve: (signature: string) => void;
  reject: (err: unknown) => void;
};
let pendingSignatures: PendingSignature[] = [];

function signPending(): void {
  const batch = pendingSignatures;
  pendingSignatures = [];
  for (const p of batch) {
    try {
      p.resolve(derToRaw(crypto.sign('sha256', Buffer.from(p.input, 'ascii'), p.key)).toString('base64url'));
    } catch (err) {
      p.reject(err);
    }
  }
}

/** The base64url ES256 signature (r||s) of a JWS signing input, made with the next batch. */
function signBatched(input: string, key: crypto.KeyObject): Promise<string> {
  return new Promise((resolve, reject) => {
    if (pendingSignatures.length === 0) setImmediate(signPending);
    pendingSignatures.push({ input, key, resolve, reject });
  });
}

/** A base64url JSON object (a JWS header or JWT claims set); undefined for anything else. */
function jsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** RFC 7519 §4.1 checks: issuer, audience, an expiry (required) in the future unless allowed, not-before and issued-at as numbers. */
function claimsHold(c: JWTPayload, v: VerifyOptions): boolean {
  const now = Math.floor(Date.now() / 1000);
  if (c.iss !== v.issuer) return false;
  if (v.audience !== undefined && !(c.aud === v.audience || (Array.isArray(c.aud) && c.aud.includes(v.audience))))
    return false;
  if (typeof c.exp !== 'number' || (!v.allowExpired && c.exp <= now)) return false;
  if (c.nbf !== undefined && (typeof c.nbf !== 'number' || c.nbf > now)) return false;
  if (c.iat !== undefined && typeof c.iat !== 'number') return false;
  return true;
}

/** Creates the key ring. Call `ensureCurrent()` once at start before signing. */
export function createSigningKeyRing(opts: SigningKeyRingOptions) {
  const { db, table, lockId, box, refreshMs, reloadMinIntervalMs, keepPreviousForMs } = opts;
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`not a plain table name: ${table}`);
  let keys = new Map<string, LoadedKey>();
  let current: LoadedKey | undefined;
  // Tokens whose signature verified, by their exact text: a signature over these bytes with the key of this
  // kid stays valid, so presenting the same token again (every request of a client, every introspection)
  // skips the ECDSA check. The key must still be loaded (a retired key is dropped on re-read) and the claims
  // (expiry) are checked every time. Only correctly signed tokens get in, so nobody can fill it with junk.
  const verified = new Map<string, { header: Record<string, unknown>; payload: JWTPayload; kid: string }>();
  /** The encoded protected header of each kid and typ signed with. */
  const headers = new Map<string, string>();
  let loadedAt = 0;
  let loading: Promise<void> | undefined;

  /** Re-reads the keys; concurrent callers share one read. */
  function load(): Promise<void> {
    loading ??= read().finally(() => {
      loading = undefined;
    });
    return loading;
  }

  async function read(): Promise<void> {
    const rows = (await db().execute(
      `select kid, status, public_jwk, private_jwk_sealed from ${table} where status in ('current', 'previous') order by created_at desc`,
    )) as KeyRow[];
    const next = new Map<string, LoadedKey>();
    let cur: LoadedKey | undefined;
    for (const row of rows) {
      const publicJwk = (typeof row.public_jwk === 'string' ? JSON.parse(row.public_jwk) : row.public_jwk) as JWK;
      const key: LoadedKey = { kid: row.kid, status: row.status, publicJwk, publicKey: importKey(publicJwk, 'public') };
      if (row.status === 'current') {
        key.privateKey = importKey(JSON.parse(box.decrypt(row.private_jwk_sealed)) as JWK, 'private');
        cur = key;
      }
      next.set(row.kid, key);
    }
    keys = next;
    current = cur;
    loadedAt = Date.now();
  }

  /** Under the advisory lock: demotes the current key (when `rotate`) and creates a new current one if none is. */
  async function createKey(rotate: boolean): Promise<string | undefined> {
    const created = await db().transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(?)', [lockId]);
      const [existing] = (await tx.execute(`select kid from ${table} where status = 'current'`)) as { kid: string }[];
      if (existing && !rotate) return undefined;
      const now = new Date();
      const at = now.toISOString();
      if (existing) {
        if (keepPreviousForMs === undefined) {
          await tx.execute(
            `update ${table} set status = 'retired', retired_at = ?::timestamptz where status = 'previous'`,
            [at],
          );
          await tx.execute(`update ${table} set status = 'previous' where kid = ?`, [existing.kid]);
        } else {
          // Previous keys demoted longer ago than a token lives can sign nothing still valid: retire them.
          const cutoff = new Date(now.getTime() - keepPreviousForMs).toISOString();
          await tx.execute(
            `update ${table} set status = 'retired', retired_at = ?::timestamptz where status = 'previous' and demoted_at < ?::timestamptz`,
            [at, cutoff],
          );
          await tx.execute(`update ${table} set status = 'previous', demoted_at = ?::timestamptz where kid = ?`, [
            at,
            existing.kid,
          ]);
        }
      }
      const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
      const kid = crypto.randomUUID();
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
      const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
      await tx.execute(
        `insert into ${table} (kid, alg, public_jwk, private_jwk_sealed, status, created_at) values (?, ?, ?::jsonb, ?, 'current', ?::timestamptz)`,
        [kid, SIGNING_ALG, JSON.stringify(publicJwk), box.encrypt(JSON.stringify(privateJwk)), at],
      );
      return kid;
    });
    await read();
    return created;
  }

  async function keyFor(kid: unknown): Promise<crypto.KeyObject | undefined> {
    if (typeof kid !== 'string') return undefined;
    let key = keys.get(kid);
    const age = Date.now() - loadedAt;
    if ((!key && age > reloadMinIntervalMs) || age > refreshMs) {
      await load();
      key = keys.get(kid);
    }
    return key?.publicKey;
  }

  /** Makes sure a current key exists (creating one on first start) and loads the keys. */
  async function ensureCurrent(): Promise<void> {
    await load();
    if (!current) await createKey(false);
  }

  async function signingKey(): Promise<LoadedKey> {
    if (Date.now() - loadedAt > refreshMs) await load();
    if (!current?.privateKey) await ensureCurrent();
    return current as LoadedKey;
  }

  return {
    ensureCurrent,

    /** Re-reads the keys now (after the caller changed a key's status itself). */
    reload: read,

    /** Makes a new current key and demotes the old one to previous; returns the new kid. */
    async rotate(): Promise<string> {
      return (await createKey(true)) as string;
    },

    /** Signs `payload` with the current key; the protected header is `{ alg, kid, typ }`. */
    async sign(payload: JWTPayload, typ: string): Promise<string> {
      const key = await signingKey();
      let header = headers.get(`${key.kid} ${typ}`);
      if (!header) {
        if (headers.size > 100) headers.clear();
        header = b64json({ alg: SIGNING_ALG, kid: key.kid, typ });
        headers.set(`${key.kid} ${typ}`, header);
      }
      const input = `${header}.${b64json(payload)}`;
      return `${input}.${await signBatched(input, key.privateKey!)}`;
    },

    /**
     * Verifies a JWT signed by a current or previous key (signature, issuer, audience, expiry); INVALID_TOKEN
     * otherwise. The payload answered is frozen (it is shared by later verifications of the same token).
     */
    async verify(token: string, v: VerifyOptions): Promise<{ payload: JWTPayload; kid: string }> {
      if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) throw errors.invalidToken();
      const seen = verified.get(token);
      if (seen) {
        if (v.typ && seen.header.typ !== v.typ) throw errors.invalidToken();
        if (!(await keyFor(seen.kid)) || !claimsHold(seen.payload, v)) throw errors.invalidToken();
        return { payload: seen.payload, kid: seen.kid };
      }
      const parts = token.split('.');
      if (parts.length !== 3 || !parts.every((p) => BASE64URL.test(p))) throw errors.invalidToken();
      const [h, p, sig] = parts as [string, string, string];
      const header = jsonObject(h);
      // Only what we sign is accepted: ES256 with a kid, no critical extensions (RFC 7515 §4.1.11).
      if (
        !header ||
        header.alg !== SIGNING_ALG ||
        typeof header.kid !== 'string' ||
        'crit' in header ||
        'b64' in header
      )
        throw errors.invalidToken();
      if (v.typ && header.typ !== v.typ) throw errors.invalidToken();
      const key = await keyFor(header.kid);
      const signature = Buffer.from(sig, 'base64url');
      if (!key || signature.length !== 64) throw errors.invalidToken();
      if (!crypto.verify('sha256', Buffer.from(`${h}.${p}`, 'ascii'), key, rawToDer(signature)))
        throw errors.invalidToken();
      const payload = jsonObject(p) as JWTPayload | undefined;
      if (!payload) throw errors.invalidToken();
      // Shared by every later verification of the token: read-only.
      deepFreeze(payload);
      if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value as string);
      verified.set(token, { header, payload, kid: header.kid });
      if (!claimsHold(payload, v)) throw errors.invalidToken();
      return { payload, kid: header.kid };
    },
  };
}
