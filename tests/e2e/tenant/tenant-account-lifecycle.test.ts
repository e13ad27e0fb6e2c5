// A developer recovers and manages an account through the REST API, against a live Tessera whose platform mail goes
// to a real SMTP server: forgot password (anti-enumeration answers, rate limit, one-time link), reset, change password,
// change e-mail with verification of the new address, MFA recovery codes (shown once, single use, regenerated,
// turning MFA off with one), sessions (list, end one, sign out everywhere) and deleting the account with its projects.
// Each route is also tried by the callers who must not get through: anonymous, another tenant, a project key.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { nextCode } from '../../support/totp.ts';
import { startMailbox, tokenOf } from '../identity/identity-fixtures.ts';

const PASSWORD = 'a long enough password 1';

function expectError(res: Res, status: number, code: string, mentions?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  if (mentions) expect(res.body.error.message).toMatch(mentions);
}

let p: TestPlatform;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
let call: ReturnType<typeof client>;
let n = 0;

/** A new account; answers its address and a signed-in session. */
async function account(password = PASSWORD) {
  const email = `dev${++n}-${Date.now()}@example.com`;
  expect((await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } })).status).toBe(201);
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password } });
  expect(login.status).toBe(200);
  return { email, token: login.body.access_token as string, refresh: login.body.refresh_token as string };
}

const login = async (email: string, password = PASSWORD, extra: Record<string, string> = {}) =>
  await call('POST', '/auth/api/v1/tenant/login', { body: { email, password, ...extra } });

beforeAll(async () => {
  mailbox = await startMailbox();
  p = await startOneProcess({ TESSERA_SMTP_URL: mailbox.url });
  call = client(p.url);
}, 90_000);
afterAll(async () => {
  await p?.close();
  await mailbox?.close();
});

describe('forgot password and reset', () => {
  it('answers the same for a known and an unknown address, and mails only the account', async () => {
    const a = await account();
    const known = await call('POST', '/auth/api/v1/tenant/password/forgot', { body: { email: a.email } });
    const unknown = await call('POST', '/auth/api/v1/tenant/password/forgot', {
      body: { email: `nobody-${Date.now()}@example.com` },
    });
    expect({ status: known.status, body: known.body }).toEqual({ status: 202, body: { accepted: true } });
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 202, body: { accepted: true } });
    const mail = await mailbox.waitFor(a.email, /reset the password/);
    expect(mail.text).toMatch(/http:\/\/[^/]+\/dashboard\/reset-password\?token=tar_/);
    expect(mailbox.mails.some((m) => m.to.startsWith('nobody-'))).toBe(false);
    expectError(
      await call('POST', '/auth/api/v1/tenant/password/forgot', { body: { email: 'not an address' } }),
      400,
      'VALIDATION_FAILED',
      /email/,
    );
  });

  it('resets with the mailed token once, ends every session, and keeps the old password out', async () => {
    const a = await account();
    const other = await login(a.email);
    await call('POST', '/auth/api/v1/tenant/password/forgot', { body: { email: a.email } });
    const token = tokenOf(await mailbox.waitFor(a.email, /reset the password/));
    expectError(
      await call('POST', '/auth/api/v1/tenant/password/reset', { body: { token, new_password: 'short' } }),
      400,
      'VALIDATION_FAILED',
      /new_password/,
    );
    expectError(
      await call('POST', '/auth/api/v1/tenant/password/reset', {
        body: { token: `${token}x`, new_password: 'a brand new password' },
      }),
      400,
      'INVALID_LINK',
    );
    const reset = await call('POST', '/auth/api/v1/tenant/password/reset', {
      body: { token, new_password: 'a brand new password' },
    });
    expect(reset.status).toBe(204);
    expectError(
      await call('POST', '/auth/api/v1/tenant/password/reset', { body: { token, new_password: 'yet another one!' } }),
      400,
      'INVALID_LINK',
    );
    // Both sessions ended: access tokens and refresh tokens.
    expectError(await call('GET', '/auth/api/v1/tenant', { token: a.token }), 401, 'INVALID_TOKEN');
    expectError(await call('GET', '/auth/api/v1/tenant', { token: other.body.access_token }), 401, 'INVALID_TOKEN');
    expect((await call('POST', '/auth/api/v1/tenant/refresh', { body: { refresh_token: a.refresh } })).status).toBe(
      401,
    );
    expectError(await login(a.email), 401, 'INVALID_CREDENTIALS');
    expect((await login(a.email, 'a brand new password')).status).toBe(200);
  });

  it('counts every request per address: the sixth in 15 minutes is 429, known address or not', async () => {
    const unknown = `ratelimited-${Date.now()}@example.com`;
    for (let i = 0; i < 5; i++)
      expect((await call('POST', '/auth/api/v1/tenant/password/forgot', { body: { email: unknown } })).status).toBe(
        202,
      );
    const sixth = await call('POST', '/auth/api/v1/tenant/password/forgot', { body: { email: unknown } });
    expectError(sixth, 429, 'RATE_LIMITED');
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('change password and e-mail', () => {
  it('changes the password with the current one; other sessions end, this one stays', async () => {
    const a = await account();
    const other = await login(a.email);
    expectError(
      await call('POST', '/auth/api/v1/tenant/password', { token: a.token, body: { new_password: 'new password 2' } }),
      400,
      'VALIDATION_FAILED',
      /current_password/,
    );
    expectError(
      await call('POST', '/auth/api/v1/tenant/password', {
        token: a.token,
        body: { current_password: 'wrong password', new_password: 'new password 2' },
      }),
      400,
      'VALIDATION_FAILED',
      /current_password: is wrong/,
    );
    expectError(
      await call('POST', '/auth/api/v1/tenant/password', {
        body: { current_password: PASSWORD, new_password: 'new password 2' },
      }),
      401,
      'UNAUTHENTICATED',
    );
    const ok = await call('POST', '/auth/api/v1/tenant/password', {
      token: a.token,
      body: { current_password: PASSWORD, new_password: 'new password 2' },
    });
    expect(ok.status).toBe(204);
    expect((await call('GET', '/auth/api/v1/tenant', { token: a.token })).status).toBe(200);
    expectError(await call('GET', '/auth/api/v1/tenant', { token: other.body.access_token }), 401, 'INVALID_TOKEN');
    expect((await login(a.email, 'new password 2')).status).toBe(200);
  });

  it('changes the e-mail address only when the link mailed to the new address is opened', async () => {
    const a = await account();
    const newEmail = `moved-${Date.now()}@example.com`;
    expectError(
      await call('POST', '/auth/api/v1/tenant/email', {
        token: a.token,
        body: { new_email: newEmail, current_password: 'wrong password' },
      }),
      400,
      'VALIDATION_FAILED',
      /current_password/,
    );
    const asked = await call('POST', '/auth/api/v1/tenant/email', {
      token: a.token,
      body: { new_email: newEmail, current_password: PASSWORD },
    });
    expect({ status: asked.status, body: asked.body }).toEqual({ status: 202, body: { accepted: true } });
    // Nothing changed yet.
    expect((await call('GET', '/auth/api/v1/tenant', { token: a.token })).body.tenant.email).toBe(a.email);
    const token = tokenOf(await mailbox.waitFor(newEmail, /Confirm your new/));
    expectError(
      await call('POST', '/auth/api/v1/tenant/email/confirm', { body: { token: 'tae_forged' } }),
      400,
      'INVALID_LINK',
    );
    const confirmed = await call('POST', '/auth/api/v1/tenant/email/confirm', { body: { token } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.tenant.email).toBe(newEmail);
    await mailbox.waitFor(a.email, /is now/);
    expectError(await call('POST', '/auth/api/v1/tenant/email/confirm', { body: { token } }), 400, 'INVALID_LINK');
    expect((await login(newEmail)).status).toBe(200);
    expectError(await login(a.email), 401, 'INVALID_CREDENTIALS');
  });

  it('never moves an account onto an address another account has, and does not tell the caller', async () => {
    const a = await account();
    const b = await account();
    const asked = await call('POST', '/auth/api/v1/tenant/email', {
      token: a.token,
      body: { new_email: b.email, current_password: PASSWORD },
    });
    expect({ status: asked.status, body: asked.body }).toEqual({ status: 202, body: { accepted: true } });
    const mail = await mailbox.waitFor(b.email, /already has an account/);
    expect(mail.text).not.toMatch(/token=/);
    expect((await call('GET', '/auth/api/v1/tenant', { token: a.token })).body.tenant.email).toBe(a.email);
  });

  it('refuses the account routes to anonymous callers and project keys', async () => {
    const a = await account();
    const project = await call('POST', '/auth/api/v1/projects', { token: a.token, body: { name: 'Keyed' } });
    const apiKey = project.body.project.api_key as string;
    for (const [method, path] of [
      ['POST', '/auth/api/v1/tenant/password'],
      ['POST', '/auth/api/v1/tenant/email'],
      ['GET', '/auth/api/v1/tenant/sessions'],
      ['POST', '/auth/api/v1/tenant/sessions/revoke'],
      ['POST', '/auth/api/v1/tenant/delete'],
      ['POST', '/auth/api/v1/tenant/mfa/recovery-codes'],
    ] as const) {
      const body = { new_password: 'x'.repeat(10), current_password: PASSWORD, confirm: a.email, code: '123456' };
      expectError(await call(method, path, method === 'GET' ? {} : { body }), 401, 'UNAUTHENTICATED');
      const keyed = await call(method, path, method === 'GET' ? { apiKey } : { apiKey, body });
      expect([401, 403]).toContain(keyed.status);
    }
  });
});

describe('MFA recovery codes', () => {
  it('are shown once at enrolment, each signs in once, and regenerating retires the old ones', async () => {
    const a = await account();
    const { secret } = (await call('POST', '/auth/api/v1/tenant/mfa/enroll', { token: a.token })).body;
    const first = await nextCode(secret);
    const verified = await call('POST', '/auth/api/v1/tenant/mfa/verify', { token: a.token, body: { code: first } });
    expect(verified.status).toBe(200);
    const codes = verified.body.recovery_codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    expect((await call('GET', '/auth/api/v1/tenant', { token: a.token })).body.tenant.recovery_codes_remaining).toBe(
      10,
    );

    expectError(await login(a.email), 401, 'MFA_REQUIRED');
    expectError(await login(a.email, PASSWORD, { recovery_code: 'aaaaa-bbbbb' }), 401, 'INVALID_MFA_CODE');
    // Upper case and without the dash are the same code.
    const signedIn = await login(a.email, PASSWORD, { recovery_code: codes[0]!.toUpperCase().replace('-', '') });
    expect(signedIn.status).toBe(200);
    expectError(await login(a.email, PASSWORD, { recovery_code: codes[0]! }), 401, 'INVALID_MFA_CODE');
    // A wrong password with a good code is still a wrong password, and does not use the code up.
    expectError(await login(a.email, 'wrong password', { recovery_code: codes[1]! }), 401, 'INVALID_CREDENTIALS');
    expect(
      (await call('GET', '/auth/api/v1/tenant', { token: signedIn.body.access_token })).body.tenant
        .recovery_codes_remaining,
    ).toBe(9);

    expectError(
      await call('POST', '/auth/api/v1/tenant/mfa/recovery-codes', { token: a.token, body: { code: '000000' } }),
      401,
      'INVALID_MFA_CODE',
    );
    const again = await call('POST', '/auth/api/v1/tenant/mfa/recovery-codes', {
      token: a.token,
      body: { code: await nextCode(secret, first) },
    });
    expect(again.status).toBe(200);
    const fresh = again.body.recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expect(fresh.some((c) => codes.includes(c))).toBe(false);
    expectError(await login(a.email, PASSWORD, { recovery_code: codes[1]! }), 401, 'INVALID_MFA_CODE');
    expect((await login(a.email, PASSWORD, { recovery_code: fresh[0]! })).status).toBe(200);

    // A lost authenticator: MFA off with a recovery code; the codes go with it.
    const off = await call('POST', '/auth/api/v1/tenant/mfa/disable', { token: a.token, body: { code: fresh[1]! } });
    expect({ status: off.status, body: off.body }).toEqual({ status: 200, body: { mfa_enabled: false } });
    const me = (await call('GET', '/auth/api/v1/tenant', { token: a.token })).body.tenant;
    expect({ mfa: me.mfa_enabled, remaining: me.recovery_codes_remaining }).toEqual({ mfa: false, remaining: 0 });
    expect((await login(a.email)).status).toBe(200);
    expectError(
      await call('POST', '/auth/api/v1/tenant/mfa/recovery-codes', { token: a.token, body: { code: '123456' } }),
      409,
      'MFA_NOT_ENABLED',
    );
  }, 90_000);

  it("one account's codes do not work for another account", async () => {
    const a = await account();
    const b = await account();
    const enrol = async (x: { token: string }) => {
      const { secret } = (await call('POST', '/auth/api/v1/tenant/mfa/enroll', { token: x.token })).body;
      const res = await call('POST', '/auth/api/v1/tenant/mfa/verify', {
        token: x.token,
        body: { code: await nextCode(secret) },
      });
      return res.body.recovery_codes as string[];
    };
    const codesA = await enrol(a);
    await enrol(b);
    expectError(await login(b.email, PASSWORD, { recovery_code: codesA[0]! }), 401, 'INVALID_MFA_CODE');
    expect((await login(a.email, PASSWORD, { recovery_code: codesA[0]! })).status).toBe(200);
  });
});

describe('sessions', () => {
  it('lists the live sessions, ends one, and signs out everywhere', async () => {
    const a = await account();
    const second = await login(a.email);
    const third = await login(a.email);
    const list = await call('GET', '/auth/api/v1/tenant/sessions', { token: a.token });
    expect(list.status).toBe(200);
    expect(list.body.sessions).toHaveLength(3);
    expect(list.body.sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    for (const s of list.body.sessions) {
      expect(Object.keys(s).sort()).toEqual(['created_at', 'current', 'expires_at', 'id', 'ip', 'last_used_at']);
      expect(s.ip).toBe('127.0.0.1');
    }
    const others = (list.body.sessions as { id: string; current: boolean }[]).filter((s) => !s.current);

    // Another tenant cannot end them, nor tell them from unknown ids.
    const b = await account();
    expectError(
      await call('DELETE', `/auth/api/v1/tenant/sessions/${others[0]!.id}`, { token: b.token }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await call('DELETE', '/auth/api/v1/tenant/sessions/00000000-0000-4000-8000-000000000000', { token: b.token }),
      404,
      'NOT_FOUND',
    );
    expectError(await call('DELETE', '/auth/api/v1/tenant/sessions/not-a-uuid', { token: a.token }), 404, 'NOT_FOUND');

    const sessionOf = async (token: string) =>
      (
        (await call('GET', '/auth/api/v1/tenant/sessions', { token })).body.sessions as {
          id: string;
          current: boolean;
        }[]
      ).find((s) => s.current)!.id;
    const secondId = await sessionOf(second.body.access_token);
    expect((await call('DELETE', `/auth/api/v1/tenant/sessions/${secondId}`, { token: a.token })).status).toBe(204);
    expectError(await call('GET', '/auth/api/v1/tenant', { token: second.body.access_token }), 401, 'INVALID_TOKEN');
    expect((await call('GET', '/auth/api/v1/tenant', { token: third.body.access_token })).status).toBe(200);

    const keep = await call('POST', '/auth/api/v1/tenant/sessions/revoke', {
      token: a.token,
      body: { keep_current: true },
    });
    expect({ status: keep.status, body: keep.body }).toEqual({ status: 200, body: { revoked: 1 } });
    expectError(await call('GET', '/auth/api/v1/tenant', { token: third.body.access_token }), 401, 'INVALID_TOKEN');
    expect((await call('GET', '/auth/api/v1/tenant', { token: a.token })).status).toBe(200);
    // B's session is untouched by A's "everywhere".
    expect((await call('GET', '/auth/api/v1/tenant', { token: b.token })).status).toBe(200);

    const all = await call('POST', '/auth/api/v1/tenant/sessions/revoke', { token: a.token, body: {} });
    expect(all.body).toEqual({ revoked: 1 });
    expectError(await call('GET', '/auth/api/v1/tenant', { token: a.token }), 401, 'INVALID_TOKEN');
  });
});

describe('deleting the account', () => {
  it('needs the typed address and the password, then deletes the projects and the account', async () => {
    const a = await account();
    const b = await account();
    const project = (await call('POST', '/auth/api/v1/projects', { token: a.token, body: { name: 'Doomed' } })).body
      .project;
    const bProject = (await call('POST', '/auth/api/v1/projects', { token: b.token, body: { name: 'Kept' } })).body
      .project;
    expectError(
      await call('POST', '/auth/api/v1/tenant/delete', {
        token: a.token,
        body: { confirm: 'someone-else@example.com', current_password: PASSWORD },
      }),
      400,
      'VALIDATION_FAILED',
      /confirm/,
    );
    expectError(
      await call('POST', '/auth/api/v1/tenant/delete', {
        token: a.token,
        body: { confirm: a.email, current_password: 'wrong password' },
      }),
      400,
      'VALIDATION_FAILED',
      /current_password/,
    );
    // B's token deletes B, never A, whatever it types.
    expectError(
      await call('POST', '/auth/api/v1/tenant/delete', {
        token: b.token,
        body: { confirm: a.email, current_password: PASSWORD },
      }),
      400,
      'VALIDATION_FAILED',
      /confirm/,
    );
    const gone = await call('POST', '/auth/api/v1/tenant/delete', {
      token: a.token,
      body: { confirm: a.email.toUpperCase(), current_password: PASSWORD },
    });
    expect({ status: gone.status, body: gone.body }).toEqual({ status: 200, body: { deleted_projects: [project.id] } });
    expectError(await call('GET', '/auth/api/v1/tenant', { token: a.token }), 401, 'INVALID_TOKEN');
    expectError(await login(a.email), 401, 'INVALID_CREDENTIALS');
    expect((await call('POST', '/api/v1/find', { apiKey: project.api_key, body: { table: 'x' } })).status).toBe(401);
    // B and its project are untouched; A's address can sign up again.
    expect((await call('GET', `/auth/api/v1/projects/${bProject.id}`, { token: b.token })).status).toBe(200);
    expect(
      (await call('POST', '/auth/api/v1/tenants/signup', { body: { email: a.email, password: PASSWORD } })).status,
    ).toBe(201);
  });
});
