// The end-user admin API (`/admin/users`) with the project's secret API key: list and search with paging,
// read, app metadata and roles, disable and enable (sessions end at once), delete, revoke sessions, reset MFA,
// and its failure paths (bad bodies, unknown and malformed ids). Refusals to other callers: tests/security/grants.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import { client } from '../../support/http.ts';
import {
  newProject,
  nextCode,
  passwordGrant,
  postForm,
  publishableKey,
  registerUser,
  startIdentityPlatform,
  type Project,
} from './identity-fixtures.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let call: ReturnType<typeof client>;
let project: Project;
const users: { email: string; password: string; id: string }[] = [];

const admin = (method: string, path: string, body?: unknown) =>
  call(method, path, { apiKey: project.apiKey, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  env = await startIdentityPlatform();
  call = client(env.base);
  project = await newProject(env.base);
  for (let i = 0; i < 5; i++)
    users.push(await registerUser(env.base, project, { name: i === 3 ? 'Grace Hopper' : `User ${i}` }));
}, 60_000);

afterAll(async () => {
  await env?.close();
});

describe('the end-user admin API', () => {
  it('lists users newest first, one page at a time, and searches e-mail and name', async () => {
    const first = await admin('GET', '/admin/users?first=2');
    expect(first.status).toBe(200);
    expect(first.body.users.map((u: { id: string }) => u.id)).toEqual([users[4]!.id, users[3]!.id]);
    expect(first.body.users[0]).toMatchObject({
      email: users[4]!.email,
      roles: [],
      app_metadata: {},
      disabled: false,
      disabled_at: null,
      mfa_enabled: false,
    });
    const second = await admin('GET', `/admin/users?first=2&after=${first.body.next_cursor}`);
    expect(second.body.users.map((u: { id: string }) => u.id)).toEqual([users[2]!.id, users[1]!.id]);
    const last = await admin('GET', `/admin/users?first=2&after=${second.body.next_cursor}`);
    expect(last.body).toEqual({ users: [expect.objectContaining({ id: users[0]!.id })], next_cursor: null });

    expect((await admin('GET', '/admin/users?search=hopper')).body.users.map((u: { id: string }) => u.id)).toEqual([
      users[3]!.id,
    ]);
    expect(
      (await admin('GET', `/admin/users?search=${encodeURIComponent(users[1]!.email.toUpperCase())}`)).body.users.map(
        (u: { id: string }) => u.id,
      ),
    ).toEqual([users[1]!.id]);
    // LIKE wildcards are taken literally.
    expect((await admin('GET', '/admin/users?search=%25')).body.users).toEqual([]);
  });

  it('refuses bad paging and filters with 400', async () => {
    for (const q of ['first=0', 'first=101', 'first=x', 'after=garbage', 'role=bad%20role', 'disabled=maybe']) {
      const res = await admin('GET', `/admin/users?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
    }
  });

  it('reads one user; unknown and malformed ids are 404', async () => {
    expect((await admin('GET', `/admin/users/${users[0]!.id}`)).body.user).toMatchObject({
      id: users[0]!.id,
      email: users[0]!.email,
      name: 'User 0',
    });
    expect((await admin('GET', '/admin/users/6c1e0b0e-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await admin('GET', '/admin/users/not-a-uuid')).status).toBe(404);
  });

  it('sets app metadata and roles, filters by role, and refuses malformed bodies', async () => {
    const u = users[0]!;
    const res = await admin('PATCH', `/admin/users/${u.id}`, {
      app_metadata: { plan: 'gold', seats: 3 },
      roles: ['editor', 'billing', 'editor'],
    });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ app_metadata: { plan: 'gold', seats: 3 }, roles: ['editor', 'billing'] });
    // Omitted fields stay.
    expect((await admin('PATCH', `/admin/users/${u.id}`, { roles: ['editor'] })).body.user).toMatchObject({
      app_metadata: { plan: 'gold', seats: 3 },
      roles: ['editor'],
    });
    expect((await admin('GET', '/admin/users?role=editor')).body.users.map((x: { id: string }) => x.id)).toEqual([
      u.id,
    ]);
    for (const [body, field] of [
      [{ roles: [1] }, 'roles'],
      [{ roles: ['has space'] }, 'roles[0]'],
      [{ roles: Array.from({ length: 51 }, (_, i) => `r${i}`) }, 'roles'],
      [{ app_metadata: [1, 2] }, 'app_metadata'],
      [{ app_metadata: { big: 'x'.repeat(17_000) } }, 'app_metadata'],
      [{}, 'input'],
    ] as const) {
      const bad = await admin('PATCH', `/admin/users/${u.id}`, body);
      expect({ field, status: bad.status, code: bad.body?.error?.code }).toEqual({
        field,
        status: 400,
        code: expect.stringMatching(/VALIDATION_FAILED|BAD_USER_INPUT/),
      });
    }
    expect((await admin('PATCH', '/admin/users/6c1e0b0e-0000-4000-8000-000000000000', { roles: [] })).status).toBe(404);
  });

  it('disables a user: sign-in refused, every session ended at once; enabling lets them sign in again', async () => {
    const u = users[1]!;
    const login = await passwordGrant(env.base, project, u);
    const token = login.body.access_token as string;
    expect((await call('GET', '/userinfo', { token })).status).toBe(200);
    const disabled = await admin('POST', `/admin/users/${u.id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body.user).toMatchObject({ disabled: true, disabled_at: expect.any(String) });
    expect((await call('GET', '/userinfo', { token })).status).toBe(401);
    const refresh = await postForm(
      env.base,
      '/token',
      { grant_type: 'refresh_token', refresh_token: login.body.refresh_token },
      { basic: [project.clientId, project.clientSecret] },
    );
    expect(refresh.body.error).toBe('invalid_grant');
    const again = await passwordGrant(env.base, project, u);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ error: 'invalid_grant', error_description: 'This account is disabled' });
    // A wrong password says nothing about the account being disabled.
    expect(
      (await passwordGrant(env.base, project, { ...u, password: 'not the password' })).body.error_description,
    ).not.toMatch(/disabled/);
    expect((await admin('GET', '/admin/users?disabled=true')).body.users.map((x: { id: string }) => x.id)).toEqual([
      u.id,
    ]);

    const enabled = await admin('POST', `/admin/users/${u.id}/enable`);
    expect(enabled.body.user).toMatchObject({ disabled: false, disabled_at: null });
    expect((await passwordGrant(env.base, project, u)).status).toBe(200);
    expect((await call('GET', '/userinfo', { token })).status).toBe(401); // ended sessions stay ended
  });

  it('revokes every session of a user', async () => {
    const u = users[2]!;
    const t1 = (await passwordGrant(env.base, project, u)).body.access_token as string;
    const t2 = (await passwordGrant(env.base, project, u)).body.access_token as string;
    const res = await admin('POST', `/admin/users/${u.id}/revoke-sessions`);
    expect(res).toMatchObject({ status: 200, body: { revoked_sessions: 2 } });
    for (const token of [t1, t2]) expect((await call('GET', '/userinfo', { token })).status).toBe(401);
    expect((await passwordGrant(env.base, project, u)).status).toBe(200);
  });

  it("resets a user's MFA: sign-in needs no code any more", async () => {
    const u = users[3]!;
    const token = (await passwordGrant(env.base, project, u)).body.access_token as string;
    const { secret } = (await call('POST', '/mfa/enroll', { token })).body;
    expect((await call('POST', '/mfa/verify', { token, body: { code: await generate({ secret }) } })).status).toBe(200);
    expect((await passwordGrant(env.base, project, u)).body.error).toBe('mfa_required');
    const reset = await admin('POST', `/admin/users/${u.id}/reset-mfa`);
    expect(reset.body.user.mfa_enabled).toBe(false);
    expect((await passwordGrant(env.base, project, u)).status).toBe(200);
    // Enrolling again gives a new secret.
    const again = await call('POST', '/mfa/enroll', { token });
    expect(again.body.secret).not.toBe(secret);
    await nextCode(secret);
  });

  it('deletes a user: 204, its tokens stop working, then 404', async () => {
    const u = users[4]!;
    const token = (await passwordGrant(env.base, project, u)).body.access_token as string;
    expect((await admin('DELETE', `/admin/users/${u.id}`)).status).toBe(204);
    expect((await call('GET', '/userinfo', { token })).status).toBe(401);
    expect((await admin('DELETE', `/admin/users/${u.id}`)).status).toBe(404);
    expect((await admin('GET', `/admin/users/${u.id}`)).status).toBe(404);
    expect((await passwordGrant(env.base, project, u)).status).toBe(400);
  });

  it('answers the same through GraphQL', async () => {
    const res = await call('POST', '/graphql', {
      apiKey: project.apiKey,
      body: {
        query:
          'query($s: String) { projectEndUsers(search: $s) { items { id email roles appMetadata disabled } nextCursor } }',
        variables: { s: 'hopper' },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.projectEndUsers).toEqual({
      items: [{ id: users[3]!.id, email: users[3]!.email, roles: [], appMetadata: {}, disabled: false }],
      nextCursor: null,
    });
  });
});

describe('adding and inviting users through the admin API', () => {
  it('adds a user with a password, who signs in with it; the address is taken afterwards', async () => {
    const email = `added-${Date.now()}@example.com`;
    const password = 'an added password';
    const made = await admin('POST', '/admin/users', { email: ` ${email.toUpperCase()} `, password, name: 'Ada' });
    expect(made.status).toBe(201);
    expect(made.body.user).toMatchObject({ email, email_verified: false, name: 'Ada', roles: [], disabled: false });
    expect((await passwordGrant(env.base, project, { email, password })).status).toBe(200);
    const verified = await admin('POST', '/admin/users', {
      email: `verified-${email}`,
      password,
      email_verified: true,
    });
    expect(verified.body.user.email_verified).toBe(true);
    expect(await admin('POST', '/admin/users', { email, password: 'another password' })).toMatchObject({
      status: 409,
      body: { error: { code: 'EMAIL_TAKEN' } },
    });
  });

  it.each([
    ['no e-mail', { password: 'a long password' }, 'email'],
    ['a malformed e-mail', { email: 'nope', password: 'a long password' }, 'email'],
    ['a short password', { email: 'short@example.com', password: 'short' }, 'password'],
    ['no password', { email: 'nopass@example.com' }, 'password'],
    [
      'a non-boolean email_verified',
      { email: 'b@example.com', password: 'a long password', email_verified: 'yes' },
      'email_verified',
    ],
    ['a bad profile claim', { email: 'p@example.com', password: 'a long password', website: 'ftp://x' }, 'website'],
  ])('refuses to add a user with %s (400 naming the field)', async (_what, body, field) => {
    const res = await admin('POST', '/admin/users', body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(field);
  });

  it('invites a user: created without a usable password, mailed a one-time link that sets one and confirms the address', async () => {
    const email = `invited-${Date.now()}@example.com`;
    const invited = await admin('POST', '/admin/users/invite', { email, name: 'Grace' });
    expect(invited.status).toBe(201);
    expect(invited.body.user).toMatchObject({ email, email_verified: false, name: 'Grace' });
    const mail = await env.mailbox.waitFor(email, /invited/);
    expect(mail.raw).toMatch(/^Subject: You are invited: choose your password/m);
    expect(mail.text).toContain('You have been invited to create an account');
    expect(mail.text).toContain('The link works once and for 7 days');
    const link = /(http\S+\/password\/reset\/confirm\?token=(tpr_[A-Za-z0-9_-]+))/.exec(mail.text);
    expect(link).not.toBeNull();
    // Nobody can sign in before the password is chosen.
    expect((await passwordGrant(env.base, project, { email, password: '' })).status).toBe(400);
    // The link opens the page that chooses a password.
    const page = await fetch(link![1]!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Choose a new password');
    const chosen = 'the password I chose';
    const set = await call('POST', '/password/reset/confirm', { body: { token: link![2], new_password: chosen } });
    expect(set.status).toBe(204);
    expect((await passwordGrant(env.base, project, { email, password: chosen })).status).toBe(200);
    expect((await admin('GET', `/admin/users/${invited.body.user.id}`)).body.user.email_verified).toBe(true);
    // The link worked once.
    const again = await call('POST', '/password/reset/confirm', {
      body: { token: link![2], new_password: 'x'.repeat(9) + 'y' },
    });
    expect(again).toMatchObject({ status: 401, body: { error: { code: 'INVALID_TOKEN' } } });
  });

  it("sends the invitation again with a new link; an unknown or another project's user is 404", async () => {
    const email = `again-${Date.now()}@example.com`;
    const invited = await admin('POST', '/admin/users/invite', { email });
    const first = await env.mailbox.waitFor(email, /invited/);
    expect((await admin('POST', `/admin/users/${invited.body.user.id}/invite`)).status).toBe(204);
    const second = await env.mailbox.waitFor(email, /invited/);
    const tokenIn = (m: { text: string }) => /token=(tpr_[A-Za-z0-9_-]+)/.exec(m.text)![1];
    expect(tokenIn(second)).not.toBe(tokenIn(first));
    expect((await admin('POST', '/admin/users/00000000-0000-4000-8000-000000000000/invite')).status).toBe(404);
    expect((await admin('POST', '/admin/users/not-an-id/invite')).status).toBe(404);
    const other = await newProject(env.base);
    expect((await call('POST', `/admin/users/${invited.body.user.id}/invite`, { apiKey: other.apiKey })).status).toBe(
      404,
    );
    // Counted with invitations: the third to this address in the hour is the last.
    expect((await admin('POST', `/admin/users/${invited.body.user.id}/invite`)).status).toBe(204);
    expect(await admin('POST', `/admin/users/${invited.body.user.id}/invite`)).toMatchObject({
      status: 429,
      body: { error: { code: 'RATE_LIMITED' } },
    });
  });

  it('refuses an invitation with a password, to a registered address, and past 3 invitations to one address', async () => {
    const email = `twice-${Date.now()}@example.com`;
    expect(await admin('POST', '/admin/users/invite', { email, password: 'a long password' })).toMatchObject({
      status: 400,
      // The invitation's input has no password field: refused by the schema, naming it.
      body: { error: { code: 'BAD_USER_INPUT', message: expect.stringContaining('password') } },
    });
    expect((await admin('POST', '/admin/users/invite', { email })).status).toBe(201);
    await env.mailbox.waitFor(email, /invited/);
    expect(await admin('POST', '/admin/users/invite', { email })).toMatchObject({
      status: 409,
      body: { error: { code: 'EMAIL_TAKEN' } },
    });
    expect((await admin('POST', '/admin/users/invite', { email })).status).toBe(409);
    expect(await admin('POST', '/admin/users/invite', { email })).toMatchObject({
      status: 429,
      body: { error: { code: 'RATE_LIMITED' } },
    });
  });

  it('refuses adding and inviting to an end-user token, the publishable key, a tenant token and anonymous callers', async () => {
    const u = await registerUser(env.base, project);
    const userToken = (await passwordGrant(env.base, project, u)).body.access_token as string;
    const pk = await publishableKey(env.base, project);
    const body = { email: `hostile-${Date.now()}@example.com`, password: 'a long password' };
    for (const path of ['/admin/users', '/admin/users/invite']) {
      const b = path.endsWith('invite') ? { email: body.email } : body;
      expect((await call('POST', path, { token: userToken, body: b })).status).toBe(403);
      expect((await call('POST', path, { apiKey: pk, body: b })).status).toBe(403);
      expect((await call('POST', path, { token: project.tenantToken, body: b })).status).toBe(403);
      expect((await call('POST', path, { body: b })).status).toBe(401);
    }
    expect((await admin('GET', `/admin/users?search=${encodeURIComponent(body.email)}`)).body.users).toEqual([]);
    expect(env.mailbox.mails.filter((m) => m.to === body.email)).toEqual([]);
  });

  it("adds a user only to the key's own project", async () => {
    const other = await newProject(env.base);
    const email = `own-${Date.now()}@example.com`;
    const made = await call('POST', '/admin/users', {
      apiKey: other.apiKey,
      body: { email, password: 'a long password' },
    });
    expect(made.status).toBe(201);
    expect((await admin('GET', `/admin/users/${made.body.user.id}`)).status).toBe(404);
    expect((await passwordGrant(env.base, project, { email, password: 'a long password' })).status).toBe(400);
    expect((await passwordGrant(env.base, other, { email, password: 'a long password' })).status).toBe(200);
  });
});
