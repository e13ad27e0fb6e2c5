// A real OpenID Connect client nobody here wrote (openid-client v6) against the identity provider:
// discovery, client_credentials, password, authorization_code + PKCE through the hosted page, refresh,
// userinfo, introspection and revocation; ID token signatures checked against /jwks.json with jose.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { client } from '../../support/http.ts';
import {
  DEFAULT_ALLOWED_SCOPES,
  newProject,
  REDIRECT_URI,
  registerUser,
  signInThroughPage,
  startIdentityPlatform,
  type Project,
} from './identity-fixtures.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let issuer: string;
let project: Project;
let config: oidc.Configuration;
let user: { email: string; password: string; id: string };

beforeAll(async () => {
  env = await startIdentityPlatform();
  issuer = env.platform.tessera!.config.issuer;
  // Scopes are granted: the client may be issued the API scopes the test asks for.
  project = await newProject(env.base, { allowedScopes: [...DEFAULT_ALLOWED_SCOPES, 'orders:read', 'orders:write'] });
  user = await registerUser(env.base, project);
  config = await oidc.discovery(
    new URL(issuer),
    project.clientId,
    project.clientSecret,
    oidc.ClientSecretBasic(project.clientSecret),
    { execute: [oidc.allowInsecureRequests] },
  );
}, 60_000);

afterAll(async () => {
  await env?.close();
});

async function verifyIdToken(idToken: string, nonce?: string) {
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks.json`));
  const { payload, protectedHeader } = await jwtVerify(idToken, jwks, { issuer, audience: project.clientId });
  expect(protectedHeader.alg).toBe('ES256');
  expect(typeof protectedHeader.kid).toBe('string');
  if (nonce) expect(payload.nonce).toBe(nonce);
  return payload;
}

describe('openid-client against the identity provider', () => {
  it('discovers the provider: every endpoint, grant type, PKCE method and auth method', () => {
    const m = config.serverMetadata();
    expect(m.issuer).toBe(issuer);
    for (const [key, path] of [
      ['authorization_endpoint', '/authorize'],
      ['token_endpoint', '/token'],
      ['userinfo_endpoint', '/userinfo'],
      ['jwks_uri', '/jwks.json'],
      ['introspection_endpoint', '/introspect'],
      ['revocation_endpoint', '/revocation'],
      ['end_session_endpoint', '/logout'],
      ['registration_endpoint', '/register'],
    ] as const) {
      expect(m[key]).toBe(`${issuer}${path}`);
    }
    expect(m.grant_types_supported).toEqual(
      expect.arrayContaining(['password', 'authorization_code', 'client_credentials', 'refresh_token']),
    );
    expect(m.response_types_supported).toEqual(['code']);
    expect(m.code_challenge_methods_supported).toEqual(['S256']);
    expect(m.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post']),
    );
    expect(m.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'offline_access']));
    expect(m.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified', 'name']));
    expect(m.id_token_signing_alg_values_supported).toEqual(['ES256']);
  });

  it('gets a client_credentials token whose principal acts for the project', async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'orders:read orders:write' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('orders:read orders:write');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.id_token).toBeUndefined();
    const info = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(info).toMatchObject({
      active: true,
      client_id: project.clientId,
      sub: project.clientId,
      scope: 'orders:read orders:write',
    });
    // The router accepts it as the project (the tenant's project query lets a project read itself).
    const res = await client(env.base)('POST', '/graphql', {
      token: tokens.access_token,
      body: { query: `{ project(id: "${project.id}") { id name } }` },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.project.id).toBe(project.id);
  });

  it('signs a user in with the password grant and returns an ID token signed by a key of /jwks.json', async () => {
    const tokens = await oidc.genericGrantRequest(config, 'password', {
      username: user.email,
      password: user.password,
      scope: 'openid profile email offline_access',
    });
    expect(typeof tokens.access_token).toBe('string');
    expect(typeof tokens.refresh_token).toBe('string');
    const claims = await verifyIdToken(tokens.id_token!);
    expect(claims).toMatchObject({ sub: user.id, email: user.email, email_verified: false, name: 'Ada Lovelace' });
    expect(tokens.claims()?.sub).toBe(user.id);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toMatchObject({
      sub: user.id,
      email: user.email,
      email_verified: false,
      given_name: 'Ada',
      family_name: 'Lovelace',
    });
  });

  it('runs authorization_code with PKCE through the hosted sign-in page, then refreshes', async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const challenge = await oidc.calculatePKCECodeChallenge(verifier);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid email',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const back = await signInThroughPage(url.toString(), user);
    expect(back.status).toBe(302);
    expect(back.location!.startsWith(`${REDIRECT_URI}?`)).toBe(true);

    const tokens = await oidc.authorizationCodeGrant(config, new URL(back.location!), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    const claims = await verifyIdToken(tokens.id_token!, nonce);
    expect(claims.sub).toBe(user.id);
    expect(tokens.scope).toBe('openid email');
    expect(typeof tokens.refresh_token).toBe('string');

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await verifyIdToken(refreshed.id_token!);
    const info = await oidc.fetchUserInfo(config, refreshed.access_token, user.id);
    expect(info.email).toBe(user.email);
    expect(info.name).toBeUndefined(); // no profile scope
  });

  it('introspects and revokes access and refresh tokens; a revoked access token is refused by every endpoint', async () => {
    const tokens = await oidc.genericGrantRequest(config, 'password', {
      username: user.email,
      password: user.password,
      scope: 'openid offline_access',
    });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      sub: user.id,
      client_id: project.clientId,
      token_type: 'Bearer',
    });
    expect(await oidc.tokenIntrospection(config, tokens.refresh_token!)).toMatchObject({
      active: true,
      sub: user.id,
      token_type: 'refresh_token',
    });

    await oidc.tokenRevocation(config, tokens.access_token);
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    await expect(oidc.fetchUserInfo(config, tokens.access_token, user.id)).rejects.toThrow();
    const mfa = await client(env.base)('POST', '/mfa/enroll', { token: tokens.access_token });
    expect(mfa.status).toBe(401);
    expect(mfa.body.error.code).toBe('INVALID_TOKEN');

    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await oidc.tokenIntrospection(config, tokens.refresh_token!)).toEqual({ active: false });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('works with client_secret_post as well', async () => {
    const post = await oidc.discovery(
      new URL(issuer),
      project.clientId,
      project.clientSecret,
      oidc.ClientSecretPost(project.clientSecret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const tokens = await oidc.clientCredentialsGrant(post, {});
    expect(await oidc.tokenIntrospection(post, tokens.access_token)).toMatchObject({ active: true });
  });
});
