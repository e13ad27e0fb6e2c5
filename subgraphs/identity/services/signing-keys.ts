// ES256 keys that sign end-user access and ID tokens, published at /jwks.json. Rotation demotes the
// current key to `previous` (still published, still verifying) and creates a new current one; a
// previous key is retired (unpublished, refused) explicitly, or on the next rotation once every token
// it signed has expired. The private halves are sealed; keys are cached here and re-read on an unknown
// kid or every minute (another instance may have rotated). The router check also reads the key's
// status from the database, so a retired key is refused everywhere at once.
import crypto from 'node:crypto';
import { SignJWT, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { errors } from '../../../platform/errors.ts';
import { IdentitySigningKeyEntity, type IdentitySigningKey } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';

export const SIGNING_ALG = 'ES256';
const RELOAD_MIN_INTERVAL_MS = 2_000;
// Another instance may rotate: re-read the keys this often, so no instance signs with a demoted key for long.
const REFRESH_MS = 5_000;
/** A key demoted less than this long ago may still be signing on an instance that has not re-read yet. */
export const RETIRE_GRACE_MS = 2 * REFRESH_MS;
// Any fixed number shared by every instance: serialises key creation and rotation.
const ADVISORY_LOCK = 7_314_002;

type LoadedKey = { kid: string; status: string; publicJwk: JWK; publicKey: CryptoKey; privateKey?: CryptoKey };

export type PublicKeyView = { kid: string; status: string; createdAt: Date; publicJwk: JWK };

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;

/** Creates the key service. Call `ensureCurrent()` once at start before signing. */
export function createSigningKeyService({ db, box, config }: Pick<ServiceDeps, 'db' | 'box' | 'config'>) {
  let keys = new Map<string, LoadedKey>();
  let current: LoadedKey | undefined;
  let loadedAt = 0;
  let loading: Promise<void> | undefined;

  function load(): Promise<void> {
    loading ??= read().finally(() => {
      loading = undefined;
    });
    return loading;
  }

  async function read(): Promise<void> {
    const rows = await db.em().find(IdentitySigningKeyEntity, { status: { $in: ['current', 'previous'] } }, { orderBy: { createdAt: 'desc' } });
    const next = new Map<string, LoadedKey>();
    let cur: LoadedKey | undefined;
    for (const row of rows) {
      const publicJwk = row.publicJwk as JWK;
      const key: LoadedKey = { kid: row.kid, status: row.status, publicJwk, publicKey: (await importJWK(publicJwk, SIGNING_ALG)) as CryptoKey };
      if (row.status === 'current') {
        key.privateKey = (await importJWK(JSON.parse(box.decrypt(row.privateJwkSealed)) as JWK, SIGNING_ALG)) as CryptoKey;
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
    let created: string | undefined;
    await db.em().transactional(async (em) => {
      await em.execute('select pg_advisory_xact_lock(?)', [ADVISORY_LOCK]);
      const existing = await em.findOne(IdentitySigningKeyEntity, { status: 'current' });
      if (existing && !rotate) return;
      const now = new Date();
      if (existing) {
        // Previous keys demoted longer ago than a token lives can sign nothing still valid: retire them.
        const cutoff = new Date(now.getTime() - config.accessTokenTtl * 1000);
        await em.nativeUpdate(IdentitySigningKeyEntity, { status: 'previous', demotedAt: { $lt: cutoff } }, { status: 'retired', retiredAt: now });
        await em.nativeUpdate(IdentitySigningKeyEntity, { kid: existing.kid }, { status: 'previous', demotedAt: now });
      }
      const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
      const kid = crypto.randomUUID();
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
      const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
      em.create(IdentitySigningKeyEntity, {
        kid, alg: SIGNING_ALG, publicJwk, privateJwkSealed: box.encrypt(JSON.stringify(privateJwk)), status: 'current', createdAt: now, demotedAt: null, retiredAt: null,
      });
      await em.flush();
      created = kid;
    });
    await read();
    return created;
  }

  async function keyFor(kid: unknown): Promise<CryptoKey | undefined> {
    if (typeof kid !== 'string') return undefined;
    let key = keys.get(kid);
    const age = Date.now() - loadedAt;
    if ((!key && age > RELOAD_MIN_INTERVAL_MS) || age > REFRESH_MS) {
      await load();
      key = keys.get(kid);
    }
    return key?.publicKey;
  }

  async function ensureCurrent(): Promise<void> {
    await load();
    if (!current) await createKey(false);
  }

  async function signingKey(): Promise<LoadedKey> {
    if (Date.now() - loadedAt > REFRESH_MS) await load();
    if (!current?.privateKey) await ensureCurrent();
    return current as LoadedKey;
  }

  const view = (row: IdentitySigningKey): PublicKeyView => ({ kid: row.kid, status: row.status, createdAt: row.createdAt, publicJwk: row.publicJwk as JWK });

  return {
    ensureCurrent,

    /** The published keys (current first, then previous ones), newest first. */
    async published(): Promise<PublicKeyView[]> {
      const rows = await db.em().find(IdentitySigningKeyEntity, { status: { $in: ['current', 'previous'] } }, { orderBy: { createdAt: 'desc' } });
      return rows.map(view);
    },

    /** Every key with its status, newest first (operators). */
    async all(): Promise<PublicKeyView[]> {
      return (await db.em().find(IdentitySigningKeyEntity, {}, { orderBy: { createdAt: 'desc' } })).map(view);
    },

    /** Makes a new current key; the old one keeps verifying until it is retired. Returns the new kid. */
    async rotate(): Promise<string> {
      return (await createKey(true)) as string;
    },

    /** Retires a previous key: it leaves the JWKS and tokens it signed stop verifying at once. */
    async retire(kid: string): Promise<void> {
      const row = await db.em().findOne(IdentitySigningKeyEntity, { kid });
      if (!row) throw errors.notFound('signing_key', kid.slice(0, 100));
      if (row.status === 'current') throw errors.conflict('The current key cannot be retired: rotate first');
      const since = row.demotedAt ? Date.now() - new Date(row.demotedAt).getTime() : Infinity;
      if (row.status === 'previous' && since < RETIRE_GRACE_MS) {
        throw errors.conflict(`The key was demoted ${Math.floor(since / 1000)} s ago and may still sign on other instances: retire it after ${RETIRE_GRACE_MS / 1000} s`);
      }
      if (row.status === 'previous') await db.em().nativeUpdate(IdentitySigningKeyEntity, { kid, status: 'previous' }, { status: 'retired', retiredAt: new Date() });
      await read();
    },

    /** Signs a JWT with the current key. */
    async sign(payload: JWTPayload, typ: string): Promise<string> {
      const key = await signingKey();
      return await new SignJWT(payload).setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ }).sign(key.privateKey as CryptoKey);
    },

    /**
     * Verifies a JWT signed by a published key (signature, issuer, expiry); returns its payload and kid.
     * `currentTime` lets logout accept an expired id_token_hint.
     */
    async verify(token: string, opts: { audience?: string; typ?: string; allowExpired?: boolean } = {}): Promise<{ payload: JWTPayload; kid: string }> {
      try {
        const header = decodeProtectedHeader(token);
        const key = await keyFor(header.kid);
        if (!key) throw new Error('unknown kid');
        if (opts.typ && header.typ !== opts.typ) throw new Error('wrong typ');
        const { payload } = await jwtVerify(token, key, {
          algorithms: [SIGNING_ALG],
          issuer: config.issuer,
          ...(opts.audience ? { audience: opts.audience } : {}),
          ...(opts.allowExpired ? { currentDate: new Date(0) } : {}),
        });
        return { payload, kid: header.kid as string };
      } catch {
        throw errors.invalidToken();
      }
    },
  };
}
