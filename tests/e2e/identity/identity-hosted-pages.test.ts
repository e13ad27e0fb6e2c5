// The hosted end-user pages of an authorization request and the project's branding (issue 26): GET/PUT
// /auth/api/v1/projects/:id/branding with its checks and walls; /authorize showing the project's name, logo and colour,
// escaped, under a CSP that allows images from the logo's origin only; the "Forgot password?" and "Sign up" links when
// the project offers them; the hosted sign-up that ends with a code for the client; the hosted forgot-password page
// that mails a working reset link through a real SMTP server and answers the same for an unknown address.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { client, type Res } from '../../support/http.ts';
import {
  REDIRECT_URI,
  newProjectWithPk,
  postForm,
  startIdentityPlatform,
  tokenOf,
  registerUser,
  type Project,
} from './identity-fixtures.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let base: string;
let call: ReturnType<typeof client>;
let project: Project & { pk: string };
let other: Project & { pk: string };

const HOSTILE_NAME = `Acme "</title><script>alert(1)</script><img src=x onerror=alert(2)>`;

function expectError(res: Res, status: number, code: string, mentions?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (mentions) expect(res.body.error.message).toMatch(mentions);
}

const branding = (body: unknown, p: Project = project, token = p.tenantToken) =>
  call('PUT', `/auth/api/v1/projects/${p.id}/branding`, { token, body });

/** The authorization request's query for the project's default client. */
const request = (p: Project = project) =>
  new URLSearchParams({
    response_type: 'code',
    client_id: p.clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid email',
    state: 'state-1',
  });

async function page(path: string): Promise<{ status: number; html: string; csp: string }> {
  const res = await fetch(base + path, { redirect: 'manual' });
  return { status: res.status, html: await res.text(), csp: res.headers.get('content-security-policy') ?? '' };
}

beforeAll(async () => {
  env = await startIdentityPlatform();
  base = env.base;
  call = client(base);
  project = await newProjectWithPk(base);
  other = await newProjectWithPk(base);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

describe('the branding API', () => {
  it('answers the defaults, then what was set (omitted fields stay)', async () => {
    const read = await call('GET', `/auth/api/v1/projects/${project.id}/branding`, { token: project.tenantToken });
    expect(read.status).toBe(200);
    expect(read.body.branding).toEqual({
      project_name: 'App',
      logo_url: null,
      brand_color: null,
      hosted_sign_up: true,
      hosted_password_reset: true,
    });
    const set = await branding({ logo_url: 'https://cdn.example.com/logo.png', brand_color: '#AA3300' });
    expect(set.status).toBe(200);
    expect(set.body.branding).toMatchObject({ logo_url: 'https://cdn.example.com/logo.png', brand_color: '#aa3300' });
    const flags = await branding({ hosted_sign_up: false });
    expect(flags.body.branding).toMatchObject({
      logo_url: 'https://cdn.example.com/logo.png',
      brand_color: '#aa3300',
      hosted_sign_up: false,
      hosted_password_reset: true,
    });
    const cleared = await branding({ logo_url: null, brand_color: '', hosted_sign_up: true });
    expect(cleared.body.branding).toMatchObject({ logo_url: null, brand_color: null, hosted_sign_up: true });
  });

  it.each([
    [{ logo_url: 'http://cdn.example.com/logo.png' }, 'logoUrl'],
    [{ logo_url: 'javascript:alert(1)' }, 'logoUrl'],
    [{ logo_url: 'data:image/png;base64,AAAA' }, 'logoUrl'],
    [{ logo_url: '//cdn.example.com/logo.png' }, 'logoUrl'],
    [{ logo_url: 'https://user:pass@cdn.example.com/logo.png' }, 'logoUrl'],
    [{ logo_url: 'https://cdn.example.com/a"onerror="x.png' }, 'logoUrl'],
    [{ logo_url: `https://cdn.example.com/${'a'.repeat(2100)}` }, 'logoUrl'],
    [{ logo_url: 42 }, 'logo_url'],
    [{ logo_url: 'https://cdn.example.com/<b>.png' }, 'logoUrl'],
    [{ brand_color: 'red' }, 'brandColor'],
    [{ brand_color: '#abc' }, 'brandColor'],
    [{ brand_color: '#aa3300;background:url(x)' }, 'brandColor'],
    [{ hosted_sign_up: 'yes' }, 'hosted_sign_up'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const res = await branding(body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain(field);
  });

  it("another tenant gets NOT_FOUND; the project's keys and anonymous callers are refused", async () => {
    expectError(await branding({ brand_color: '#000000' }, project, other.tenantToken), 404, 'NOT_FOUND');
    expectError(
      await call('GET', `/auth/api/v1/projects/${project.id}/branding`, { token: other.tenantToken }),
      404,
      'NOT_FOUND',
    );
    const path = `/auth/api/v1/projects/${project.id}/branding`;
    expectError(
      await call('PUT', path, { apiKey: project.apiKey, body: { brand_color: '#000000' } }),
      403,
      'FORBIDDEN',
    );
    expectError(await call('GET', path, { apiKey: project.pk }), 403, 'FORBIDDEN');
    expectError(await call('GET', path), 401, 'UNAUTHENTICATED');
  });
});

describe('the hosted sign-in page', () => {
  it("shows the project's name, logo and colour, escaped, with a CSP allowing only the logo's origin", async () => {
    expect(
      (
        await call('PUT', `/auth/api/v1/projects/${project.id}`, {
          token: project.tenantToken,
          body: { name: HOSTILE_NAME },
        })
      ).status,
    ).toBe(200);
    expect(
      (await branding({ logo_url: 'https://cdn.example.com/logo.png?size=2&v=3', brand_color: '#0b6e4f' })).status,
    ).toBe(200);
    const { status, html, csp } = await page(`/authorize?${request()}`);
    expect(status).toBe(200);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('<img class="logo" src="https://cdn.example.com/logo.png?size=2&amp;v=3"');
    expect(html).toContain('--brand:#0b6e4f');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('img-src https://cdn.example.com;');
    expect(csp).not.toMatch(/script-src/);
  });

  it('links to forgot password and sign up while the project offers them, and not when it does not', async () => {
    const q = request().toString().replace(/&/g, '&amp;');
    let { html } = await page(`/authorize?${request()}`);
    expect(html).toContain(`<a href="/authorize/forgot-password?${q}">Forgot password?</a>`);
    expect(html).toContain(`<a href="/authorize/sign-up?${q}">Sign up</a>`);
    await branding({ hosted_sign_up: false, hosted_password_reset: false });
    ({ html } = await page(`/authorize?${request()}`));
    expect(html).not.toContain('Forgot password?');
    expect(html).not.toContain('Sign up');
    expect((await page(`/authorize/sign-up?${request()}`)).status).toBe(404);
    expect((await page(`/authorize/forgot-password?${request()}`)).status).toBe(404);
    await branding({ hosted_sign_up: true, hosted_password_reset: true });
  });

  it('refuses the hosted pages for an unknown client or an unregistered redirect URI', async () => {
    const unknown = request();
    unknown.set('client_id', 'no-such-client');
    expect((await page(`/authorize/sign-up?${unknown}`)).status).toBe(400);
    const elsewhere = request();
    elsewhere.set('redirect_uri', 'https://evil.example.com/cb');
    expect((await page(`/authorize/forgot-password?${elsewhere}`)).status).toBe(400);
  });
});

describe('hosted sign-up', () => {
  it('registers the end-user and sends the browser back to the client with a code that works at /token', async () => {
    const email = `hosted-${Date.now()}@example.com`;
    const res = await postForm(base, '/authorize/sign-up', {
      ...Object.fromEntries(request()),
      email,
      password: 'a brand new password 9',
      name: 'Hosted User',
    });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('state')).toBe('state-1');
    const code = back.searchParams.get('code')!;
    const tokens = await postForm(base, '/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: project.clientId,
      client_secret: project.clientSecret,
    });
    expect(tokens.status).toBe(200);
    expect(typeof tokens.body.id_token).toBe('string');
    // The same address again: the form again, saying so.
    const again = await postForm(base, '/authorize/sign-up', {
      ...Object.fromEntries(request()),
      email,
      password: 'a brand new password 9',
    });
    expect(again.status).toBe(409);
    expect(again.body).toContain('already exists');
    const weak = await postForm(base, '/authorize/sign-up', {
      ...Object.fromEntries(request()),
      email: `weak-${Date.now()}@example.com`,
      password: 'short',
    });
    expect(weak.status).toBe(400);
    expect(weak.body).toContain('class="error"');
  });
});

describe('hosted forgot password', () => {
  it('mails a reset link whose page sets a new password, and answers the same for an unknown address', async () => {
    const user = await registerUser(base, project);
    const sent = await postForm(base, '/authorize/forgot-password', {
      ...Object.fromEntries(request()),
      email: user.email,
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toContain('If an account exists for');
    const unknown = await postForm(base, '/authorize/forgot-password', {
      ...Object.fromEntries(request()),
      email: `nobody-${Date.now()}@example.com`,
    });
    expect(unknown.status).toBe(200);
    expect(unknown.body.replace(/nobody-\d+@example\.com/, user.email)).toBe(sent.body);
    const mail = await env.mailbox.waitFor(user.email, /reset/i);
    const token = tokenOf(mail);
    const reset = await postForm(base, '/password/reset/confirm', { token, new_password: 'a fresh new password 5' });
    expect(reset.status).toBe(200);
    expect(reset.body).toContain('Password changed');
    const signIn = await postForm(base, '/authorize', {
      ...Object.fromEntries(request()),
      email: user.email,
      password: 'a fresh new password 5',
      action: 'sign_in',
    });
    expect(signIn.status).toBe(302);
    expect(new URL(signIn.headers.get('location')!).searchParams.get('code')).toBeTruthy();
  });
});
