// The TOTP service's own rules, over an account kept in memory: which codes it takes, replay and its race, the
// order of enrol → verify → disable, and wrong codes counted. The tables behind it (tenants, end-users) and their
// conditional UPDATE are exercised against PostgreSQL by tests/integration/tenant/tenant-accounts and the identity e2e tests.
import { describe, expect, it } from '@jest/globals';
import { generateSync } from 'otplib';
import { createSecretBox } from './crypto.ts';
import { AppError } from './errors.ts';
import { createFailureLimiter } from './rate-limit.ts';
import { createTotpService, type TotpAccount, type TotpChange } from './totp.ts';

type Account = TotpAccount & { id: string };

function setup(limit = 5) {
  const box = createSecretBox('s'.repeat(40));
  const account: Account = {
    id: 'a1',
    email: 'ann@example.com',
    mfaEnabled: false,
    mfaSecret: null,
    mfaPendingSecret: null,
    mfaLastTimeStep: null,
  };
  const limiter = createFailureLimiter({ limit, windowMs: 60_000 });
  const totp = createTotpService<Account>({
    box,
    store: {
      load: async (id) => {
        if (id !== account.id) throw new AppError('UNAUTHENTICATED');
        return { ...account };
      },
      setPending: async (_, sealed) => void (account.mfaPendingSecret = sealed),
      // Compare-and-set, as the tables' conditional UPDATE: only a later step wins.
      claim: async (_, step: number, change: TotpChange) => {
        await Promise.resolve();
        if (
          account.mfaLastTimeStep !== null &&
          account.mfaLastTimeStep !== undefined &&
          account.mfaLastTimeStep >= step
        )
          return false;
        Object.assign(account, change, { mfaLastTimeStep: step });
        return true;
      },
      check: (a) => limiter.check(a.email),
      fail: (a) => limiter.fail(a.email),
    },
  });
  return {
    totp,
    account,
    codeAt: (secret: string, seconds = Date.now() / 1000) => generateSync({ secret, epoch: Math.floor(seconds) }),
  };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (err) {
    return (err as AppError).code;
  }
}

describe('the TOTP service', () => {
  it('enrols with an otpauth URL, activates with a code from the pending secret, and seals what it stores', async () => {
    const { totp, account, codeAt } = setup();
    const { secret, otpauthUrl } = await totp.enroll('a1');
    expect(otpauthUrl).toMatch(/^otpauth:\/\/totp\/Tessera:ann%40example\.com\?secret=[A-Z2-7]+&issuer=Tessera/);
    expect(account.mfaPendingSecret).not.toContain(secret);
    expect(await totp.verify('a1', codeAt(secret))).toEqual({ mfaEnabled: true });
    expect(account).toMatchObject({ mfaEnabled: true, mfaPendingSecret: null });
    expect(account.mfaSecret).toBeTruthy();
  });

  it('refuses a code used once already, and takes only one of two requests racing with the same code', async () => {
    const { totp, account, codeAt } = setup();
    const { secret } = await totp.enroll('a1');
    const first = codeAt(secret, Date.now() / 1000 - 30);
    await totp.verify('a1', first);
    expect(await codeOf(totp.checkSignIn({ ...account }, first))).toBe('INVALID_MFA_CODE');
    const now = codeAt(secret);
    const both = await Promise.all([
      codeOf(totp.checkSignIn({ ...account }, now)),
      codeOf(totp.checkSignIn({ ...account }, now)),
    ]);
    expect(both.sort()).toEqual(['INVALID_MFA_CODE', 'OK']);
  });

  it('refuses malformed codes without looking further: wrong length, letters, other types', async () => {
    const { totp, codeAt } = setup(100);
    const { secret } = await totp.enroll('a1');
    const good = codeAt(secret);
    for (const bad of ['', '12345', '1234567', 'abcdef', `${good}0`, 123456, null, {}, [good], '１２３４５６']) {
      expect(await codeOf(totp.verify('a1', bad))).toBe('INVALID_MFA_CODE');
    }
    expect(await codeOf(totp.verify('a1', `${good.slice(0, 3)} ${good.slice(3)}`))).toBe('OK');
  });

  it('counts wrong codes against the account: RATE_LIMITED past the limit, even for a right code', async () => {
    const { totp, codeAt } = setup(3);
    const { secret } = await totp.enroll('a1');
    for (let i = 0; i < 3; i++) expect(await codeOf(totp.verify('a1', '000000'))).toBe('INVALID_MFA_CODE');
    expect(await codeOf(totp.verify('a1', codeAt(secret)))).toBe('RATE_LIMITED');
  });

  it('keeps the order: verify needs an enrolment, enrol and verify need MFA off, disable needs it on and a code', async () => {
    const { totp, account, codeAt } = setup();
    expect(await codeOf(totp.verify('a1', '123456'))).toBe('MFA_NOT_ENROLLED');
    expect(await codeOf(totp.disable('a1', '123456'))).toBe('MFA_NOT_ENABLED');
    const { secret } = await totp.enroll('a1');
    await totp.verify('a1', codeAt(secret, Date.now() / 1000 - 30));
    expect(await codeOf(totp.enroll('a1'))).toBe('MFA_ALREADY_ENABLED');
    expect(await codeOf(totp.verify('a1', codeAt(secret)))).toBe('MFA_ALREADY_ENABLED');
    expect(await codeOf(totp.disable('a1', '000000'))).toBe('INVALID_MFA_CODE');
    expect(await totp.disable('a1', codeAt(secret))).toEqual({ mfaEnabled: false });
    expect(account).toMatchObject({ mfaEnabled: false, mfaSecret: null, mfaPendingSecret: null });
    expect(await codeOf(totp.enroll('unknown'))).toBe('UNAUTHENTICATED');
  });

  it('at sign-in: nothing to check when MFA is off, MFA_REQUIRED without a code when it is on', async () => {
    const { totp, account, codeAt } = setup();
    expect(await totp.checkSignIn({ ...account }, undefined)).toBe(false);
    const { secret } = await totp.enroll('a1');
    await totp.verify('a1', codeAt(secret, Date.now() / 1000 - 30));
    for (const none of [undefined, null, ''])
      expect(await codeOf(totp.checkSignIn({ ...account }, none))).toBe('MFA_REQUIRED');
    expect(await totp.checkSignIn({ ...account }, codeAt(secret))).toBe(true);
  });
});
