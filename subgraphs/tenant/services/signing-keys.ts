// ES256 keys that sign tenant access tokens. Kept in tenant_signing_keys (private half sealed) and
// cached by the platform key ring (platform/signing-keys.ts); a token with an unknown `kid` makes it
// re-read the table (another instance may have rotated).
import crypto from 'node:crypto';
import type { JWTPayload } from 'jose';
import { errors } from '../../../platform/errors.ts';
import { createSigningKeyRing } from '../../../platform/signing-keys.ts';
import type { ServiceDeps } from './context.ts';
import { credentialChangeCommitted, publishCredentialChange } from './credentials.ts';

export const TENANT_AUDIENCE = 'tessera:tenant';

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;

/** Creates the key service. Call `ensureCurrent()` once at start before signing. */
export function createSigningKeyService({ db, box, config }: Pick<ServiceDeps, 'db' | 'box' | 'config'>) {
  const ring = createSigningKeyRing({
    db: () => db.em(),
    table: 'tenant_signing_keys',
    // Any fixed number shared by every instance: serialises key creation and rotation.
    lockId: 7_314_001,
    box,
    // Another instance may rotate: re-read the table this often so we stop signing with a demoted key.
    refreshMs: 60_000,
    reloadMinIntervalMs: 5_000,
    // No keepPreviousForMs: a rotation retires the previous key (at most one previous, see the migration).
  });

  return {
    /** Makes sure a current key exists (creating one on first start) and loads the keys. */
    ensureCurrent: ring.ensureCurrent,

    /** Makes a new current key; the old one keeps verifying until the next rotation. */
    async rotate(): Promise<void> {
      await ring.rotate();
      // The rotation retired the previous key: tokens it signed may sit in credential caches.
      await publishCredentialChange(db.em(), { all: true });
      await credentialChangeCommitted({ all: true });
    },

    /** Signs a tenant access token. */
    async sign(claims: { tenantId: string; sessionId: string }): Promise<{ token: string; expiresIn: number }> {
      const expiresIn = config.accessTokenTtl;
      const now = Math.floor(Date.now() / 1000);
      const token = await ring.sign(
        {
          sid: claims.sessionId,
          typ: 'tenant',
          iss: config.issuer,
          aud: TENANT_AUDIENCE,
          sub: claims.tenantId,
          jti: crypto.randomUUID(),
          iat: now,
          exp: now + expiresIn,
        },
        'JWT',
      );
      return { token, expiresIn };
    },

    /** Verifies signature, issuer, audience and expiry; INVALID_TOKEN for anything else. */
    async verify(token: string): Promise<{ tenantId: string; sessionId: string; payload: JWTPayload }> {
      const { payload } = await ring.verify(token, { issuer: config.issuer, audience: TENANT_AUDIENCE });
      if (payload.typ !== 'tenant' || typeof payload.sub !== 'string' || typeof payload.sid !== 'string')
        throw errors.invalidToken();
      return { tenantId: payload.sub, sessionId: payload.sid, payload };
    },
  };
}
