// Every end-user path of the identity provider over HTTP, with its failures: registration, userinfo,
// MFA, password change, password reset and e-mail verification through a real SMTP server, logout
// (POST and RP-initiated GET), and end-user tokens as an identity for the other domains.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { client } from '../../support/http.ts';
import {
  hiddenFields,
  newProject,
  nextCode,
  passwordGrant,
  postForm,
  REDIRECT_URI,
  registerUser,
  startIdentityPlatform,
  tokenOf,
  type Project,
} from './identity-fixtures.ts';
import { tokenLifecycle } from './identity-flows.ts';
import { waitFor } from '../../support/wait-for.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let base: string;
let project: Project;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  env = await startIdentityPlatform();
  base = env.base;
  call = client(base);
  project = await newProject(base);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

const unique = (p = 'u') => `${p}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;

describe('the token lifecycle (the same in split mode: identity-split.test.ts)', () => {
  tokenLifecycle(() => ({ url: base }));
});

describe('POST /register', () => {
  it('registers an end-user with a profile; the e-mail starts unverified', async () => {
    const email = unique();
    const res = await call('POST', '/register', {
      apiKey: project.apiKey,
      body: {
        email: email.toUpperCase(),
        password: 'a long enough password',
        name: 'Grace Hopper',
        given_name: 'Grace',
        locale: 'en-US',
        picture: 'https://example.com/g.png',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({
      email,
      email_verified: false,
      name: 'Grace Hopper',
      given_name: 'Grace',
      locale: 'en-US',
      picture: 'https://example.com/g.png',
      project_id: project.id,
      mfa_enabled: false,
    });
    expect(res.body.user).not.toHaveProperty('password');
  });

  it('answers 409 EMAIL_TAKEN for a registered address, saying nothing more', async () => {
    const email = unique();
    expect(
      (await call('POST', '/register', { apiKey: project.apiKey, body: { email, password: 'a long enough password' } }))
        .status,
    ).toBe(201);
    const again = await call('POST', '/register', {
      apiKey: project.apiKey,
      body: { email, password: 'another long password' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'EMAIL_TAKEN' });
    expect(JSON.stringify(again.body)).not.toContain(email);
    // The same address is free in another project.
    const other = await newProject(base);
    expect(
      (await call('POST', '/register', { apiKey: other.apiKey, body: { email, password: 'a long enough password' } }))
        .status,
    ).toBe(201);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ password: 'a long enough password' }, 'email'],
      [{ email: 'not-an-email', password: 'a long enough password' }, 'email'],
      [{ email: unique(), password: 'short' }, 'password'],
      [{ email: unique(), password: 'aaaaaaaaaaaa' }, 'password'],
      [{ email: unique(), password: 'a long enough password', picture: 'javascript:alert(1)' }, 'picture'],
      [{ email: unique(), password: 'a long enough password', birthdate: 'yesterday' }, 'birthdate'],
      [{ email: unique(), password: 'a long enough password', shoe_size: 44 }, 'shoe_size'],
    ];
    for (const [body, field] of cases) {
      const res = await call('POST', '/register', { apiKey: project.apiKey, body });
      expect({ field, status: res.status }).toEqual({ field, status: 400 });
      expect(res.body.error.message).toContain(field);
    }
    const notJson = await call('POST', '/register', { apiKey: project.apiKey, raw: '{"email":' });
    expect(notJson.status).toBe(400);
    const array = await call('POST', '/register', { apiKey: project.apiKey, body: [1] });
    expect(array.status).toBe(400);
  });

  it('needs the project API key: 401 without or with a bad one, 403 for a tenant token', async () => {
    const body = { email: unique(), password: 'a long enough password' };
    expect((await call('POST', '/register', { body })).status).toBe(401);
    expect((await call('POST', '/register', { body, apiKey: 'tsk_garbage' })).status).toBe(401);
    expect((await call('POST', '/register', { body, token: project.tenantToken })).status).toBe(403);
  });

  it('limits registrations per address: 429 with Retry-After', async () => {
    const headers = { 'x-forwarded-for': '198.51.100.9' };
    let last = 0;
    let retryAfter: string | null = null;
    for (let i = 0; i < 31; i++) {
      const res = await call('POST', '/register', {
        apiKey: project.apiKey,
        headers,
        body: { email: unique('rl'), password: 'a long enough password' },
      });
      last = res.status;
      retryAfter = res.headers.get('retry-after');
    }
    expect(last).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  }, 60_000);
});

describe('GET /userinfo', () => {
  it('answers the claims the scopes grant', async () => {
    const user = await registerUser(base, project);
    const full = await passwordGrant(base, project, user);
    const info = await call('GET', '/userinfo', { token: full.body.access_token });
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({
      sub: user.id,
      email: user.email,
      email_verified: false,
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
    });
    expect(typeof info.body.updated_at).toBe('number');
    const post = await call('POST', '/userinfo', { token: full.body.access_token });
    expect(post.body.sub).toBe(user.id);
    const narrow = await passwordGrant(base, project, user, { scope: 'openid' });
    expect((await call('GET', '/userinfo', { token: narrow.body.access_token })).body).toEqual({ sub: user.id });
  });

  it('answers RFC 6750 errors: no token, a garbage token, a token without openid, a client token', async () => {
    const none = await call('GET', '/userinfo');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="tessera"');
    const garbage = await call('GET', '/userinfo', { token: 'not-a-jwt' });
    expect(garbage.status).toBe(401);
    expect(garbage.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const user = await registerUser(base, project);
    const noOpenid = await passwordGrant(base, project, user, { scope: 'email' });
    const insufficient = await call('GET', '/userinfo', { token: noOpenid.body.access_token });
    expect(insufficient.status).toBe(403);
    expect(insufficient.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    const cc = await postForm(
      base,
      '/token',
      { grant_type: 'client_credentials' },
      { basic: [project.clientId, project.clientSecret] },
    );
    expect((await call('GET', '/userinfo', { token: cc.body.access_token })).status).toBe(401);
    // A tenant token is not an end-user token either.
    expect((await call('GET', '/userinfo', { token: project.tenantToken })).status).toBe(401);
  });
});

describe('MFA for end-users', () => {
  it('enrolls, verifies and disables, refusing wrong and replayed codes', async () => {
    const user = await registerUser(base, project);
    const token = (await passwordGrant(base, project, user)).body.access_token as string;
    expect((await call('POST', '/mfa/verify', { token, body: { code: '123456' } })).body.error.code).toBe(
      'MFA_NOT_ENROLLED',
    );
    expect((await call('POST', '/mfa/disable', { token, body: { code: '123456' } })).body.error.code).toBe(
      'MFA_NOT_ENABLED',
    );
    const enroll = await call('POST', '/mfa/enroll', { token });
    expect(enroll.status).toBe(200);
    expect(enroll.body.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
    expect((await call('POST', '/mfa/verify', { token, body: { code: '000000' } })).body.error.code).toBe(
      'INVALID_MFA_CODE',
    );
    expect((await call('POST', '/mfa/verify', { token, body: {} })).status).toBe(400);
    expect((await call('POST', '/mfa/verify', { token, body: { code: 'abcdef' } })).status).toBe(401);
    const code1 = await nextCode(enroll.body.secret);
    expect((await call('POST', '/mfa/verify', { token, body: { code: code1 } })).body).toEqual({ mfa_enabled: true });
    expect((await call('POST', '/mfa/enroll', { token })).status).toBe(409);
    const replay = await call('POST', '/mfa/disable', { token, body: { code: code1 } });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe('INVALID_MFA_CODE');
    const code2 = await nextCode(enroll.body.secret, code1);
    expect((await call('POST', '/mfa/disable', { token, body: { code: code2 } })).body).toEqual({ mfa_enabled: false });
    expect((await passwordGrant(base, project, user)).status).toBe(200);
  }, 90_000);

  it('needs an end-user token: 401 without, 403 with the API key', async () => {
    expect((await call('POST', '/mfa/enroll')).status).toBe(401);
    expect((await call('POST', '/mfa/enroll', { apiKey: project.apiKey })).status).toBe(403);
    expect((await call('POST', '/mfa/verify', { token: 'garbage', body: { code: '123456' } })).status).toBe(401);
  });
});

describe('POST /password/change', () => {
  it('changes the password, keeps this session and revokes the others', async () => {
    const user = await registerUser(base, project);
    const here = await passwordGrant(base, project, user);
    const elsewhere = await passwordGrant(base, project, user);
    const wrong = await call('POST', '/password/change', {
      token: here.body.access_token,
      body: { current_password: 'not it at all', new_password: 'a brand new password' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain('current_password');
    const weak = await call('POST', '/password/change', {
      token: here.body.access_token,
      body: { current_password: user.password, new_password: 'short' },
    });
    expect(weak.status).toBe(400);
    expect(weak.body.error.message).toContain('new_password');
    expect(
      (
        await call('POST', '/password/change', {
          token: here.body.access_token,
          body: { current_password: user.password },
        })
      ).status,
    ).toBe(400);
    const ok = await call('POST', '/password/change', {
      token: here.body.access_token,
      body: { current_password: user.password, new_password: 'a brand new password' },
    });
    expect(ok.status).toBe(204);
    expect((await call('GET', '/userinfo', { token: here.body.access_token })).status).toBe(200);
    expect((await call('GET', '/userinfo', { token: elsewhere.body.access_token })).status).toBe(401);
    expect(
      (
        await postForm(
          base,
          '/token',
          { grant_type: 'refresh_token', refresh_token: elsewhere.body.refresh_token },
          { basic: [project.clientId, project.clientSecret] },
        )
      ).body.error,
    ).toBe('invalid_grant');
    expect((await passwordGrant(base, project, user)).body.error).toBe('invalid_grant');
    expect((await passwordGrant(base, project, { email: user.email, password: 'a brand new password' })).status).toBe(
      200,
    );
    expect(
      (
        await call('POST', '/password/change', {
          apiKey: project.apiKey,
          body: { current_password: 'x', new_password: 'y' },
        })
      ).status,
    ).toBe(403);
  });
});

describe('password reset by e-mail', () => {
  it('mails a single-use token; the answer is the same for an unknown address', async () => {
    const user = await registerUser(base, project);
    const session = await passwordGrant(base, project, user);
    const known = await call('POST', '/password/reset/request', {
      apiKey: project.apiKey,
      body: { email: user.email },
    });
    const unknown = await call('POST', '/password/reset/request', {
      apiKey: project.apiKey,
      body: { email: unique('nobody') },
    });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(known.body).toEqual({ accepted: true });
    expect(unknown.body).toEqual(known.body);

    const mail = await env.mailbox.waitFor(user.email, /Reset your password/);
    expect(mail.raw).toMatch(/^From: .*idp@example\.com/m);
    const token = tokenOf(mail);
    expect((await call('POST', '/password/reset/confirm', { body: { token, new_password: 'short' } })).status).toBe(
      400,
    );
    const ok = await call('POST', '/password/reset/confirm', { body: { token, new_password: 'my reset password' } });
    expect(ok.status).toBe(204);
    const again = await call('POST', '/password/reset/confirm', {
      body: { token, new_password: 'another reset password' },
    });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('INVALID_TOKEN');
    // Every session is revoked; the new password works; the address counts as verified.
    expect((await call('GET', '/userinfo', { token: session.body.access_token })).status).toBe(401);
    const login = await passwordGrant(base, project, { email: user.email, password: 'my reset password' });
    expect(login.status).toBe(200);
    expect((await call('GET', '/userinfo', { token: login.body.access_token })).body.email_verified).toBe(true);
  });

  it('serves the page behind the link, which resets the password from a plain form', async () => {
    const user = await registerUser(base, project);
    await call('POST', '/password/reset/request', { apiKey: project.apiKey, body: { email: user.email } });
    const mail = await env.mailbox.waitFor(user.email, /Reset your password/);
    const link = /https?:\/\/\S+\/password\/reset\/confirm\?token=\S+/.exec(mail.text)![0];
    const page = await fetch(base + new URL(link).pathname + new URL(link).search);
    expect(page.status).toBe(200);
    const fields = hiddenFields(await page.text());
    expect(fields.token).toBe(tokenOf(mail));
    const done = await postForm(base, '/password/reset/confirm', { ...fields, new_password: 'password from the page' });
    expect(done.status).toBe(200);
    expect(done.body).toContain('Password changed');
    const used = await postForm(base, '/password/reset/confirm', {
      ...fields,
      new_password: 'password from the page 2',
    });
    expect(used.status).toBe(400);
    expect((await passwordGrant(base, project, { email: user.email, password: 'password from the page' })).status).toBe(
      200,
    );
  });

  it('refuses bad requests', async () => {
    expect((await call('POST', '/password/reset/request', { body: { email: unique() } })).status).toBe(401);
    expect(
      (await call('POST', '/password/reset/request', { apiKey: project.apiKey, body: { email: 'nope' } })).status,
    ).toBe(400);
    expect((await call('POST', '/password/reset/request', { apiKey: project.apiKey, body: {} })).status).toBe(400);
    expect(
      (
        await call('POST', '/password/reset/confirm', {
          body: { token: 'tpr_garbage', new_password: 'a long enough password' },
        })
      ).status,
    ).toBe(401);
    expect(
      (await call('POST', '/password/reset/confirm', { body: { new_password: 'a long enough password' } })).status,
    ).toBe(400);
    expect((await call('POST', '/password/reset/confirm', { body: [1] })).status).toBe(400);
    expect((await fetch(`${base}/password/reset/confirm`)).status).toBe(400);
  });

  it('limits reset requests per account: 429 with Retry-After', async () => {
    const email = unique('limited');
    let res = await call('POST', '/password/reset/request', { apiKey: project.apiKey, body: { email } });
    for (let i = 0; i < 5; i++)
      res = await call('POST', '/password/reset/request', { apiKey: project.apiKey, body: { email } });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('e-mail verification', () => {
  it('mails the signed-in user a token that verifies the address once', async () => {
    const user = await registerUser(base, project);
    const token = (await passwordGrant(base, project, user)).body.access_token as string;
    const req = await call('POST', '/email/verify/request', { token });
    expect(req.status).toBe(202);
    const mail = await env.mailbox.waitFor(user.email, /Confirm your e-mail/);
    const verifyToken = tokenOf(mail);
    const ok = await call('POST', '/email/verify/confirm', { body: { token: verifyToken } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ email_verified: true });
    expect((await call('POST', '/email/verify/confirm', { body: { token: verifyToken } })).status).toBe(401);
    expect((await call('GET', '/userinfo', { token })).body.email_verified).toBe(true);
  });

  it('also works with the API key and an e-mail, and from the page behind the link', async () => {
    const user = await registerUser(base, project);
    expect(
      (await call('POST', '/email/verify/request', { apiKey: project.apiKey, body: { email: user.email } })).status,
    ).toBe(202);
    expect(
      (await call('POST', '/email/verify/request', { apiKey: project.apiKey, body: { email: unique('ghost') } }))
        .status,
    ).toBe(202);
    const mail = await env.mailbox.waitFor(user.email, /Confirm your e-mail/);
    const page = await fetch(`${base}/email/verify/confirm?token=${tokenOf(mail)}`);
    expect(page.status).toBe(200);
    const done = await postForm(base, '/email/verify/confirm', hiddenFields(await page.text()));
    expect(done.status).toBe(200);
    expect(done.body).toContain('E-mail confirmed');
    const login = await passwordGrant(base, project, user);
    expect((await call('GET', '/userinfo', { token: login.body.access_token })).body.email_verified).toBe(true);
  });

  it('refuses bad requests', async () => {
    expect((await call('POST', '/email/verify/request')).status).toBe(401);
    expect((await call('POST', '/email/verify/request', { apiKey: project.apiKey, body: {} })).status).toBe(400);
    const user = await registerUser(base, project);
    const token = (await passwordGrant(base, project, user)).body.access_token as string;
    expect((await call('POST', '/email/verify/request', { token, body: { email: unique() } })).status).toBe(400);
    expect((await call('POST', '/email/verify/confirm', { body: { token: 'tev_garbage' } })).status).toBe(401);
    expect((await call('POST', '/email/verify/confirm', { body: {} })).status).toBe(400);
  });
});

describe('logout', () => {
  it('POST /logout revokes the session: access and refresh tokens stop working at once', async () => {
    const user = await registerUser(base, project);
    const login = await passwordGrant(base, project, user);
    const other = await passwordGrant(base, project, user);
    expect((await call('POST', '/logout', { token: login.body.access_token })).status).toBe(204);
    expect((await call('GET', '/userinfo', { token: login.body.access_token })).status).toBe(401);
    expect(
      (
        await postForm(
          base,
          '/token',
          { grant_type: 'refresh_token', refresh_token: login.body.refresh_token },
          { basic: [project.clientId, project.clientSecret] },
        )
      ).body.error,
    ).toBe('invalid_grant');
    expect((await call('GET', '/userinfo', { token: other.body.access_token })).status).toBe(200);
    expect((await call('POST', '/logout')).status).toBe(401);
    expect((await call('POST', '/logout', { apiKey: project.apiKey })).status).toBe(403);
  });

  it('GET /logout (end_session_endpoint) revokes the session of id_token_hint and returns to a registered URI', async () => {
    const user = await registerUser(base, project);
    const login = await passwordGrant(base, project, user);
    const url = `${base}/logout?id_token_hint=${login.body.id_token}&post_logout_redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=bye`;
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${REDIRECT_URI}?state=bye`);
    expect((await call('GET', '/userinfo', { token: login.body.access_token })).status).toBe(401);
    const evil = await fetch(
      `${base}/logout?id_token_hint=${login.body.id_token}&post_logout_redirect_uri=${encodeURIComponent('https://evil.example.com/')}`,
      { redirect: 'manual' },
    );
    expect(evil.status).toBe(400);
    expect((await fetch(`${base}/logout?id_token_hint=garbage`)).status).toBe(400);
    const plain = await fetch(`${base}/logout`);
    expect(plain.status).toBe(200);
    expect(await plain.text()).toContain('signed out');
  });
});

describe('end-user tokens at the router', () => {
  it('are an identity for GraphQL: the user principal reads its own profile', async () => {
    const user = await registerUser(base, project);
    const login = await passwordGrant(base, project, user);
    const res = await call('POST', '/graphql', {
      token: login.body.access_token,
      body: { query: '{ endUser { id email emailVerified } }' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.endUser).toEqual({ id: user.id, email: user.email, emailVerified: false });
    const hidden = await call('POST', '/graphql', {
      token: login.body.access_token,
      body: { query: '{ _authenticateUser(token: "x") { kind } }' },
    });
    expect(hidden.status).toBe(400);
  });

  it('stop working when the project is deleted', async () => {
    const p = await newProject(base);
    const user = await registerUser(base, p);
    const login = await passwordGrant(base, p, user);
    expect((await call('GET', '/userinfo', { token: login.body.access_token })).status).toBe(200);
    expect((await call('DELETE', `/auth/api/v1/projects/${p.id}`, { token: p.tenantToken })).status).toBe(204);
    const status = await waitFor(
      async () => {
        const s = (await call('GET', '/userinfo', { token: login.body.access_token })).status;
        return s !== 200 && s;
      },
      { timeoutMs: 15_000, intervalMs: 100, message: 'the token to stop working' },
    );
    expect(status).toBe(401);
  });
});

describe('discovery and the OpenAPI document', () => {
  it('lists the identity paths in /openapi.json', async () => {
    const doc = (await call('GET', '/openapi.json')).body;
    for (const path of [
      '/.well-known/openid-configuration',
      '/jwks.json',
      '/register',
      '/token',
      '/userinfo',
      '/introspect',
      '/revocation',
      '/logout',
      '/mfa/enroll',
      '/mfa/verify',
      '/mfa/disable',
      '/password/reset/request',
      '/password/reset/confirm',
      '/password/change',
      '/email/verify/request',
      '/email/verify/confirm',
      '/authorize',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect((await fetch(`${base}/docs`)).status).toBe(200);
  });
});
