// Identity flows that must behave the same in one process and in split mode: called by identity-end-users.test.ts
// (one process) and identity-split.test.ts, each with its own platform, so Jest runs them in parallel.
import crypto from 'node:crypto';
import { expect, it } from '@jest/globals';
import { client } from '../../support/http.ts';
import {
  newProject,
  passwordGrant,
  postForm,
  REDIRECT_URI,
  registerUser,
  signInThroughPage,
} from './identity-fixtures.ts';

/** Discovery, a password grant and /userinfo, the authorization-code flow with PKCE, then revocation and introspection. */
export function tokenLifecycle(target: () => { url: string }): void {
  it('issues, checks, introspects and revokes tokens', async () => {
    const base = target().url;
    const project = await newProject(base);
    const discovery = await client(base)('GET', '/.well-known/openid-configuration');
    expect(discovery.status).toBe(200);
    expect(discovery.body.token_endpoint).toBe(`${discovery.body.issuer}/token`);

    const user = await registerUser(base, project);
    const login = await passwordGrant(base, project, user);
    expect(login.status).toBe(200);
    const info = await client(base)('GET', '/userinfo', { token: login.body.access_token });
    expect(info.body).toMatchObject({ sub: user.id, email: user.email });

    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: project.clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const back = await signInThroughPage(`${base}/authorize?${q}`, user);
    expect(back.status).toBe(302);
    const code = new URL(back.location!).searchParams.get('code')!;
    const tokens = await postForm(
      base,
      '/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier },
      { basic: [project.clientId, project.clientSecret] },
    );
    expect(tokens.status).toBe(200);
    expect(typeof tokens.body.id_token).toBe('string');

    await postForm(
      base,
      '/revocation',
      { token: tokens.body.refresh_token },
      { basic: [project.clientId, project.clientSecret] },
    );
    expect(
      (
        await postForm(
          base,
          '/introspect',
          { token: tokens.body.access_token },
          { basic: [project.clientId, project.clientSecret] },
        )
      ).body,
    ).toEqual({ active: false });
    expect((await client(base)('GET', '/userinfo', { token: tokens.body.access_token })).status).toBe(401);
  }, 60_000);
}
