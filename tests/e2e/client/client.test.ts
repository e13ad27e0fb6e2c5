// The typed client (packages/client) against a live Tessera: every method once, and its errors (TesseraError with
// code, status and request id). Tenant management with a tenant token; a project's secret key for the data API,
// storage, functions and executions; a browser-like client with the publishable key and a public OIDC client for
// sign-up, sign-in (password and code + PKCE), refresh, MFA, password reset, e-mail verification and realtime.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import {
  createClient,
  isTesseraError,
  TesseraError,
  VERSION,
  type Change,
  type TesseraClient,
} from '../../../packages/client/src/index.ts';
import { API_VERSION } from '../../../rest-compat/openapi.ts';
import { openApiDocument } from '../../../scripts/openapi.ts';
import { signInThroughPage, startIdentityPlatform, tokenOf } from '../identity/identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let base: string;
let admin: TesseraClient;
let project: Awaited<ReturnType<TesseraClient['tenant']['projects']['create']>>;
let app: TesseraClient;
let browser: TesseraClient;
let clientId: string;
const password = 'correct horse battery staple';
const email = `client-${Date.now()}@example.com`;
const REDIRECT = 'https://app.example.com/callback';

const rejects = async (p: Promise<unknown>, code: string, status: number): Promise<TesseraError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TesseraError);
  expect(err).toMatchObject({ code, status });
  return err as TesseraError;
};

beforeAll(async () => {
  env = await startIdentityPlatform();
  base = env.base;
  admin = createClient({ url: base });
  await admin.tenant.signup({ email, password, name: 'Client Test' });
  await admin.tenant.login({ email, password });
  project = await admin.tenant.projects.create('Client app');
  app = createClient({ url: base, key: project.api_key });
  const [client] = await admin.tenant.clients.list(project.id);
  clientId = client!.client_id;
  await admin.tenant.clients.update(project.id, clientId, { public: true, redirect_uris: [REDIRECT] });
  browser = createClient({ url: base, key: project.publishable_key, clientId });
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe('the package', () => {
  it('carries the API version, and /openapi.json is the document its types were generated from', async () => {
    expect(VERSION).toBe(API_VERSION);
    const served = await (await fetch(`${base}/openapi.json`)).json();
    expect(served).toEqual(openApiDocument());
    expect(served.info.version).toBe(VERSION);
  });
});

describe('GET /graphql in a browser', () => {
  it('is the offline GraphiQL explorer; GraphQL over GET still answers JSON', async () => {
    const page = await fetch(`${base}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = await page.text();
    expect(html).toContain('<title>Tessera GraphQL</title>');
    // Everything inline: no script, style or font is fetched from anywhere else.
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']https?:/i);
    expect(html).not.toMatch(/unpkg|jsdelivr|cdnjs|esm\.sh/);
    const q = await fetch(`${base}/graphql?query=${encodeURIComponent('{ plans { id } }')}`, {
      headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
    });
    expect((await q.json()).data.plans.length).toBeGreaterThan(0);
  });
});

describe('tenant management', () => {
  it('signs in, reads the account, refreshes, and lists plans', async () => {
    const me = await admin.tenant.me();
    expect(me).toMatchObject({ email, name: 'Client Test', mfa_enabled: false });
    const before = admin.tenant.session!.refresh_token;
    const refreshed = await admin.tenant.refresh();
    expect(refreshed.refresh_token).not.toBe(before);
    expect((await admin.tenant.plans()).map((p) => p.id)).toContain('free');
    const err = await rejects(
      createClient({ url: base }).tenant.login({ email, password: 'wrong password!' }),
      'INVALID_CREDENTIALS',
      401,
    );
    expect(err.requestId).toMatch(/.+/);
    await rejects(createClient({ url: base }).tenant.signup({ email, password }), 'EMAIL_TAKEN', 409);
  });

  it('manages projects, both keys, CORS, publications and OIDC clients', async () => {
    expect(project.publishable_key).toMatch(/^tpk_/);
    expect((await admin.tenant.projects.list()).map((p) => p.id)).toContain(project.id);
    const other = await admin.tenant.projects.create('Spare');
    expect((await admin.tenant.projects.rename(other.id, 'Spare 2')).name).toBe('Spare 2');
    expect((await admin.tenant.projects.get(other.id)).name).toBe('Spare 2');
    const rk = await admin.tenant.projects.regenerateKey(other.id);
    expect(rk.api_key).not.toBe(other.api_key);
    const rp = await admin.tenant.projects.regeneratePublishableKey(other.id);
    expect(rp.publishable_key).not.toBe(other.publishable_key);
    expect(
      await admin.tenant.projects.setCors(other.id, { allowed_origins: ['https://app.example.com'] }),
    ).toMatchObject({ allowed_origins: ['https://app.example.com'] });
    expect((await admin.tenant.projects.cors(other.id)).allowed_origins).toEqual(['https://app.example.com']);
    // Realtime only for a table the project's database has.
    await rejects(admin.tenant.projects.setPublication(other.id, 'things', true), 'VALIDATION_FAILED', 400);
    await createClient({ url: base, key: rk.api_key }).data.sql('create table things (id int primary key)');
    expect(await admin.tenant.projects.setPublication(other.id, 'things', true)).toMatchObject({
      table: 'things',
      enabled: true,
    });
    expect((await admin.tenant.projects.publications(other.id)).map((p) => p.table)).toEqual(['things']);
    const [c] = await admin.tenant.clients.list(other.id);
    const rotated = await admin.tenant.clients.rotateSecret(other.id, c!.client_id);
    expect(rotated.client_secret).not.toBe(c!.client_secret);
    // Several OIDC clients: add one, change its grant types, delete it.
    const spa = await admin.tenant.clients.create(other.id, {
      name: 'SPA',
      public: true,
      redirect_uris: ['https://app.example.com/cb'],
    });
    expect(spa).toMatchObject({ name: 'SPA', public: true, default: false });
    expect(spa.grant_types).not.toContain('client_credentials');
    expect(
      (await admin.tenant.clients.update(other.id, spa.client_id, { grant_types: ['authorization_code'] })).grant_types,
    ).toEqual(['authorization_code']);
    await rejects(
      admin.tenant.clients.update(other.id, spa.client_id, { grant_types: ['client_credentials'] }),
      'VALIDATION_FAILED',
      400,
    );
    await admin.tenant.clients.remove(other.id, spa.client_id);
    expect((await admin.tenant.clients.list(other.id)).map((x) => x.client_id)).toEqual([c!.client_id]);
    await rejects(admin.tenant.clients.remove(other.id, c!.client_id), 'CONFLICT', 409);
    await admin.tenant.projects.remove(other.id);
    await rejects(admin.tenant.projects.get(other.id), 'NOT_FOUND', 404);
    await rejects(
      admin.tenant.projects.setCors(project.id, { allowed_origins: ['not an origin'] }),
      'VALIDATION_FAILED',
      400,
    );
    await rejects(app.tenant.projects.list(), 'FORBIDDEN', 403);
  });

  it('enrolls, verifies and disables tenant MFA; login then needs the code', async () => {
    const t = createClient({ url: base });
    const mail = `mfa-${Date.now()}@example.com`;
    await t.tenant.signup({ email: mail, password });
    await t.tenant.login({ email: mail, password });
    const { secret } = await t.tenant.mfa.enroll();
    expect((await t.tenant.mfa.verify(await generate({ secret }))).mfa_enabled).toBe(true);
    await rejects(createClient({ url: base }).tenant.login({ email: mail, password }), 'MFA_REQUIRED', 401);
    const again = createClient({ url: base });
    const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    await again.tenant.login({ email: mail, password, totpCode: code });
    expect((await again.tenant.me()).mfa_enabled).toBe(true);
    const token = t.tenant.session!.access_token;
    await t.tenant.logout();
    await rejects(t.tenant.me(), 'UNAUTHENTICATED', 401);
    await rejects(createClient({ url: base, accessToken: token }).tenant.me(), 'INVALID_TOKEN', 401);
  });

  it('refreshes an expired tenant session once for calls made at the same time, and the session goes on', async () => {
    // Counts the refresh requests that leave the client (the server would give a second one the same pair within its
    // reuse interval: the client must not need that).
    let refreshRequests = 0;
    const t = createClient({
      url: base,
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        if (String(input).endsWith('/auth/api/v1/tenant/refresh')) refreshRequests++;
        return await fetch(input, init);
      },
    });
    const mail = `flight-${Date.now()}@example.com`;
    await t.tenant.signup({ email: mail, password });
    await t.tenant.login({ email: mail, password });
    const first = t.tenant.session!.refresh_token;
    // The access token is no good any more (as when it expired): every call of the page answers 401 at once.
    t.tenant.session = { ...t.tenant.session!, access_token: 'expired.not.valid' };
    const [me, projects, again] = await Promise.all([t.tenant.me(), t.tenant.projects.list(), t.tenant.me()]);
    expect(me.email).toBe(mail);
    expect(projects).toEqual([]);
    expect(again.email).toBe(mail);
    // Three callers awaited one refresh.
    expect(refreshRequests).toBe(1);
    expect(t.tenant.session!.refresh_token).not.toBe(first);
    expect((await t.tenant.me()).email).toBe(mail);
    expect((await createClient({ url: base }).tenant.refresh(t.tenant.session!.refresh_token)).refresh_token).toMatch(
      /^tsr_/,
    );
  });

  it('keeps the session on a 401 that is not about the token (a wrong TOTP code while turning MFA on)', async () => {
    const t = createClient({ url: base });
    const mail = `wrong-code-${Date.now()}@example.com`;
    await t.tenant.signup({ email: mail, password });
    await t.tenant.login({ email: mail, password });
    const session = t.tenant.session!;
    let refreshed = 0;
    const refresh = t.tenant.refresh.bind(t.tenant);
    t.tenant.refresh = async (token?: string) => {
      refreshed++;
      return await refresh(token);
    };
    await t.tenant.mfa.enroll();
    await rejects(t.tenant.mfa.verify('000000'), 'INVALID_MFA_CODE', 401);
    expect(refreshed).toBe(0);
    expect(t.tenant.session).toEqual(session);
    expect((await t.tenant.me()).email).toBe(mail);
  });
});

describe('the data API', () => {
  beforeAll(async () => {
    await waitFor(
      async () =>
        await app.data.sql('select 1 as one').then(
          () => true,
          () => false,
        ),
      { message: 'project database' },
    );
    await app.data
      .sql(`create table todos (id serial primary key, title text not null, done boolean not null default false, rank int not null default 0,
      owner text default nullif(current_setting('request.user_id', true), ''), embedding real[])`);
    await app.data.sql('alter table todos enable row level security');
    await app.data.sql(`create policy anyone_reads on todos for select using (true)`);
    await app.data.sql(
      `create policy users_write on todos for all to public using (owner = current_setting('request.user_id', true)) with check (owner = current_setting('request.user_id', true))`,
    );
  }, 60_000);

  it('runs the builder: insert, select with filters and order, single, update, delete, aggregate', async () => {
    const inserted = await app.from('todos').insert([
      { title: 'a', rank: 3, embedding: [1, 0] },
      { title: 'b', rank: 1, embedding: [0, 1] },
      { title: 'c', rank: 2, done: true, embedding: [1, 1] },
    ]);
    expect(inserted.count).toBe(3);
    const open = await app
      .from<{ id: number; title: string; rank: number }>('todos')
      .select('id, title, rank')
      .eq('done', false)
      .order('rank', { ascending: false })
      .limit(10);
    expect(open.map((r) => r.title)).toEqual(['a', 'b']);
    expect(await app.from('todos').select(['title']).gte('rank', 2).lt('rank', 3).single()).toEqual({ title: 'c' });
    expect((await app.from('todos').select().in('title', ['a', 'c']).range(0, 0)).length).toBe(1);
    const updated = await app.from('todos').update({ done: true }).eq('title', 'a').returning(['title', 'done']);
    expect(updated).toEqual({ count: 1, rows: [{ title: 'a', done: true }] });
    expect(
      await app.from('todos').aggregate([{ fn: 'count', as: 'n' }], { groupBy: ['done'], orderBy: 'done' }),
    ).toEqual(
      [
        { done: false, n: 1 },
        { done: true, n: 2 },
      ].map((r) => ({ ...r, n: expect.anything() })),
    );
    expect((await app.from('todos').delete().eq('title', 'b')).count).toBe(1);
    await rejects(Promise.resolve(app.from('todos').delete()), 'VALIDATION_FAILED', 400);
  });

  it('runs the actions with their bodies: find, findOne, transaction, vectorSearch, sql; errors are typed', async () => {
    expect((await app.data.find({ table: 'todos', where: { title: { like: 'a%' } } })).rows).toHaveLength(1);
    expect((await app.data.findOne({ table: 'todos', where: { title: 'zzz' } })).row).toBeNull();
    const t = await app.data.transaction([
      { action: 'insert', table: 'todos', values: { title: 't1' } },
      { action: 'find', table: 'todos', where: { title: 't1' } },
    ]);
    expect(t.results).toHaveLength(2);
    const near = await app.data.vectorSearch({
      table: 'todos',
      column: 'embedding',
      vector: [1, 0],
      k: 1,
      select: ['title'],
    });
    expect(near.rows[0]).toMatchObject({ title: 'a' });
    expect(['exact', 'hnsw']).toContain(near.method);
    expect((await app.data.sql('select $1::int + 1 as n', [41])).rows).toEqual([{ n: 42 }]);
    const err = await rejects(app.data.find({ table: 'nope' }), 'NOT_FOUND', 404);
    expect(isTesseraError(err, 'NOT_FOUND')).toBe(true);
    await rejects(browser.data.sql('select 1'), 'FORBIDDEN', 403);
  });
});

describe('storage', () => {
  it('uploads with progress, lists, reads, downloads (ranges too), confirms and deletes; policies with the secret key', async () => {
    const bytes = new Uint8Array(300_000).map((_, i) => i % 251);
    const seen: number[] = [];
    const obj = await app.storage.upload(bytes, {
      folder: 'docs',
      name: 'data.bin',
      onProgress: (sent) => seen.push(sent),
    });
    expect(obj).toMatchObject({ folder: 'docs', name: 'data.bin', size: 300_000, status: 'pending' });
    expect(seen.at(-1)).toBe(300_000);
    expect(seen.length).toBeGreaterThan(1);
    expect((await app.storage.confirm(obj.id)).status).toBe('ready');
    expect((await app.storage.get(obj.id)).sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await app.storage.list({ folder: 'docs' })).objects.map((o) => o.id)).toEqual([obj.id]);
    expect((await app.storage.folders()).folders.map((f) => f.folder)).toContain('docs');
    expect((await app.storage.usage()).objects).toBe(1);
    expect(Buffer.from(await app.storage.downloadBytes(obj.id)).equals(Buffer.from(bytes))).toBe(true);
    const part = await app.storage.download(obj.id, { range: [10, 19] });
    expect(part.status).toBe(206);
    expect([...new Uint8Array(await part.arrayBuffer())]).toEqual([...bytes.slice(10, 20)]);
    const policy = await app.storage.policies.create({
      name: 'public',
      folder: 'public',
      operations: ['read', 'list', 'write'],
      principal: 'public',
    });
    expect((await app.storage.policies.list()).map((p) => p.id)).toContain(policy.id);
    const pub = await browser.storage.upload('hello', {
      folder: 'public',
      name: 'hi.txt',
      contentType: 'text/plain',
      confirm: true,
    });
    expect(new TextDecoder().decode(await browser.storage.downloadBytes(pub.id))).toBe('hello');
    await rejects(browser.storage.upload('x', { folder: 'private', name: 'x.txt' }), 'FORBIDDEN', 403);
    await rejects(browser.storage.policies.list(), 'FORBIDDEN', 403);
    await app.storage.policies.remove(policy.id);
    await app.storage.remove(obj.id);
    await rejects(app.storage.get(obj.id), 'NOT_FOUND', 404);
  });
});

describe('functions', () => {
  it('creates, deploys, invokes (sync, async, dry run), lists and deletes; secrets; executions with their step logs', async () => {
    const def = {
      name: 'hello',
      public: true,
      steps: [
        { name: 'say', kind: 'Transform', expression: { hi: '{{ input.body.name }}', key: '{{ secrets.GREETING }}' } },
      ],
    };
    await app.functions.secrets.set('GREETING', 'top secret value');
    expect((await app.functions.secrets.list()).map((s) => s.name)).toEqual(['GREETING']);
    const created = await app.functions.create(def);
    expect(created).toMatchObject({ name: 'hello', public: true, version: 1 });
    expect((await app.functions.deploy({ ...def, description: 'v2' })).created).toBe(false);
    expect((await app.functions.get(created.id)).version).toBe(2);
    expect((await app.functions.list()).functions.map((f) => f.name)).toEqual(['hello']);
    const sync = await app.functions.invoke<{ hi: string; key: string }>('hello', { name: 'Ada' });
    expect(sync.status).toBe(200);
    expect(sync.data.hi).toBe('Ada');
    expect(sync.data.key).toBe('{{secrets.GREETING}}');
    expect(sync.executionId).toMatch(/.+/);
    const queued = await app.functions.invoke('hello', { name: 'later' }, { async: true });
    expect(queued.status).toBe(202);
    const dry = await app.functions.invoke<{ dry_run: boolean; trace: unknown[] }>('hello', {}, { dryRun: true });
    expect(dry.data.dry_run).toBe(true);
    expect((await browser.functions.invoke<{ hi: string }>('hello', { name: 'web' })).data.hi).toBe('web');
    await rejects(browser.functions.invoke('hello', {}, { dryRun: true }), 'FORBIDDEN', 403);
    await waitFor(async () => (await app.functions.executions.get(queued.executionId!)).status === 'succeeded', {
      message: 'async run',
    });
    const runs = await app.functions.executions.list({ function: 'hello' });
    expect(runs.executions.length).toBeGreaterThanOrEqual(3);
    expect((await app.functions.executions.events(sync.executionId!)).map((e) => e.type)).toContain('succeeded');
    expect((await app.functions.executions.stats()).functions?.length ?? 1).toBeGreaterThan(0);
    await app.functions.secrets.unset('GREETING');
    await app.functions.remove(created.id);
    await rejects(app.functions.invoke('hello'), 'NOT_FOUND', 404);
    await rejects(app.functions.create({ name: '', steps: [] }), 'VALIDATION_FAILED', 400);
  });
});

describe('end-user auth with the publishable key and a public client', () => {
  const user = { email: `end-${Date.now()}@example.com`, password: 'a long enough password' };

  it('signs up, signs in with a password, reads the user, refreshes, and writes under RLS as itself', async () => {
    const u = await browser.auth.signUp({ email: user.email, password: user.password, name: 'Ada' });
    expect(u).toMatchObject({ email: user.email, email_verified: false });
    const session = await browser.auth.signInWithPassword(user);
    expect(session.refreshToken).toMatch(/.+/);
    expect((await browser.auth.getUser()).email).toBe(user.email);
    const first = browser.auth.session!.accessToken;
    await browser.auth.refresh();
    expect(browser.auth.session!.accessToken).not.toBe(first);
    await browser.from('todos').insert({ title: 'mine', owner: u.id }, { returning: false });
    await rejects(browser.from('todos').insert({ title: 'forged', owner: 'someone' }), 'FORBIDDEN', 403);
    await rejects(browser.auth.signInWithPassword({ ...user, password: 'wrong password' }), 'invalid_grant', 400);
  });

  it('refreshes by itself when the access token has expired', async () => {
    const changes: unknown[] = [];
    const stop = browser.auth.onChange((s) => changes.push(s));
    browser.auth.setSession({ ...browser.auth.session!, expiresAt: Date.now() - 1000 });
    expect((await browser.auth.getUser()).email).toBe(user.email);
    expect(browser.auth.session!.expiresAt).toBeGreaterThan(Date.now());
    stop();
    expect(changes.length).toBe(2);
  });

  it('signs in with the authorization code flow and PKCE through the hosted page', async () => {
    const c = createClient({ url: base, key: project.publishable_key, clientId });
    const { url, state, verifier } = await c.auth.authorizeUrl({ redirectUri: REDIRECT });
    expect(url).toContain('code_challenge_method=S256');
    const page = await signInThroughPage(url, user);
    const back = new URL(page.location!);
    expect(back.searchParams.get('state')).toBe(state);
    await rejects(
      c.auth.exchangeCode({
        code: back.searchParams.get('code')!,
        verifier: 'wrong-verifier-wrong-verifier-wrong-verifier-00',
        redirectUri: REDIRECT,
      }),
      'invalid_grant',
      400,
    );
    const again = await signInThroughPage(
      (await c.auth.authorizeUrl({ redirectUri: REDIRECT, state: 's2' })).url,
      user,
    );
    const code = new URL(again.location!).searchParams.get('code')!;
    // The verifier of the second request: authorizeUrl made a new one.
    void verifier;
    await rejects(c.auth.exchangeCode({ code, verifier, redirectUri: REDIRECT }), 'invalid_grant', 400);
    const third = await c.auth.authorizeUrl({ redirectUri: REDIRECT });
    const ok = new URL((await signInThroughPage(third.url, user)).location!).searchParams.get('code')!;
    const s = await c.auth.exchangeCode({ code: ok, verifier: third.verifier, redirectUri: REDIRECT });
    expect(s.idToken).toMatch(/.+/);
    expect((await c.auth.getUser()).email).toBe(user.email);
    await c.auth.signOut();
    expect(c.auth.session).toBeUndefined();
    await rejects(c.auth.refresh(), 'NOT_SIGNED_IN', 0);
  });

  it('enrolls end-user MFA, changes the password, resets it by mail and verifies the e-mail', async () => {
    const c = createClient({ url: base, key: project.publishable_key, clientId });
    const u = { email: `mfa-${Date.now()}@example.com`, password: 'a long enough password' };
    await c.auth.signUp(u);
    await c.auth.signInWithPassword(u);
    const { secret } = await c.auth.mfa.enroll();
    expect((await c.auth.mfa.verify(await generate({ secret }))).mfa_enabled).toBe(true);
    await rejects(createClient({ url: base, clientId }).auth.signInWithPassword(u), 'mfa_required', 400);
    expect(
      (await c.auth.mfa.disable(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }))).mfa_enabled,
    ).toBe(false);
    // Verification first: a password reset marks the address verified as well.
    await c.auth.requestEmailVerification(u.email);
    const verify = await env.mailbox.waitFor(u.email, /e-mail address/i);
    await c.auth.confirmEmailVerification(tokenOf(verify));
    await rejects(c.auth.confirmEmailVerification('not-a-token'), 'INVALID_TOKEN', 401);
    await c.auth.changePassword(u.password, 'another long password');
    await c.auth.requestPasswordReset(u.email);
    const mail = await env.mailbox.waitFor(u.email, /reset/i);
    await c.auth.confirmPasswordReset(tokenOf(mail), 'a third long password');
    await createClient({ url: base, clientId }).auth.signInWithPassword({
      email: u.email,
      password: 'a third long password',
    });
  });

  it('receives realtime changes under RLS over SSE and graphql-ws', async () => {
    await admin.tenant.projects.setPublication(project.id, 'todos', true);
    for (const transport of ['sse', 'ws'] as const) {
      const seen: Change<{ title: string }>[] = [];
      const errors: unknown[] = [];
      const sub = browser.realtime.subscribe<{ title: string }>((c) => seen.push(c), {
        table: 'todos',
        transport,
        onError: (e) => errors.push(e),
      });
      await sub.ready;
      await waitFor(
        async () => {
          if (seen.some((c) => c.row?.title === `live-${transport}`)) return true;
          await app.from('todos').insert({ title: `live-${transport}` }, { returning: false });
          return false;
        },
        { intervalMs: 200, message: `realtime over ${transport}` },
      );
      sub.close();
      expect(errors).toEqual([]);
    }
    const refused: TesseraError[] = [];
    const bad = createClient({ url: base, key: 'tpk_not-a-key' }).realtime.subscribe(() => {}, {
      onError: (e) => refused.push(e),
    });
    await bad.ready.catch(() => undefined);
    await waitFor(async () => refused.length > 0, { message: 'refusal' });
    expect(refused[0]).toMatchObject({ code: 'INVALID_API_KEY', status: 401 });
  });

  it('reports a network failure as a typed error', async () => {
    await rejects(createClient({ url: 'http://127.0.0.1:9' }).tenant.plans(), 'NETWORK_ERROR', 0);
  });
});
