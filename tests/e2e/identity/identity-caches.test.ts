// The identity provider remembers authenticated clients and valid client_credentials tokens (so /token and
// /introspect need no database read), and forgets them at once when they stop being valid: a rotated
// secret, a deleted project, a revoked token. Changes made by another instance arrive as broadcasts.
// Every test first uses the credential several times, so a cache that missed the change would still
// accept it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { publishBroadcastNow } from '../../../platform/broadcast.ts';
import { sha256Hex } from '../../../platform/crypto.ts';
import { client } from '../../support/http.ts';
import {
  newProject,
  passwordGrant,
  postForm,
  REDIRECT_URI,
  registerUser,
  startIdentityPlatform,
  type Project,
} from './identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let base: string;
let db: pg.Client;

beforeAll(async () => {
  env = await startIdentityPlatform();
  base = env.base;
  db = new pg.Client({ connectionString: env.platform.tessera!.config.databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  await env?.close();
});

const issue = (p: Pick<Project, 'clientId'>, secret: string) =>
  postForm(base, '/token', { grant_type: 'client_credentials' }, { basic: [p.clientId, secret] });
const introspect = (p: Pick<Project, 'clientId'>, secret: string, token: string) =>
  postForm(base, '/introspect', { token }, { basic: [p.clientId, secret] });
const asBearer = async (token: string) =>
  (await client(base)('POST', '/graphql', { token, body: { query: '{ __typename }' } })).status;

async function tokenOf(p: Project): Promise<string> {
  const res = await issue(p, p.clientSecret);
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

describe('a change made through this instance takes effect at once', () => {
  it('refuses the old client secret right after a rotation, at /token, /introspect and /revocation; the new one works', async () => {
    const p = await newProject(base);
    const token = await tokenOf(p);
    for (let i = 0; i < 3; i++) expect((await introspect(p, p.clientSecret, token)).body.active).toBe(true);

    const rotated = await client(base)(
      'POST',
      `/auth/api/v1/projects/${p.id}/oidc-clients/${p.clientId}/rotate-secret`,
      { token: p.tenantToken },
    );
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.oidc_client.client_secret as string;
    expect(fresh).not.toBe(p.clientSecret);

    const old = await issue(p, p.clientSecret);
    expect(old.status).toBe(401);
    expect(old.body.error).toBe('invalid_client');
    expect((await introspect(p, p.clientSecret, token)).status).toBe(401);
    expect((await postForm(base, '/revocation', { token }, { basic: [p.clientId, p.clientSecret] })).status).toBe(401);
    expect((await issue(p, fresh)).status).toBe(200);
    expect((await introspect(p, fresh, token)).body.active).toBe(true);
  });

  it('answers a revoked client token as inactive at once, and refuses it as a bearer, though it was checked before', async () => {
    const p = await newProject(base);
    const token = await tokenOf(p);
    for (let i = 0; i < 3; i++) {
      expect((await introspect(p, p.clientSecret, token)).body.active).toBe(true);
      expect(await asBearer(token)).toBe(200);
    }
    const revoked = await postForm(base, '/revocation', { token }, { basic: [p.clientId, p.clientSecret] });
    expect(revoked.status).toBe(200);
    expect((await introspect(p, p.clientSecret, token)).body).toEqual({ active: false });
    expect(await asBearer(token)).toBe(401);
    // Other tokens of the client are untouched.
    const other = await tokenOf(p);
    expect((await introspect(p, p.clientSecret, other)).body.active).toBe(true);
  });

  it('refuses the client of a deleted project at once, and its tokens once the identity provider has heard of the deletion', async () => {
    const p = await newProject(base);
    const token = await tokenOf(p);
    for (let i = 0; i < 3; i++) {
      expect((await introspect(p, p.clientSecret, token)).body.active).toBe(true);
      expect(await asBearer(token)).toBe(200);
    }
    expect((await client(base)('DELETE', `/auth/api/v1/projects/${p.id}`, { token: p.tenantToken })).status).toBe(204);
    const refused = await issue(p, p.clientSecret);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
    expect((await introspect(p, p.clientSecret, token)).status).toBe(401);
    // The identity subgraph learns of the deletion from the project.deleted event (outbox), then refuses the
    // project's tokens everywhere; a remembered token must not outlive that (the cache keeps them a minute).
    await waitFor(async () => (await asBearer(token)) === 401);
  });

  it('refuses a deleted client at once, and its sessions and tokens once the identity provider has heard of it; other clients keep working', async () => {
    const p = await newProject(base);
    const made = await client(base)('POST', `/auth/api/v1/projects/${p.id}/oidc-clients`, {
      token: p.tenantToken,
      body: { name: 'Second' },
    });
    expect(made.status).toBe(201);
    const second = {
      ...p,
      clientId: made.body.oidc_client.client_id,
      clientSecret: made.body.oidc_client.client_secret,
    };
    const clientToken = await tokenOf(second);
    const user = await registerUser(base, p);
    const signedIn = await passwordGrant(base, second, user);
    expect(signedIn.status).toBe(200);
    const { access_token: userToken, refresh_token: refreshToken } = signedIn.body as Record<string, string>;
    const keptToken = await tokenOf(p);
    for (let i = 0; i < 3; i++) {
      expect((await introspect(second, second.clientSecret, clientToken)).body.active).toBe(true);
      expect(await asBearer(clientToken)).toBe(200);
      expect(await asBearer(userToken)).toBe(200);
    }

    const deleted = await client(base)('DELETE', `/auth/api/v1/projects/${p.id}/oidc-clients/${second.clientId}`, {
      token: p.tenantToken,
    });
    expect(deleted.status).toBe(204);
    const refused = await issue(second, second.clientSecret);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
    const refresh = await postForm(
      base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: refreshToken! },
      { basic: [second.clientId, second.clientSecret] },
    );
    expect(refresh.status).toBe(401);
    // The identity subgraph hears of the deletion from the oidc-client.deleted event (outbox): then the client's
    // sessions are ended and its client tokens refused, remembered ones included.
    await waitFor(async () => (await asBearer(clientToken)) === 401 && (await asBearer(userToken)) === 401);
    expect((await introspect(p, p.clientSecret, userToken)).body).toEqual({ active: false });
    // The project's other client and its tokens are untouched.
    expect(await asBearer(keptToken)).toBe(200);
    expect((await issue(p, p.clientSecret)).status).toBe(200);
    expect((await passwordGrant(base, p, user)).status).toBe(200);
  });

  it('makes a client public or confidential at once (no secret accepted only while it is public)', async () => {
    const p = await newProject(base);
    const noSecret = () => postForm(base, '/revocation', { token: 'whatever', client_id: p.clientId });
    for (let i = 0; i < 2; i++) expect((await noSecret()).status).toBe(401);
    const put = (isPublic: boolean) =>
      client(base)('PUT', `/auth/api/v1/projects/${p.id}/oidc-clients/${p.clientId}`, {
        token: p.tenantToken,
        body: { public: isPublic },
      });
    expect((await put(true)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await noSecret()).status).toBe(200);
    expect((await put(false)).status).toBe(200);
    expect((await noSecret()).status).toBe(401);
  });

  it('refuses at /authorize, at once, a redirect URI just removed from the client', async () => {
    const p = await newProject(base);
    const url = `${base}/authorize?${new URLSearchParams({ response_type: 'code', client_id: p.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' })}`;
    for (let i = 0; i < 3; i++) expect((await fetch(url, { redirect: 'manual' })).status).toBe(200);
    const put = await client(base)('PUT', `/auth/api/v1/projects/${p.id}/oidc-clients/${p.clientId}`, {
      token: p.tenantToken,
      body: { redirect_uris: ['https://elsewhere.example.com/cb'] },
    });
    expect(put.status).toBe(200);
    const page = await fetch(url, { redirect: 'manual' });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain('redirect_uri');
  });
});

describe('a change made by another instance arrives through the broadcast', () => {
  it('forgets a client whose secret another instance replaced', async () => {
    const p = await newProject(base);
    for (let i = 0; i < 3; i++) expect((await issue(p, p.clientSecret)).status).toBe(200);
    // Another instance's transaction: the new secret's hash, and its broadcast at commit.
    const next = 'tss_replaced-by-another-instance-0123456789';
    await db.query('begin');
    await db.query('update project_oidc_clients set client_secret_hash = $1 where client_id = $2', [
      sha256Hex(next),
      p.clientId,
    ]);
    await publishBroadcastNow(db, 'oidc-clients.changed', { clientIds: [p.clientId] });
    await db.query('commit');
    await waitFor(async () => (await issue(p, p.clientSecret)).status === 401);
    expect((await issue(p, next)).status).toBe(200);
  });

  it('shows that the client is remembered: a database change nobody announces is not seen until it is announced', async () => {
    const p = await newProject(base);
    for (let i = 0; i < 3; i++) expect((await issue(p, p.clientSecret)).status).toBe(200);
    await db.query('update project_oidc_clients set client_secret_hash = $1 where client_id = $2', [
      sha256Hex('tss_unannounced'),
      p.clientId,
    ]);
    expect((await issue(p, p.clientSecret)).status).toBe(200);
    await publishBroadcastNow(db, 'oidc-clients.changed', { projectId: p.id });
    await waitFor(async () => (await issue(p, p.clientSecret)).status === 401);
  });

  it('forgets a token another instance revoked', async () => {
    const p = await newProject(base);
    const token = await tokenOf(p);
    for (let i = 0; i < 3; i++) expect((await introspect(p, p.clientSecret, token)).body.active).toBe(true);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as {
      jti: string;
      exp: number;
    };
    await db.query(
      'insert into identity_revoked_tokens (jti, project_id, expires_at, revoked_at) values ($1, $2, to_timestamp($3), now())',
      [claims.jti, p.id, claims.exp],
    );
    // Not announced yet: the remembered answer stands (this is what the broadcast is for).
    expect((await introspect(p, p.clientSecret, token)).body.active).toBe(true);
    await publishBroadcastNow(db, 'access-tokens.changed', { jtis: [claims.jti] });
    await waitFor(async () => (await introspect(p, p.clientSecret, token)).body.active === false);
    expect(await asBearer(token)).toBe(401);
  });
});
