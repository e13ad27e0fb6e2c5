// ES256 keys that sign tenant access tokens. Kept in tenant_signing_keys (private half sealed), cached
// here; a token with an unknown `kid` makes us re-read the table (another instance may have rotated).
import crypto from 'node:crypto';
import { SignJWT, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { errors } from '../../../platform/errors.ts';
import { TenantSigningKeyEntity } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';

const ALG = 'ES256';
export const TENANT_AUDIENCE = 'tessera:tenant';
const RELOAD_MIN_INTERVAL_MS = 5_000;
// Another instance may rotate: re-read the table this often so we stop signing with a demoted key.
const REFRESH_MS = 60_000;
// Any fixed number shared by every instance: serialises key creation and rotation.
const ADVISORY_LOCK = 7_314_001;

type LoadedKey = { kid: string; status: string; publicKey: CryptoKey; privateKey?: CryptoKey };

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;

/** Creates the key service. Call `ensureCurrent()` once at start before signing. */
export function createSigningKeyService({ db, box, config }: Pick<ServiceDeps, 'db' | 'box' | 'config'>) {
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
    const rows = await db.em().find(TenantSigningKeyEntity, { status: { $in: ['current', 'previous'] } });
    const next = new Map<string, LoadedKey>();
    let cur: LoadedKey | undefined;
    for (const row of rows) {
      const key: LoadedKey = { kid: row.kid, status: row.status, publicKey: (await importJWK(row.publicJwk as JWK, ALG)) as CryptoKey };
      if (row.status === 'current') {
        key.privateKey = (await importJWK(JSON.parse(box.decrypt(row.privateJwkSealed)) as JWK, ALG)) as CryptoKey;
        cur = key;
      }
      next.set(row.kid, key);
    }
    keys = next;
    current = cur;
    loadedAt = Date.now();
  }

  /** Under the advisory lock: demotes the current key (when `rotate`) and creates a new one if none is current. */
  async function createKey(rotate: boolean): Promise<void> {
    await db.em().transactional(async (em) => {
      await em.execute('select pg_advisory_xact_lock(?)', [ADVISORY_LOCK]);
      const existing = await em.findOne(TenantSigningKeyEntity, { status: 'current' });
      if (existing && !rotate) return;
      const now = new Date();
      if (existing) {
        await em.nativeUpdate(TenantSigningKeyEntity, { status: 'previous' }, { status: 'retired', retiredAt: now });
        await em.nativeUpdate(TenantSigningKeyEntity, { kid: existing.kid }, { status: 'previous' });
      }
      const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
      const kid = crypto.randomUUID();
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
      const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ALG };
      em.create(TenantSigningKeyEntity, { kid, alg: ALG, publicJwk, privateJwkSealed: box.encrypt(JSON.stringify(privateJwk)), status: 'current', createdAt: now, retiredAt: null });
      await em.flush();
    });
    await read();
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

  /** Makes sure a current key exists (creating one on first start) and loads the keys. */
  async function ensureCurrent(): Promise<void> {
    await load();
    if (!current) await createKey(false);
  }

  return {
    ensureCurrent,

    /** Makes a new current key; the old one keeps verifying until the next rotation. */
    async rotate(): Promise<void> {
      await createKey(true);
    },

    /** Signs a tenant access token. */
    async sign(claims: { tenantId: string; sessionId: string }): Promise<{ token: string; expiresIn: number }> {
      if (Date.now() - loadedAt > REFRESH_MS) await load();
      if (!current?.privateKey) await ensureCurrent();
      const key = current as LoadedKey;
      const expiresIn = config.accessTokenTtl;
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ sid: claims.sessionId, typ: 'tenant' })
        .setProtectedHeader({ alg: ALG, kid: key.kid, typ: 'JWT' })
        .setIssuer(config.issuer)
        .setAudience(TENANT_AUDIENCE)
        .setSubject(claims.tenantId)
        .setJti(crypto.randomUUID())
        .setIssuedAt(now)
        .setExpirationTime(now + expiresIn)
        .sign(key.privateKey as CryptoKey);
      return { token, expiresIn };
    },

    /** Verifies signature, issuer, audience and expiry; INVALID_TOKEN for anything else. */
    async verify(token: string): Promise<{ tenantId: string; sessionId: string; payload: JWTPayload }> {
      let payload: JWTPayload;
      try {
        const key = await keyFor(decodeProtectedHeader(token).kid);
        if (!key) throw new Error('unknown kid');
        ({ payload } = await jwtVerify(token, key, { algorithms: [ALG], issuer: config.issuer, audience: TENANT_AUDIENCE }));
      } catch {
        throw errors.invalidToken();
      }
      if (payload.typ !== 'tenant' || typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw errors.invalidToken();
      return { tenantId: payload.sub, sessionId: payload.sid, payload };
    },
  };
}
