// ES256 keys that sign end-user access and ID tokens, published at /jwks.json. Rotation demotes the
// current key to `previous` (still published, still verifying) and creates a new current one; a
// previous key is retired (unpublished, refused) explicitly, or on the next rotation once every token
// it signed has expired. The private halves are sealed; keys are cached by the platform key ring
// (platform/signing-keys.ts) and re-read on an unknown kid or every few seconds (another instance may
// have rotated). The router check also reads the key's status from the database, so a retired key is
// refused everywhere at once.
import type { JWK, JWTPayload } from 'jose';
import { errors } from '../../../platform/errors.ts';
import { announceLocally, publishBroadcast } from '../../../platform/broadcast.ts';
import { createSigningKeyRing, SIGNING_ALG } from '../../../platform/signing-keys.ts';
import { IdentitySigningKeyEntity, type IdentitySigningKey } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';

export { SIGNING_ALG };
// Another instance may rotate: re-read the keys this often, so no instance signs with a demoted key for long.
const REFRESH_MS = 5_000;
/** A key demoted less than this long ago may still be signing on an instance that has not re-read yet. */
export const RETIRE_GRACE_MS = 2 * REFRESH_MS;

export type PublicKeyView = { kid: string; status: string; createdAt: Date; publicJwk: JWK };

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;

/** Creates the key service. Call `ensureCurrent()` once at start before signing. */
export function createSigningKeyService({ db, box, config }: Pick<ServiceDeps, 'db' | 'box' | 'config'>) {
  const ring = createSigningKeyRing({
    db: () => db.em(),
    table: 'identity_signing_keys',
    // Any fixed number shared by every instance: serialises key creation and rotation.
    lockId: 7_314_002,
    box,
    refreshMs: REFRESH_MS,
    reloadMinIntervalMs: 2_000,
    // Previous keys demoted longer ago than a token lives can sign nothing still valid.
    keepPreviousForMs: config.accessTokenTtl * 1000,
  });

  const view = (row: IdentitySigningKey): PublicKeyView => ({
    kid: row.kid,
    status: row.status,
    createdAt: row.createdAt,
    publicJwk: row.publicJwk as JWK,
  });

  return {
    ensureCurrent: ring.ensureCurrent,

    /** The published keys (current first, then previous ones), newest first. */
    async published(): Promise<PublicKeyView[]> {
      const rows = await db
        .em()
        .find(
          IdentitySigningKeyEntity,
          { status: { $in: ['current', 'previous'] } },
          { orderBy: { createdAt: 'desc' } },
        );
      return rows.map(view);
    },

    /** Every key with its status, newest first (operators). */
    async all(): Promise<PublicKeyView[]> {
      return (await db.em().find(IdentitySigningKeyEntity, {}, { orderBy: { createdAt: 'desc' } })).map(view);
    },

    /** Makes a new current key; the old one keeps verifying until it is retired. Returns the new kid. */
    rotate: ring.rotate,

    /** Retires a previous key: it leaves the JWKS and tokens it signed stop verifying at once. */
    async retire(kid: string): Promise<void> {
      const row = await db.em().findOne(IdentitySigningKeyEntity, { kid });
      if (!row) throw errors.notFound('signing_key', kid.slice(0, 100));
      if (row.status === 'current') throw errors.conflict('The current key cannot be retired: rotate first');
      const since = row.demotedAt ? Date.now() - new Date(row.demotedAt).getTime() : Infinity;
      if (row.status === 'previous' && since < RETIRE_GRACE_MS) {
        throw errors.conflict(
          `The key was demoted ${Math.floor(since / 1000)} s ago and may still sign on other instances: retire it after ${RETIRE_GRACE_MS / 1000} s`,
        );
      }
      if (row.status === 'previous') {
        await db.em().transactional(async (em) => {
          await em.nativeUpdate(
            IdentitySigningKeyEntity,
            { kid, status: 'previous' },
            { status: 'retired', retiredAt: new Date() },
          );
          // Every process forgets the tokens it knew valid (token-cache.ts); this one right below.
          await publishBroadcast(em, 'access-tokens.changed', { keys: true });
        });
        announceLocally('access-tokens.changed', { keys: true });
      }
      await ring.reload();
    },

    /** Re-reads the keys now (another process retired one). */
    reload: ring.reload,

    /** Signs a JWT with the current key. */
    sign: ring.sign,

    /**
     * Verifies a JWT signed by a published key (signature, issuer, expiry); returns its payload and kid.
     * `allowExpired` lets logout accept an expired id_token_hint.
     */
    async verify(
      token: string,
      opts: { audience?: string; typ?: string; allowExpired?: boolean } = {},
    ): Promise<{ payload: JWTPayload; kid: string }> {
      return await ring.verify(token, { ...opts, issuer: config.issuer });
    },
  };
}
