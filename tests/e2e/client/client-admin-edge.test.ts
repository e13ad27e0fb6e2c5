// The client package's end-user admin API (client.admin.users) and edge collections (functions.hooks, webhooks,
// cron, emailTemplates, emailConfig, eventSubscriptions, executions.replay/diff), which the dashboard uses, against a live Tessera: each call does what the REST
// row says, unknown ids and bad bodies are typed errors, another project's key and the publishable key are refused.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient, TesseraError, type TesseraClient } from '../../../packages/client/src/index.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { newProject, type Project } from '../identity/identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

let platform: TestPlatform;
let project: Project;
let api: TesseraClient;
let other: TesseraClient;
let publishable: TesseraClient;

const rejects = async (p: Promise<unknown>, code: string, status: number): Promise<TesseraError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TesseraError);
  expect({ code: (err as TesseraError).code, status: (err as TesseraError).status }).toEqual({ code, status });
  expect((err as TesseraError).requestId).toBeTruthy();
  return err as TesseraError;
};

beforeAll(async () => {
  platform = await startOneProcess();
  project = await newProject(platform.url);
  api = createClient({ url: platform.url, key: project.apiKey });
  other = createClient({ url: platform.url, key: (await newProject(platform.url)).apiKey });
  const tenant = createClient({ url: platform.url, accessToken: project.tenantToken });
  publishable = createClient({
    url: platform.url,
    key: (await tenant.tenant.projects.get(project.id)).publishable_key,
  });
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

describe('client.admin.users', () => {
  const emails = ['ada@example.com', 'bob@example.com', 'cyd@example.com'];

  it('lists with search and paging, reads, updates roles and metadata, disables, enables, ends sessions and deletes', async () => {
    for (const email of emails) await publishable.auth.signUp({ email, password: 'a long enough password' });
    const first = await api.admin.users.list({ first: 2 });
    expect(first.users).toHaveLength(2);
    expect(first.next_cursor).toBeTruthy();
    const second = await api.admin.users.list({ first: 2, after: first.next_cursor! });
    expect([...first.users, ...second.users].map((u) => u.email).sort()).toEqual(emails);
    const found = await api.admin.users.list({ search: 'bob' });
    expect(found.users.map((u) => u.email)).toEqual(['bob@example.com']);
    const bob = found.users[0]!;
    expect((await api.admin.users.get(bob.id)).email).toBe('bob@example.com');
    const updated = await api.admin.users.update(bob.id, { roles: ['editor'], app_metadata: { plan: 'pro' } });
    expect({ roles: updated.roles, meta: updated.app_metadata }).toEqual({ roles: ['editor'], meta: { plan: 'pro' } });
    expect((await api.admin.users.disable(bob.id)).disabled).toBe(true);
    expect((await api.admin.users.enable(bob.id)).disabled).toBe(false);
    expect(await api.admin.users.revokeSessions(bob.id)).toBeGreaterThanOrEqual(0);
    await api.admin.users.remove(bob.id);
    await rejects(api.admin.users.get(bob.id), 'NOT_FOUND', 404);
  });

  it('adds a user with a password and invites another by e-mail', async () => {
    const added = await api.admin.users.create({
      email: 'dee@example.com',
      password: 'a long enough password',
      name: 'Dee',
    });
    expect(added).toMatchObject({ email: 'dee@example.com', name: 'Dee', email_verified: false });
    const invited = await api.admin.users.invite({ email: 'eve@example.com', email_verified: true });
    expect(invited).toMatchObject({ email: 'eve@example.com', email_verified: true });
    await rejects(
      api.admin.users.create({ email: 'dee@example.com', password: 'another long password' }),
      'EMAIL_TAKEN',
      409,
    );
    await rejects(api.admin.users.invite({ email: 'not an address' }), 'VALIDATION_FAILED', 400);
    expect(
      await publishable.admin.users.invite({ email: 'fay@example.com' }).catch((e: TesseraError) => e),
    ).toMatchObject({ status: 403 });
    expect((await api.admin.users.list({ search: 'fay' })).users).toEqual([]);
  });

  it('refuses unknown ids, bad bodies, another project and the publishable key', async () => {
    const ada = (await api.admin.users.list({ search: 'ada' })).users[0]!;
    await rejects(api.admin.users.get('00000000-0000-4000-8000-000000000000'), 'NOT_FOUND', 404);
    await rejects(api.admin.users.update(ada.id, { roles: ['not a role!'] }), 'VALIDATION_FAILED', 400);
    await rejects(other.admin.users.get(ada.id), 'NOT_FOUND', 404);
    expect((await other.admin.users.list({ search: 'ada' })).users).toEqual([]);
    const refused = await publishable.admin.users.list().then(
      () => undefined,
      (e: unknown) => e as TesseraError,
    );
    expect(refused?.status).toBe(403);
  });
});

describe('client.functions edge collections', () => {
  beforeAll(async () => {
    // A hook needs its table in the project database.
    await api.data.sql('create table orders (id serial primary key)');
    await api.functions.create({
      name: 'echo',
      steps: [{ name: 'out', kind: 'Transform', expression: '{{ input.body }}', return: true }],
    });
  });

  it('creates, lists and deletes hooks and webhook receivers', async () => {
    const hook = await api.functions.hooks.create({
      table: 'orders',
      timing: 'after',
      events: ['insert'],
      function: 'echo',
    });
    expect((await api.functions.hooks.list()).map((h) => h.id)).toEqual([hook.id]);
    await api.functions.hooks.remove(hook.id);
    expect(await api.functions.hooks.list()).toEqual([]);
    const receiver = await api.functions.webhooks.create({ function: 'echo', slug: 'incoming' });
    expect(receiver.url).toContain(`/webhooks/${project.id}/incoming`);
    expect((await api.functions.webhooks.list()).map((w) => w.slug)).toEqual(['incoming']);
    await api.functions.webhooks.remove(receiver.id);
    expect(await api.functions.webhooks.list()).toEqual([]);
    await rejects(
      api.functions.hooks.create({ table: 'orders', timing: 'sometimes', events: ['insert'], function: 'echo' }),
      'VALIDATION_FAILED',
      400,
    );
  });

  it('creates cron jobs with their next five runs, pauses and deletes them', async () => {
    const job = await api.functions.cron.create({
      name: 'nightly',
      schedule: '0 3 * * *',
      timezone: 'Asia/Tokyo',
      function: 'echo',
    });
    expect(job.next_runs).toHaveLength(5);
    expect(new Date(job.next_runs[0] as string).getUTCHours()).toBe(18);
    expect((await api.functions.cron.update(job.id, { enabled: false })).enabled).toBe(false);
    expect((await api.functions.cron.list()).map((j) => j.name)).toEqual(['nightly']);
    await api.functions.cron.remove(job.id);
    expect(await api.functions.cron.list()).toEqual([]);
    await rejects(
      api.functions.cron.create({ name: 'bad', schedule: 'every day', function: 'echo' }),
      'VALIDATION_FAILED',
      400,
    );
    await rejects(other.functions.cron.update(job.id, { enabled: true }), 'NOT_FOUND', 404);
  });

  it('keeps e-mail templates with a preview, and SMTP settings without ever answering the password', async () => {
    const t = await api.functions.emailTemplates.create({
      name: 'welcome',
      subject: 'Hi {{ name }}',
      html: '<p>Hi {{ name }}</p>',
      text: 'Hi {{ name }}',
    });
    expect((await api.functions.emailTemplates.update(t.id, { subject: 'Hello {{ name }}' })).subject).toBe(
      'Hello {{ name }}',
    );
    expect(await api.functions.emailTemplates.preview(t.id, { name: '<Ada>' })).toEqual({
      subject: 'Hello <Ada>',
      html: '<p>Hi &lt;Ada&gt;</p>',
      text: 'Hi <Ada>',
    });
    await api.functions.emailTemplates.remove(t.id);
    expect(await api.functions.emailTemplates.list()).toEqual([]);
    expect(await api.functions.emailConfig.get()).toBeNull();
    const config = await api.functions.emailConfig.set({
      host: 'smtp.example.com',
      port: 587,
      secure: false,
      user: 'mailer',
      password: 'smtp secret',
      from: 'Shop <shop@example.com>',
    });
    expect(config).toMatchObject({ host: 'smtp.example.com', port: 587, user: 'mailer' });
    expect(JSON.stringify(await api.functions.emailConfig.get())).not.toContain('smtp secret');
    await api.functions.emailConfig.remove();
    expect(await api.functions.emailConfig.get()).toBeNull();
    // With no settings there is nothing to test.
    await rejects(api.functions.emailConfig.test('someone@example.com'), 'NOT_FOUND', 404);
  });
});

describe('client.functions event subscriptions, replay and diff', () => {
  it('creates a subscription (secret once), updates, rotates, tests, reads and redelivers its deliveries, deletes', async () => {
    // A name that does not resolve (RFC 2606 .invalid): the delivery fails and stays in the log with its error.
    const sub = await api.functions.eventSubscriptions.create({
      url: 'https://hooks.tessera.invalid/hook',
      events: ['user.registered'],
    });
    expect(sub.secret).toMatch(/^whsec_/);
    expect(await api.functions.eventSubscriptions.list()).toEqual([{ ...sub, secret: null }]);
    expect((await api.functions.eventSubscriptions.get(sub.id)).secret).toBeNull();
    expect((await api.functions.eventSubscriptions.update(sub.id, { enabled: false })).enabled).toBe(false);
    expect((await api.functions.eventSubscriptions.update(sub.id, { enabled: true })).enabled).toBe(true);
    const rotated = await api.functions.eventSubscriptions.rotateSecret(sub.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(sub.secret);
    const queued = await api.functions.eventSubscriptions.test(sub.id);
    expect(queued).toMatchObject({ subscription_id: sub.id, event: 'subscription.test' });
    const tried = await waitFor(
      async () => {
        const d = await api.functions.eventSubscriptions.delivery(sub.id, queued.id);
        return d.attempts >= 1 && d.status !== 'delivering' && d;
      },
      { message: 'the test delivery attempted' },
    );
    expect(tried.attempt_log).toHaveLength(tried.attempts);
    expect(tried.last_error).toBeTruthy();
    const page = await api.functions.eventSubscriptions.deliveries(sub.id, { first: 10 });
    expect(page.deliveries.map((d) => d.id)).toEqual([queued.id]);
    expect((await api.functions.eventSubscriptions.deliveries(sub.id, { status: 'succeeded' })).deliveries).toEqual([]);
    expect((await api.functions.eventSubscriptions.redeliver(sub.id, queued.id)).id).toBe(queued.id);
    // Another project sees none of it.
    await rejects(other.functions.eventSubscriptions.get(sub.id), 'NOT_FOUND', 404);
    await rejects(other.functions.eventSubscriptions.redeliver(sub.id, queued.id), 'NOT_FOUND', 404);
    await rejects(
      api.functions.eventSubscriptions.create({ url: 'not a url', events: ['user.registered'] }),
      'VALIDATION_FAILED',
      400,
    );
    await api.functions.eventSubscriptions.remove(sub.id);
    expect(await api.functions.eventSubscriptions.list()).toEqual([]);
  });

  it('replays an execution from a step and diffs it with the original', async () => {
    await api.functions.create({
      name: 'twice',
      steps: [
        { name: 'double', kind: 'Transform', expression: { n: '{{ input.body.n * 2 }}' } },
        { name: 'say', kind: 'Transform', expression: { said: 'n={{ input.body.n }}' } },
      ],
    });
    const run = await api.functions.invoke('twice', { n: 1 });
    const replay = await api.functions.executions.replay(run.executionId!, { from_step: 'say', input: { n: 4 } });
    expect(replay).toMatchObject({ replay_of: run.executionId, replay_from_step: 'say', status: 'succeeded' });
    expect(replay.output).toEqual({ said: 'n=4' });
    const diff = await api.functions.executions.diff(run.executionId!, replay.id);
    expect(diff.output).toEqual({ changed: true, from: { said: 'n=1' }, to: { said: 'n=4' } });
    expect(diff.steps.map((s) => s.step)).toEqual(['double', 'say']);
    await rejects(other.functions.executions.replay(run.executionId!), 'NOT_FOUND', 404);
    await rejects(other.functions.executions.diff(run.executionId!, replay.id), 'NOT_FOUND', 404);
  });
});
