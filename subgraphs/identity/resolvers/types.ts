// Field resolvers of the object types: profile claims, ISO dates, JWK fields.
import type { EndUserView } from '../services/users.ts';
import type { PublicKeyView } from '../services/signing-keys.ts';
import type { IdentityContext } from './context.ts';
import { JSONScalar } from '../../../platform/graphql-scalars.ts';

type Claims = Record<string, unknown>;
const iso = (d: Date) => new Date(d).toISOString();
const claim = (name: string) => (u: EndUserView) => u.profile[name] ?? null;

export const typeResolvers = {
  JSON: JSONScalar,
  Project: {
    __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
    issuer: (_p: { id: string }, _: unknown, ctx: IdentityContext) => ctx.services.issuer.issuerOf(),
    discoveryUrl: (_p: { id: string }, _: unknown, ctx: IdentityContext) => ctx.services.issuer.discoveryUrlOf(),
  },
  EndUser: {
    name: claim('name'),
    givenName: claim('given_name'),
    familyName: claim('family_name'),
    middleName: claim('middle_name'),
    nickname: claim('nickname'),
    preferredUsername: claim('preferred_username'),
    picture: claim('picture'),
    website: claim('website'),
    gender: claim('gender'),
    birthdate: claim('birthdate'),
    zoneinfo: claim('zoneinfo'),
    locale: claim('locale'),
    phoneNumber: claim('phone_number'),
    createdAt: (u: EndUserView) => iso(u.createdAt),
    updatedAt: (u: EndUserView) => iso(u.updatedAt),
    disabled: (u: EndUserView) => u.disabledAt !== null,
    disabledAt: (u: EndUserView) => (u.disabledAt ? iso(u.disabledAt) : null),
  },
  UserInfo: {
    givenName: (c: Claims) => c.given_name ?? null,
    familyName: (c: Claims) => c.family_name ?? null,
    middleName: (c: Claims) => c.middle_name ?? null,
    preferredUsername: (c: Claims) => c.preferred_username ?? null,
    updatedAt: (c: Claims) => c.updated_at ?? null,
    emailVerified: (c: Claims) => c.email_verified ?? null,
    phoneNumber: (c: Claims) => c.phone_number ?? null,
  },
  IdentitySigningKey: {
    kty: (k: PublicKeyView) => k.publicJwk.kty,
    alg: (k: PublicKeyView) => k.publicJwk.alg,
    use: (k: PublicKeyView) => k.publicJwk.use ?? 'sig',
    crv: (k: PublicKeyView) => k.publicJwk.crv ?? null,
    x: (k: PublicKeyView) => k.publicJwk.x ?? null,
    y: (k: PublicKeyView) => k.publicJwk.y ?? null,
    createdAt: (k: PublicKeyView) => iso(k.createdAt),
  },
};
