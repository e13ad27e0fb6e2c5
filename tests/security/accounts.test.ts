// Accounts: a password-reset token outliving the reset it was for (a second mail, one sent before a password
// change), and developer-account sign-ups in bulk from one address.
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { client } from '../support/http.ts';
import {
  newProject,
  passwordGrant,
  registerUser,
  startIdentityPlatform,
  tokenOf,
  type Project,
} from '../e2e/identity/identity-fixtures.ts';
import { attackTable } from './attack-table.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let call: ReturnType<typeof client>;
let project: Project;

const SIGNUPS_PER_HOUR = 3;

/** Asks for a reset mail and answers its token. */
async function resetToken(email: string): Promise<string> {
  expect((await call('POST', '/password/reset/request', { apiKey: project.apiKey, body: { email } })).status).toBe(202);
  return tokenOf(await env.mailbox.waitFor(email, /Reset your password/));
}

const confirm = (token: string, password: string) =>
  call('POST', '/password/reset/confirm', { body: { token, new_password: password } });

const signup = (n: number, address: string) =>
  call('POST', '/auth/api/v1/tenants/signup', {
    headers: { 'x-forwarded-for': address },
    body: { email: `bulk-${n}-${Date.now()}@example.com`, password: 'a long password' },
  });

beforeAll(async () => {
  env = await startIdentityPlatform({ TESSERA_SIGNUP_RATE_LIMIT: String(SIGNUPS_PER_HOUR) });
  call = client(env.base);
  project = await newProject(env.base);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

describe('password reset tokens', () => {
  attackTable([
    {
      name: 'a second outstanding reset token is used after the first one reset the password',
      attack: async () => {
        const user = await registerUser(env.base, project);
        const first = await resetToken(user.email);
        const second = await resetToken(user.email);
        expect((await confirm(first, 'the password I chose')).status).toBe(204);
        return await confirm(second, 'the attacker password');
      },
      refused: { status: 401, code: 'INVALID_TOKEN' },
    },
    {
      name: 'a reset token mailed before the user changed their password is used afterwards',
      attack: async () => {
        const user = await registerUser(env.base, project);
        const stale = await resetToken(user.email);
        const token = (await passwordGrant(env.base, project, user)).body.access_token;
        expect(
          (
            await call('POST', '/password/change', {
              token,
              body: { current_password: user.password, new_password: 'a brand new password' },
            })
          ).status,
        ).toBe(204);
        const res = await confirm(stale, 'the attacker password');
        // The user's own password still works; the attacker's does not.
        expect((await passwordGrant(env.base, project, { ...user, password: 'a brand new password' })).status).toBe(
          200,
        );
        expect((await passwordGrant(env.base, project, { ...user, password: 'the attacker password' })).status).toBe(
          400,
        );
        return res;
      },
      refused: { status: 401, code: 'INVALID_TOKEN' },
    },
  ]);
});

describe('developer-account sign-ups', () => {
  attackTable([
    {
      name: 'one address signs up developer accounts in bulk',
      attack: async () => {
        for (let i = 0; i < SIGNUPS_PER_HOUR; i++) expect((await signup(i, '203.0.113.7')).status).toBe(201);
        return await signup(99, '203.0.113.7');
      },
      refused: { status: 429, code: 'RATE_LIMITED', headers: ['retry-after'] },
      intact: async () => {
        // Another address signs up, and existing tenants sign in as before.
        expect((await signup(100, '198.51.100.4')).status).toBe(201);
        const email = `still-${Date.now()}@example.com`;
        expect(
          (
            await call('POST', '/auth/api/v1/tenants/signup', {
              headers: { 'x-forwarded-for': '198.51.100.5' },
              body: { email, password: 'a long password' },
            })
          ).status,
        ).toBe(201);
        expect(
          (
            await call('POST', '/auth/api/v1/tenant/login', {
              headers: { 'x-forwarded-for': '203.0.113.7' },
              body: { email, password: 'a long password' },
            })
          ).status,
        ).toBe(200);
      },
    },
  ]);
});
