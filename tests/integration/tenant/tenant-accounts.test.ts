// Tenant accounts, sessions and MFA, driven through the tenant subgraph on a real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AUTHENTICATE,
  INTERNAL,
  LOGIN,
  SIGNUP,
  awayFromStepBoundary,
  startTenantHarness,
  totp,
  type Harness,
} from '../../../subgraphs/tenant/testing.ts';
import { withOtherInstance } from './tenant-fixtures.ts';
import pg from 'pg';
import { REFRESH_REUSE_INTERVAL_SECONDS } from '../../../subgraphs/tenant/services/sessions.ts';

const ME = 'query { me { id email name mfaEnabled plan { id name } } }';
const REFRESH =
  'mutation($t: String!) { refreshSession(refreshToken: $t) { accessToken refreshToken tokenType expiresIn } }';
const LOGOUT = 'mutation { logout }';
const ENROLL = 'mutation { mfaEnroll { secret otpauthUrl } }';
const VERIFY = 'mutation($code: String!) { mfaVerify(code: $code) { mfaEnabled } }';
const DISABLE = 'mutation($code: String!) { mfaDisable(code: $code) { mfaEnabled } }';

let h: Harness;

/** Moves the session's last rotation past the refresh-token reuse interval (REFRESH_REUSE_INTERVAL_SECONDS). */
async function agePastReuseInterval(t: { principal: unknown }): Promise<void> {
  const c = new pg.Client({ connectionString: h.databaseUrl });
  await c.connect();
  try {
    await c.query(`update tenant_sessions set last_refreshed_at = now() - make_interval(secs => $2) where id = $1`, [
      (t.principal as { sessionId: string }).sessionId,
      REFRESH_REUSE_INTERVAL_SECONDS + 1,
    ]);
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  h = await startTenantHarness();
});

afterAll(async () => {
  await h?.close();
});

describe('signup', () => {
  it('creates an account on the free plan with a lower-cased e-mail', async () => {
    const { signup } = await h.data(SIGNUP, {
      input: { email: '  Ada@Example.COM ', password: 'longenough', name: '  Ada  ' },
    });
    expect(signup.tenant).toMatchObject({
      email: 'ada@example.com',
      name: 'Ada',
      mfaEnabled: false,
      plan: { id: 'free' },
    });
    expect(signup.tenant.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(signup.tenant.createdAt).toISOString()).toBe(signup.tenant.createdAt);
  });

  it('defaults the name to the local part of the e-mail', async () => {
    const { signup } = await h.data(SIGNUP, { input: { email: 'grace@example.com', password: 'longenough' } });
    expect(signup.tenant.name).toBe('grace');
  });

  it('refuses an e-mail that is already registered, whatever its case', async () => {
    expect(await h.code(SIGNUP, { input: { email: 'ADA@example.com', password: 'longenough' } })).toBe('EMAIL_TAKEN');
  });

  it('refuses a malformed e-mail, naming the field', async () => {
    const result = await h.run(SIGNUP, { input: { email: 'not-an-email', password: 'longenough' } });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'email' } });
  });

  it('refuses a password shorter than 8 characters', async () => {
    const result = await h.run(SIGNUP, { input: { email: 'short@example.com', password: 'short' } });
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'password' } });
  });

  it('refuses an empty or overlong name', async () => {
    expect(await h.code(SIGNUP, { input: { email: 'n1@example.com', password: 'longenough', name: '   ' } })).toBe(
      'VALIDATION_FAILED',
    );
    expect(
      await h.code(SIGNUP, { input: { email: 'n2@example.com', password: 'longenough', name: 'x'.repeat(101) } }),
    ).toBe('VALIDATION_FAILED');
  });
});

describe('login', () => {
  it('returns a bearer access token, a refresh token and the account', async () => {
    const { login } = await h.data(LOGIN, { input: { email: 'ADA@example.com', password: 'longenough' } });
    expect(login.tokenType).toBe('Bearer');
    expect(login.expiresIn).toBe(h.config.accessTokenTtl);
    expect(login.refreshToken).toMatch(/^tsr_[A-Za-z0-9_-]{43}$/);
    expect(login.tenant.email).toBe('ada@example.com');
    const auth = await h.data(AUTHENTICATE, { token: login.accessToken }, INTERNAL);
    expect(auth._authenticate).toMatchObject({ kind: 'tenant', tenantId: login.tenant.id, projectId: null });
  });

  it('signs access tokens as ES256 JWTs with the documented claims', async () => {
    const { login } = await h.data(LOGIN, { input: { email: 'ada@example.com', password: 'longenough' } });
    const [header, payload] = login.accessToken
      .split('.')
      .slice(0, 2)
      .map((p: string) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(typeof header.kid).toBe('string');
    expect(payload).toMatchObject({ iss: h.config.issuer, aud: 'tessera:tenant', sub: login.tenant.id, typ: 'tenant' });
    expect(payload.exp - payload.iat).toBe(h.config.accessTokenTtl);
    expect(typeof payload.sid).toBe('string');
    expect(typeof payload.jti).toBe('string');
  });

  it('answers a wrong password and an unknown e-mail with the same error', async () => {
    const wrong = await h.run(LOGIN, { input: { email: 'ada@example.com', password: 'wrong password' } });
    const unknown = await h.run(LOGIN, { input: { email: 'nobody@example.com', password: 'wrong password' } });
    expect(wrong.errors?.[0]?.extensions?.code).toBe('INVALID_CREDENTIALS');
    expect(unknown.errors?.[0]).toEqual(wrong.errors?.[0]);
  });

  it('rate limits an account after repeated failures', async () => {
    const t = await h.newTenant();
    for (let i = 0; i < 10; i++)
      expect(await h.code(LOGIN, { input: { email: t.email, password: 'nope nope' } })).toBe('INVALID_CREDENTIALS');
    expect(await h.code(LOGIN, { input: { email: t.email, password: t.password } })).toBe('RATE_LIMITED');
  });
});

describe('me', () => {
  it('returns the signed-in account', async () => {
    const t = await h.newTenant();
    const { me } = await h.data(ME, {}, t.principal);
    expect(me).toMatchObject({ id: t.tenantId, email: t.email, mfaEnabled: false, plan: { id: 'free', name: 'Free' } });
  });

  it('needs a tenant credential', async () => {
    expect(await h.code(ME)).toBe('UNAUTHENTICATED');
    expect(
      await h.code(ME, {}, { kind: 'project', projectId: crypto.randomUUID(), tenantId: crypto.randomUUID() }),
    ).toBe('FORBIDDEN');
  });
});

describe('sessions', () => {
  it('refuses the access token at once after logout', async () => {
    const t = await h.newTenant();
    expect(await h.data(LOGOUT, {}, t.principal)).toEqual({ logout: true });
    const auth = await h.authenticate({ token: t.accessToken });
    expect(auth.errors?.[0]?.extensions?.code).toBe('INVALID_TOKEN');
    expect(await h.code(REFRESH, { t: t.refreshToken })).toBe('INVALID_TOKEN');
  });

  it('rotates the refresh token: the new pair works and the old refresh token does not', async () => {
    const t = await h.newTenant();
    const { refreshSession: first } = await h.data(REFRESH, { t: t.refreshToken });
    expect(first.refreshToken).not.toBe(t.refreshToken);
    expect(first.tokenType).toBe('Bearer');
    expect((await h.authenticate({ token: first.accessToken })).data?._authenticate).toMatchObject({
      kind: 'tenant',
      tenantId: t.tenantId,
    });
    const { refreshSession: second } = await h.data(REFRESH, { t: first.refreshToken });
    expect(second.refreshToken).not.toBe(first.refreshToken);
  });

  it('gives a rotated refresh token presented again within the reuse interval the same new pair (two tabs at once)', async () => {
    const t = await h.newTenant();
    const { refreshSession: next } = await h.data(REFRESH, { t: t.refreshToken });
    const { refreshSession: again } = await h.data(REFRESH, { t: t.refreshToken });
    expect(again.refreshToken).toBe(next.refreshToken);
    expect((await h.authenticate({ token: again.accessToken })).data?._authenticate).toMatchObject({
      tenantId: t.tenantId,
    });
    // The session goes on: the pair rotates as usual.
    const { refreshSession: third } = await h.data(REFRESH, { t: next.refreshToken });
    expect(third.refreshToken).not.toBe(next.refreshToken);
    expect((await h.authenticate({ token: next.accessToken })).data?._authenticate).toBeTruthy();
  });

  it('gives two refreshes with one token at the same moment one new pair', async () => {
    const t = await h.newTenant();
    const [a, b] = await Promise.all([h.data(REFRESH, { t: t.refreshToken }), h.data(REFRESH, { t: t.refreshToken })]);
    expect(a.refreshSession.refreshToken).toBe(b.refreshSession.refreshToken);
    expect(await h.code(REFRESH, { t: a.refreshSession.refreshToken })).toBeUndefined();
  });

  it('revokes the session when the token is presented again from another client address, even within the interval', async () => {
    const t = await h.newTenant();
    const { refreshSession: next } = await h.data(REFRESH, { t: t.refreshToken }, undefined);
    await h.run(REFRESH, { t: next.refreshToken }, undefined, '203.0.113.1');
    const stolen = await h.run(REFRESH, { t: next.refreshToken }, undefined, '198.51.100.7');
    expect(stolen.errors?.[0]?.extensions?.code).toBe('INVALID_TOKEN');
    expect((await h.authenticate({ token: next.accessToken })).errors?.[0]?.extensions?.code).toBe('INVALID_TOKEN');
  });

  it('gives the grace to the token just rotated away only: an older one ends the session', async () => {
    const t = await h.newTenant();
    const { refreshSession: b } = await h.data(REFRESH, { t: t.refreshToken });
    await h.data(REFRESH, { t: b.refreshToken });
    expect(await h.code(REFRESH, { t: t.refreshToken })).toBe('INVALID_TOKEN');
    expect(await h.code(REFRESH, { t: b.refreshToken })).toBe('INVALID_TOKEN');
  });

  it('revokes the whole session when a rotated refresh token is presented again after the reuse interval', async () => {
    const t = await h.newTenant();
    const { refreshSession: next } = await h.data(REFRESH, { t: t.refreshToken });
    await agePastReuseInterval(t);
    const reuse = await h.run(REFRESH, { t: t.refreshToken });
    expect(reuse.errors?.[0]?.extensions?.code).toBe('INVALID_TOKEN');
    // The legitimate holder's tokens die with the session.
    expect(await h.code(REFRESH, { t: next.refreshToken })).toBe('INVALID_TOKEN');
    expect((await h.authenticate({ token: next.accessToken })).errors?.[0]?.extensions?.code).toBe('INVALID_TOKEN');
  });

  it('refuses garbage, tampered and foreign tokens as INVALID_TOKEN', async () => {
    const t = await h.newTenant();
    const [head, body, sig] = t.accessToken.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), sub: crypto.randomUUID() }),
    ).toString('base64url');
    for (const token of ['garbage', `${head}.${forged}.${sig}`, `${head}.${body}.${sig.slice(0, -4)}AAAA`]) {
      expect((await h.authenticate({ token })).errors?.[0]?.extensions?.code).toBe('INVALID_TOKEN');
    }
    expect(await h.code(REFRESH, { t: 'tsr_unknown' })).toBe('INVALID_TOKEN');
  });

  it('keeps tokens of the previous signing key valid after a rotation, and refuses them after the next', async () => {
    const t = await h.newTenant();
    // A second instance of the services on the same database, as in split mode.
    await withOtherInstance(h, async (other) => {
      const kidOf = (token: string) =>
        JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid as string;

      await other.signingKeys.rotate();
      const fresh = await other.sessions.login({ email: t.email, password: t.password });
      expect(kidOf(fresh.accessToken)).not.toBe(kidOf(t.accessToken));
      await expect(other.sessions.authenticate(t.accessToken)).resolves.toMatchObject({ tenantId: t.tenantId });
      await expect(other.sessions.authenticate(fresh.accessToken)).resolves.toMatchObject({ tenantId: t.tenantId });

      await other.signingKeys.rotate();
      await expect(other.sessions.authenticate(t.accessToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
      await expect(other.sessions.authenticate(fresh.accessToken)).resolves.toMatchObject({ tenantId: t.tenantId });
    });
  });
});

describe('MFA', () => {
  it('enrolls, verifies, then requires and checks a code at login, refusing a replayed code', async () => {
    const t = await h.newTenant();
    const { mfaEnroll } = await h.data(ENROLL, {}, t.principal);
    expect(mfaEnroll.secret).toMatch(/^[A-Z2-7]+=*$/);
    expect(mfaEnroll.otpauthUrl).toMatch(/^otpauth:\/\/totp\/Tessera:.*secret=/);

    // Enrolment alone does not turn MFA on.
    expect((await h.data(ME, {}, t.principal)).me.mfaEnabled).toBe(false);
    expect(await h.code(VERIFY, { code: '000000' }, t.principal)).toBe('INVALID_MFA_CODE');

    await awayFromStepBoundary();
    expect(await h.data(VERIFY, { code: await totp(mfaEnroll.secret, -1) }, t.principal)).toEqual({
      mfaVerify: { mfaEnabled: true },
    });
    expect(await h.code(ENROLL, {}, t.principal)).toBe('MFA_ALREADY_ENABLED');

    expect(await h.code(LOGIN, { input: { email: t.email, password: t.password } })).toBe('MFA_REQUIRED');
    // A wrong password still says INVALID_CREDENTIALS, not that MFA is on.
    expect(await h.code(LOGIN, { input: { email: t.email, password: 'wrong password' } })).toBe('INVALID_CREDENTIALS');
    expect(await h.code(LOGIN, { input: { email: t.email, password: t.password, totpCode: '12345' } })).toBe(
      'INVALID_MFA_CODE',
    );

    const code = await totp(mfaEnroll.secret, 0);
    const { login } = await h.data(LOGIN, { input: { email: t.email, password: t.password, totpCode: code } });
    expect(login.tenant.mfaEnabled).toBe(true);
    expect(await h.code(LOGIN, { input: { email: t.email, password: t.password, totpCode: code } })).toBe(
      'INVALID_MFA_CODE',
    );
    // The code used to verify is older than the one accepted since: also refused.
    expect(
      await h.code(LOGIN, {
        input: { email: t.email, password: t.password, totpCode: await totp(mfaEnroll.secret, -1) },
      }),
    ).toBe('INVALID_MFA_CODE');

    expect(await h.code(DISABLE, { code }, t.principal)).toBe('INVALID_MFA_CODE');
    expect(await h.data(DISABLE, { code: await totp(mfaEnroll.secret, 1) }, t.principal)).toEqual({
      mfaDisable: { mfaEnabled: false },
    });
    expect(await h.code(DISABLE, { code: await totp(mfaEnroll.secret, 1) }, t.principal)).toBe('MFA_NOT_ENABLED');
    await h.data(LOGIN, { input: { email: t.email, password: t.password } });
  });

  it('refuses verify before enrolment and disable while off', async () => {
    const t = await h.newTenant();
    expect(await h.code(VERIFY, { code: '123456' }, t.principal)).toBe('MFA_NOT_ENROLLED');
    expect(await h.code(DISABLE, { code: '123456' }, t.principal)).toBe('MFA_NOT_ENABLED');
  });

  it('needs a tenant credential', async () => {
    expect(await h.code(ENROLL)).toBe('UNAUTHENTICATED');
    expect(await h.code(LOGOUT)).toBe('UNAUTHENTICATED');
  });
});

describe('plans', () => {
  it('lists the seeded plans publicly in their order, self-hosted first, without prices until an operator sets them', async () => {
    const { plans } = await h.data(
      'query { plans { id name description priceCentsPerMonth limits { maxProjects maxStorageBytes maxUploadBytes maxDatabaseRows maxFunctionInvocationsPerMonth maxRequestsPerMinute } } }',
    );
    expect(plans.map((p: { id: string }) => p.id)).toEqual(['self-hosted', 'free', 'pro', 'enterprise']);
    expect(plans[0]).toMatchObject({ priceCentsPerMonth: null, limits: { maxProjects: null, maxStorageBytes: null } });
    expect(plans[1]).toMatchObject({
      priceCentsPerMonth: null,
      limits: { maxProjects: 3, maxStorageBytes: 1024 ** 3 },
    });
    expect(plans[3].limits.maxStorageBytes).toBeGreaterThan(2 ** 31);
  });
});

describe('_authenticate', () => {
  it('is refused to every principal but the router', async () => {
    const t = await h.newTenant();
    for (const principal of [
      undefined,
      t.principal,
      { kind: 'project', projectId: crypto.randomUUID(), tenantId: t.tenantId } as const,
    ]) {
      expect(await h.code(AUTHENTICATE, { token: t.accessToken }, principal)).toBe('FORBIDDEN');
    }
  });

  it('needs exactly one credential', async () => {
    expect(await h.code(AUTHENTICATE, {}, INTERNAL)).toBe('VALIDATION_FAILED');
    expect(await h.code(AUTHENTICATE, { apiKey: 'tsk_x', token: 'y' }, INTERNAL)).toBe('VALIDATION_FAILED');
  });
});
