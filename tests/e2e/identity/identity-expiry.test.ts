// Expired access tokens (TESSERA_ACCESS_TOKEN_TTL=3): refused by the router, /userinfo and introspection;
// the refresh token still gets a new one.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { client } from '../../support/http.ts';
import {
  newProject,
  passwordGrant,
  postForm,
  registerUser,
  startIdentityPlatform,
  type Project,
} from './identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let project: Project;

beforeAll(async () => {
  env = await startIdentityPlatform({ TESSERA_ACCESS_TOKEN_TTL: '3' });
  project = await newProject(env.base);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

describe('expired tokens', () => {
  it('are inactive and refused everywhere, and a refresh token still works', async () => {
    const user = await registerUser(env.base, project);
    const login = await passwordGrant(env.base, project, user);
    expect(login.body.expires_in).toBe(3);
    const cc = await postForm(
      env.base,
      '/token',
      { grant_type: 'client_credentials' },
      { basic: [project.clientId, project.clientSecret] },
    );
    const call = client(env.base);
    // The client-credentials token was issued last: once the router refuses it, both tokens' second is over.
    const graphql = () =>
      call('POST', '/graphql', { token: cc.body.access_token, body: { query: '{ identitySigningKeys { kid } }' } });
    await waitFor(async () => (await graphql()).status === 401, {
      timeoutMs: 15_000,
      intervalMs: 100,
      message: 'the tokens to expire',
    });
    const info = await call('GET', '/userinfo', { token: login.body.access_token });
    expect(info.status).toBe(401);
    expect(info.body.error).toBe('invalid_token');
    expect((await call('POST', '/mfa/enroll', { token: login.body.access_token })).status).toBe(401);
    for (const token of [login.body.access_token, cc.body.access_token]) {
      expect(
        (await postForm(env.base, '/introspect', { token }, { basic: [project.clientId, project.clientSecret] })).body,
      ).toEqual({ active: false });
    }
    expect((await graphql()).status).toBe(401);
    // A 3-second token counts from a whole-second `iat`, so it lives at least 2 s: far longer than the one request made
    // with it here; should a machine ever be slower than that, refresh again (with the rotated refresh token).
    let refreshToken: string = login.body.refresh_token;
    await waitFor(
      async () => {
        const refreshed = await postForm(
          env.base,
          '/token',
          { grant_type: 'refresh_token', refresh_token: refreshToken },
          { basic: [project.clientId, project.clientSecret] },
        );
        expect(refreshed.status).toBe(200);
        refreshToken = refreshed.body.refresh_token ?? refreshToken;
        return (await call('GET', '/userinfo', { token: refreshed.body.access_token })).status === 200;
      },
      { timeoutMs: 20_000, intervalMs: 0, message: 'a refreshed token used within its lifetime' },
    );
  });
});
