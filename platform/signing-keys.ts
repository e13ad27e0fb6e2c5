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
import crypto from 'node:crypto';
import { SignJWT, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { SecretBox } from './crypto.ts';
import { errors } from './errors.ts';

export const SIGNING_ALG = 'ES256';

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

type LoadedKey = { kid: string; status: string; publicJwk: JWK; publicKey: CryptoKey; privateKey?: CryptoKey };

type KeyRow = { kid: string; status: string; public_jwk: JWK | string; private_jwk_sealed: string };

export type SigningKeyRing = ReturnType<typeof createSigningKeyRing>;

/** Creates the key ring. Call `ensureCurrent()` once at start before signing. */
export function createSigningKeyRing(opts: SigningKeyRingOptions) {
  const { db, table, lockId, box, refreshMs, reloadMinIntervalMs, keepPreviousForMs } = opts;
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`not a plain table name: ${table}`);
  let keys = new Map<string, LoadedKey>();
  let current: LoadedKey | undefined;
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
      const key: LoadedKey = { kid: row.kid, status: row.status, publicJwk, publicKey: (await importJWK(publicJwk, SIGNING_ALG)) as CryptoKey };
      if (row.status === 'current') {
        key.privateKey = (await importJWK(JSON.parse(box.decrypt(row.private_jwk_sealed)) as JWK, SIGNING_ALG)) as CryptoKey;
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
          await tx.execute(`update ${table} set status = 'retired', retired_at = ?::timestamptz where status = 'previous'`, [at]);
          await tx.execute(`update ${table} set status = 'previous' where kid = ?`, [existing.kid]);
        } else {
          // Previous keys demoted longer ago than a token lives can sign nothing still valid: retire them.
          const cutoff = new Date(now.getTime() - keepPreviousForMs).toISOString();
          await tx.execute(`update ${table} set status = 'retired', retired_at = ?::timestamptz where status = 'previous' and demoted_at < ?::timestamptz`, [at, cutoff]);
          await tx.execute(`update ${table} set status = 'previous', demoted_at = ?::timestamptz where kid = ?`, [at, existing.kid]);
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

  async function keyFor(kid: unknown): Promise<CryptoKey | undefined> {
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
      return await new SignJWT(payload).setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ }).sign(key.privateKey as CryptoKey);
    },

    /** Verifies a JWT signed by a current or previous key (signature, issuer, audience, expiry); INVALID_TOKEN otherwise. */
    async verify(token: string, v: VerifyOptions): Promise<{ payload: JWTPayload; kid: string }> {
      try {
        const header = decodeProtectedHeader(token);
        const key = await keyFor(header.kid);
        if (!key) throw new Error('unknown kid');
        if (v.typ && header.typ !== v.typ) throw new Error('wrong typ');
        const { payload } = await jwtVerify(token, key, {
          algorithms: [SIGNING_ALG],
          issuer: v.issuer,
          ...(v.audience ? { audience: v.audience } : {}),
          ...(v.allowExpired ? { currentDate: new Date(0) } : {}),
        });
        return { payload, kid: header.kid as string };
      } catch {
        throw errors.invalidToken();
      }
    },
  };
}
