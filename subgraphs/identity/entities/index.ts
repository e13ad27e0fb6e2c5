// Entities of the identity subgraph. Conditional updates (code redemption, refresh rotation, TOTP steps)
// are single SQL statements in the services; the entities cover plain reads and inserts.
import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';
import { refreshSessionProperties } from '../../../platform/refresh-sessions.ts';
import { signingKeyProperties } from '../../../platform/signing-keys.ts';

/** An end-user of one project. E-mail is unique per project, lower case. */
export const EndUserEntity = defineEntity({
  name: 'EndUser',
  tableName: 'identity_users',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    email: p.text(),
    emailVerified: p.boolean(),
    passwordHash: p.text(),
    /** Standard OIDC profile claims (name, given_name, ...), validated on write. */
    profile: p.json<Record<string, string>>(),
    mfaEnabled: p.boolean(),
    mfaSecret: p.text().nullable(),
    mfaPendingSecret: p.text().nullable(),
    mfaLastTimeStep: p.bigint('number').nullable(),
    /** Roles the project assigned (admin API): the only source of `role:<name>` scopes. */
    roles: p.array(),
    /** The project's own data about the user (admin API), never writable by the user. */
    appMetadata: p.json<Record<string, unknown>>(),
    /** Set while the project has disabled the account: no sign-in, no session. */
    disabledAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type EndUser = InferEntity<typeof EndUserEntity>;

/** One sign-in at one client; also the refresh-token family (rotation, reuse revokes it). */
export const EndUserSessionEntity = defineEntity({
  name: 'EndUserSession',
  tableName: 'identity_sessions',
  properties: {
    id: p.uuid().primary(),
    projectId: p.uuid(),
    userId: p.uuid(),
    clientId: p.text(),
    scope: p.text(),
    amr: p.array(),
    authTime: p.datetime(),
    ...refreshSessionProperties(),
  },
});
export type EndUserSession = InferEntity<typeof EndUserSessionEntity>;

/** An ES256 key signing end-user tokens: one `current`, `previous` ones still verifying, `retired` ones not. */
export const IdentitySigningKeyEntity = defineEntity({
  name: 'IdentitySigningKey',
  tableName: 'identity_signing_keys',
  properties: {
    ...signingKeyProperties(),
    demotedAt: p.datetime().nullable(),
  },
});
export type IdentitySigningKey = InferEntity<typeof IdentitySigningKeyEntity>;

export const identityEntities = [EndUserEntity, EndUserSessionEntity, IdentitySigningKeyEntity];
