// The identity provider's protocol failures, each with its RFC error code and status: client
// authentication, redirect URIs, replayed codes, reused refresh tokens, foreign projects, TOTP replay,
// the brute-force limit, and malformed bodies.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import { client } from '../../support/http.ts';
import {
  hiddenFields,
  newProject,
  nextCode,
  passwordGrant,
  postForm,
  REDIRECT_URI,
  registerUser,
  signInThroughPage,
  startIdentityPlatform,
  type Project,
} from './identity-fixtures.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let base: string;
let a: Project;
let b: Project;
let user: { email: string; password: string; id: string };

beforeAll(async () => {
  env = await startIdentityPlatform();
  base = env.base;
  a = await newProject(base);
  b = await newProject(base);
  user = await registerUser(base, a);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

const pkce = () => {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
};

function authorizeUrl(p: Project, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: p.clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid offline_access',
    state: 'st-1',
    ...extra,
  });
  return `${base}/authorize?${q}`;
}

async function codeFor(p: Project, extra: Record<string, string> = {}): Promise<string> {
  const back = await signInThroughPage(authorizeUrl(p, extra), user);
  expect(back.status).toBe(302);
  const code = new URL(back.location!).searchParams.get('code');
  expect(code).toBeTruthy();
  return code!;
}

describe('client authentication at /token', () => {
  it('refuses a wrong client secret with 401 invalid_client and a WWW-Authenticate challenge', async () => {
    const basic = await postForm(
      base,
      '/token',
      { grant_type: 'client_credentials' },
      { basic: [a.clientId, 'tss_wrong'] },
    );
    expect(basic.status).toBe(401);
    expect(basic.body.error).toBe('invalid_client');
    expect(basic.headers.get('www-authenticate')).toMatch(/^Basic /);
    const post = await postForm(base, '/token', {
      grant_type: 'client_credentials',
      client_id: a.clientId,
      client_secret: 'tss_wrong',
    });
    expect(post.status).toBe(401);
    expect(post.body.error).toBe('invalid_client');
  });

  it('refuses an unknown client, a missing secret for a confidential client, and two methods at once', async () => {
    expect(
      (await postForm(base, '/token', { grant_type: 'client_credentials', client_id: 'tsc_nope', client_secret: 'x' }))
        .body.error,
    ).toBe('invalid_client');
    const noSecret = await postForm(base, '/token', { grant_type: 'client_credentials', client_id: a.clientId });
    expect(noSecret.status).toBe(401);
    expect(noSecret.body.error).toBe('invalid_client');
    const none = await postForm(base, '/token', { grant_type: 'client_credentials' });
    expect(none.status).toBe(401);
    const both = await postForm(
      base,
      '/token',
      { grant_type: 'client_credentials', client_secret: a.clientSecret },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('invalid_request');
    const garbage = await postForm(
      base,
      '/token',
      { grant_type: 'client_credentials' },
      { headers: { authorization: 'Basic !!!not-base64' } },
    );
    expect(garbage.status).toBe(401);
    expect(garbage.body.error).toBe('invalid_client');
  });
});

describe('malformed token requests', () => {
  it('answers 400 invalid_request for a missing grant_type, repeated parameters, a JSON array and a wrong content type', async () => {
    const missing = await postForm(base, '/token', { client_id: a.clientId, client_secret: a.clientSecret });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('grant_type'),
    });
    const repeated = await postForm(
      base,
      '/token',
      {},
      {
        raw: `grant_type=password&grant_type=client_credentials&client_id=${a.clientId}&client_secret=${a.clientSecret}`,
      },
    );
    expect(repeated.status).toBe(400);
    expect(repeated.body.error).toBe('invalid_request');
    const array = await postForm(base, '/token', {}, { raw: '[1,2]', headers: { 'content-type': 'application/json' } });
    expect(array.status).toBe(400);
    expect(array.body.error).toBe('invalid_request');
    const xml = await postForm(base, '/token', {}, { raw: '<grant/>', headers: { 'content-type': 'application/xml' } });
    expect(xml.status).toBe(400);
    expect(xml.body.error).toBe('invalid_request');
    const badJson = await postForm(
      base,
      '/token',
      {},
      { raw: '{"grant_type":', headers: { 'content-type': 'application/json' } },
    );
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toBe('invalid_request');
  });

  it('answers unsupported_grant_type, invalid_scope and invalid_grant where RFC 6749 says so', async () => {
    const auth = { client_id: a.clientId, client_secret: a.clientSecret };
    expect(
      (await postForm(base, '/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', ...auth })).body
        .error,
    ).toBe('unsupported_grant_type');
    expect(
      (await postForm(base, '/token', { grant_type: 'client_credentials', scope: 'openid', ...auth })).body.error,
    ).toBe('invalid_scope');
    expect(
      (await postForm(base, '/token', { grant_type: 'client_credentials', scope: 'bad"scope', ...auth })).body.error,
    ).toBe('invalid_scope');
    const wrongPassword = await passwordGrant(base, a, { email: user.email, password: 'not the password' });
    expect(wrongPassword.status).toBe(400);
    expect(wrongPassword.body.error).toBe('invalid_grant');
    expect((await passwordGrant(base, a, { email: 'nobody@example.com', password: 'whatever it is' })).body.error).toBe(
      'invalid_grant',
    );
    expect((await postForm(base, '/token', { grant_type: 'password', username: user.email, ...auth })).body.error).toBe(
      'invalid_request',
    );
    expect(
      (
        await postForm(base, '/token', {
          grant_type: 'authorization_code',
          code: 'tac_garbage',
          redirect_uri: REDIRECT_URI,
          ...auth,
        })
      ).body.error,
    ).toBe('invalid_grant');
    expect(
      (await postForm(base, '/token', { grant_type: 'refresh_token', refresh_token: 'tur_garbage', ...auth })).body
        .error,
    ).toBe('invalid_grant');
    // A user of project A does not exist in project B.
    expect((await passwordGrant(base, b, user)).body.error).toBe('invalid_grant');
  });
});

describe('the authorization endpoint', () => {
  it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
    const unknown = await fetch(
      `${base}/authorize?response_type=code&client_id=tsc_nope&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
      { redirect: 'manual' },
    );
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('location')).toBeNull();
    expect(await unknown.text()).toContain('client_id is unknown');
    for (const uri of [
      'https://evil.example.com/callback',
      `${REDIRECT_URI}/`,
      `${REDIRECT_URI}?x=1`,
      'https://APP.example.com/callback',
    ]) {
      const res = await fetch(authorizeUrl(a, { redirect_uri: uri }), { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
    }
    const missing = await fetch(`${base}/authorize?response_type=code&client_id=${a.clientId}`, { redirect: 'manual' });
    expect(missing.status).toBe(400);
  });

  it('sends other errors back to the redirect URI with state and iss (RFC 6749 §4.1.2.1, RFC 9207)', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: 'bad"scope' }, 'invalid_scope'],
      [{ code_challenge: pkce().challenge, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
      [{ prompt: 'none' }, 'login_required'],
    ];
    for (const [extra, error] of cases) {
      const res = await fetch(authorizeUrl(a, extra), { redirect: 'manual' });
      expect(res.status).toBe(302);
      const loc = new URL(res.headers.get('location')!);
      expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT_URI);
      expect(loc.searchParams.get('error')).toBe(error);
      expect(loc.searchParams.get('state')).toBe('st-1');
      expect(loc.searchParams.get('iss')).toBe(env.platform.tessera!.config.issuer);
    }
    const repeated = await fetch(`${authorizeUrl(a)}&scope=openid`, { redirect: 'manual' });
    expect(new URL(repeated.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it('keeps the query of a registered redirect URI and answers access_denied when the user cancels', async () => {
    const page = await fetch(authorizeUrl(a, { redirect_uri: 'https://app.example.com/other?x=1' }));
    const fields = hiddenFields(await page.text());
    const res = await postForm(base, '/authorize', { ...fields, action: 'cancel' });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location')!);
    expect(loc.searchParams.get('x')).toBe('1');
    expect(loc.searchParams.get('error')).toBe('access_denied');
  });

  it('shows the form again for a wrong password, without a redirect', async () => {
    const back = await signInThroughPage(authorizeUrl(a), { email: user.email, password: 'wrong password!' });
    expect(back.status).toBe(401);
    expect(back.location).toBeNull();
    expect(back.html).toContain('e-mail address or password is wrong');
  });

  it('requires PKCE S256 from a public client, which needs no secret at /token', async () => {
    const pub = await newProject(base, { public: true });
    const pubUser = await registerUser(base, pub);
    const noPkce = await fetch(authorizeUrl(pub), { redirect: 'manual' });
    expect(new URL(noPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const { verifier, challenge } = pkce();
    const back = await signInThroughPage(
      authorizeUrl(pub, { code_challenge: challenge, code_challenge_method: 'S256' }),
      pubUser,
    );
    const code = new URL(back.location!).searchParams.get('code')!;
    const wrongVerifier = await postForm(base, '/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: pub.clientId,
      code_verifier: pkce().verifier,
    });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.error).toBe('invalid_grant');
    const back2 = await signInThroughPage(
      authorizeUrl(pub, { code_challenge: challenge, code_challenge_method: 'S256' }),
      pubUser,
    );
    const code2 = new URL(back2.location!).searchParams.get('code')!;
    const ok = await postForm(base, '/token', {
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: REDIRECT_URI,
      client_id: pub.clientId,
      code_verifier: verifier,
    });
    expect(ok.status).toBe(200);
    expect(typeof ok.body.access_token).toBe('string');
    const cc = await postForm(base, '/token', { grant_type: 'client_credentials', client_id: pub.clientId });
    expect(cc.body.error).toBe('unauthorized_client');
    // A public client cannot introspect (it has no credentials to prove it is a resource server).
    expect((await postForm(base, '/introspect', { token: ok.body.access_token, client_id: pub.clientId })).status).toBe(
      401,
    );
  });
});

describe('authorization codes', () => {
  it('refuses a wrong redirect URI at /token with invalid_grant', async () => {
    const code = await codeFor(a);
    const res = await postForm(
      base,
      '/token',
      { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example.com/other?x=1' },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it("refuses another client's code", async () => {
    const code = await codeFor(a);
    const res = await postForm(
      base,
      '/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
      { basic: [b.clientId, b.clientSecret] },
    );
    expect(res.body.error).toBe('invalid_grant');
  });

  it('refuses a replayed code and revokes every token its first use issued', async () => {
    const code = await codeFor(a);
    const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI };
    const first = await postForm(base, '/token', params, { basic: [a.clientId, a.clientSecret] });
    expect(first.status).toBe(200);
    expect((await client(base)('GET', '/userinfo', { token: first.body.access_token })).status).toBe(200);
    const second = await postForm(base, '/token', params, { basic: [a.clientId, a.clientSecret] });
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    const info = await client(base)('GET', '/userinfo', { token: first.body.access_token });
    expect(info.status).toBe(401);
    expect(info.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await postForm(
      base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refuses a code_verifier when no code_challenge was sent, and a missing verifier when one was', async () => {
    const code = await codeFor(a);
    const res = await postForm(
      base,
      '/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: pkce().verifier },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(res.body.error).toBe('invalid_grant');
    const code2 = await codeFor(a, { code_challenge: pkce().challenge, code_challenge_method: 'S256' });
    const res2 = await postForm(
      base,
      '/token',
      { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT_URI },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(res2.body.error).toBe('invalid_grant');
  });
});

describe('refresh tokens', () => {
  it('revokes the whole family when a rotated refresh token is used again', async () => {
    const login = await passwordGrant(base, a, user);
    const r1 = login.body.refresh_token as string;
    const rotated = await postForm(
      base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: r1 },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(rotated.status).toBe(200);
    const r2 = rotated.body.refresh_token as string;
    expect(r2).not.toBe(r1);
    const reuse = await postForm(
      base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: r1 },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    // The family is gone: the newest refresh token and the access tokens of the session too.
    expect(
      (
        await postForm(
          base,
          '/token',
          { grant_type: 'refresh_token', refresh_token: r2 },
          { basic: [a.clientId, a.clientSecret] },
        )
      ).body.error,
    ).toBe('invalid_grant');
    expect((await client(base)('GET', '/userinfo', { token: rotated.body.access_token })).status).toBe(401);
    expect((await client(base)('GET', '/userinfo', { token: login.body.access_token })).status).toBe(401);
  });

  it("refuses another client's refresh token and a scope that was not granted", async () => {
    const login = await passwordGrant(base, a, user, { scope: 'openid email' });
    const foreign = await postForm(
      base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: login.body.refresh_token },
      { basic: [b.clientId, b.clientSecret] },
    );
    expect(foreign.body.error).toBe('invalid_grant');
    const wider = await postForm(
      base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, scope: 'openid profile' },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(wider.body.error).toBe('invalid_scope');
    const narrower = await postForm(
      base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: login.body.refresh_token, scope: 'openid' },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(narrower.status).toBe(200);
    expect(narrower.body.scope).toBe('openid');
  });
});

describe('introspection across projects', () => {
  it("answers active:false when project B's client introspects project A's tokens", async () => {
    const login = await passwordGrant(base, a, user);
    const access = await postForm(
      base,
      '/introspect',
      { token: login.body.access_token },
      { basic: [b.clientId, b.clientSecret] },
    );
    expect(access.status).toBe(200);
    expect(access.body).toEqual({ active: false });
    const refresh = await postForm(
      base,
      '/introspect',
      { token: login.body.refresh_token },
      { basic: [b.clientId, b.clientSecret] },
    );
    expect(refresh.body).toEqual({ active: false });
    // B's client cannot revoke A's tokens either (the answer is the same 200, nothing happens).
    expect(
      (await postForm(base, '/revocation', { token: login.body.access_token }, { basic: [b.clientId, b.clientSecret] }))
        .status,
    ).toBe(200);
    expect(
      (await postForm(base, '/introspect', { token: login.body.access_token }, { basic: [a.clientId, a.clientSecret] }))
        .body.active,
    ).toBe(true);
    expect(
      (await postForm(base, '/introspect', { token: 'garbage' }, { basic: [a.clientId, a.clientSecret] })).body,
    ).toEqual({ active: false });
    expect((await postForm(base, '/introspect', {}, { basic: [a.clientId, a.clientSecret] })).body.error).toBe(
      'invalid_request',
    );
    expect((await postForm(base, '/introspect', { token: 'x' }, { basic: [a.clientId, 'wrong'] })).status).toBe(401);
    expect((await postForm(base, '/revocation', {}, { basic: [a.clientId, a.clientSecret] })).body.error).toBe(
      'invalid_request',
    );
  });
});

describe('TOTP at the password grant', () => {
  it('needs a code once MFA is on (mfa_required), and refuses a replayed code', async () => {
    const mfaUser = await registerUser(base, a);
    const login = await passwordGrant(base, a, mfaUser);
    const call = client(base);
    const enroll = await call('POST', '/mfa/enroll', { token: login.body.access_token });
    expect(enroll.status).toBe(200);
    const code1 = await nextCode(enroll.body.secret);
    expect((await call('POST', '/mfa/verify', { token: login.body.access_token, body: { code: code1 } })).body).toEqual(
      { mfa_enabled: true },
    );

    const noCode = await passwordGrant(base, a, mfaUser);
    expect(noCode.status).toBe(400);
    expect(noCode.body.error).toBe('mfa_required');
    const replay = await passwordGrant(base, a, mfaUser, { totp_code: code1 });
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('TOTP') });
    const code2 = await nextCode(enroll.body.secret, code1);
    const ok = await passwordGrant(base, a, mfaUser, { totp_code: code2 });
    expect(ok.status).toBe(200);
    const info = await postForm(
      base,
      '/introspect',
      { token: ok.body.access_token },
      { basic: [a.clientId, a.clientSecret] },
    );
    expect(info.body.active).toBe(true);
    const again = await passwordGrant(base, a, mfaUser, { totp_code: code2 });
    expect(again.body.error).toBe('invalid_grant');
  }, 90_000);
});

describe('brute force', () => {
  it('answers 429 with Retry-After once an account has failed 10 times, even with the right password', async () => {
    const victim = await registerUser(base, a);
    for (let i = 0; i < 10; i++) {
      const res = await passwordGrant(base, a, { email: victim.email, password: `wrong-${i}-password` }, {}).then(
        (r) => r,
      );
      expect(res.body.error).toBe('invalid_grant');
    }
    const limited = await passwordGrant(base, a, victim);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('limits failures per client address too', async () => {
    const headers = { 'x-forwarded-for': '203.0.113.77' };
    for (let i = 0; i < 50; i++) {
      const res = await postForm(
        base,
        '/token',
        {
          grant_type: 'password',
          username: `nobody${i}@example.com`,
          password: 'whatever it is',
          client_id: a.clientId,
          client_secret: a.clientSecret,
        },
        { headers },
      );
      expect(res.status).toBe(400);
    }
    const limited = await postForm(
      base,
      '/token',
      {
        grant_type: 'password',
        username: user.email,
        password: user.password,
        client_id: a.clientId,
        client_secret: a.clientSecret,
      },
      { headers },
    );
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeTruthy();
    // Another address is not affected.
    expect((await passwordGrant(base, a, user)).status).toBe(200);
  }, 60_000);
});
