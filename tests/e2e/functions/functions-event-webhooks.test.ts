// Outbound event webhooks end to end: a project subscribes a local receiver to events; every delivery is verified
// with an independent Standard Webhooks implementation (the `standardwebhooks` package). Row events of data API
// writes, end-user and storage events from the other domains, failed executions; failures retried with backoff then
// dead-lettered, redelivered by hand; the delivery log; the API's failure paths; GraphQL.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, startEdgeWorld, type EdgeWorld } from './functions-helpers.ts';
import { newProject, passwordGrant, registerUser, type Project } from '../identity/identity-fixtures.ts';
import { put, STORAGE } from '../storage/storage-fixtures.ts';
import { startReceiver, verified, type Receiver } from './event-receiver.ts';
import { waitFor } from '../../support/wait-for.ts';

let w: EdgeWorld;
let rx: Receiver;
const SUBS = '/edge/api/v1/event-subscriptions';

type Sub = { id: string; secret: string };
/** Subscribes `path` of the receiver with the project's API key; answers the subscription (with its secret). */
async function subscribe(apiKey: string, path: string, body: Record<string, unknown>): Promise<Sub> {
  const res = await w.call('POST', SUBS, { apiKey, body: { url: `${rx.url}${path}`, ...body } });
  expect(res.status).toBe(201);
  expect(res.body.event_subscription.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  return res.body.event_subscription as Sub;
}

/** A subscription's delivery log now (deliveries are recorded before the write that made them is answered). */
async function logOf(
  apiKey: string,
  sub: Sub,
): Promise<{ event: string; status: string; payload: { data: Record<string, unknown> } }[]> {
  const res = await w.call('GET', `${SUBS}/${sub.id}/deliveries?first=100`, { apiKey });
  expect(res.status).toBe(200);
  return res.body.deliveries;
}

/** Polls a subscription's delivery log until `check` accepts it. */
async function deliveries(apiKey: string, sub: Sub, check: (list: Record<string, unknown>[]) => boolean, query = '') {
  return await waitFor(
    async () => {
      const res = await w.call('GET', `${SUBS}/${sub.id}/deliveries?first=100${query}`, { apiKey });
      expect(res.status).toBe(200);
      const list = res.body.deliveries as Record<string, unknown>[];
      return check(list) ? list : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

beforeAll(async () => {
  rx = await startReceiver();
  // Quick retries and a short window, so dead-lettering happens within the test.
  w = await startEdgeWorld({
    TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true',
    TESSERA_EVENT_RETRY_BASE_MS: '100',
    TESSERA_EVENT_RETRY_WINDOW: '6',
  });
  for (const sql of [
    'create table orders (id serial primary key, sku text not null, qty int not null)',
    'create table notes (id serial primary key)',
  ]) {
    expect((await w.call('POST', '/v1/rawSQL', { apiKey: w.apiKey, body: { sql } })).status).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await w?.p.close();
  await rx?.close();
});

describe('row events', () => {
  it('delivers inserts, updates and deletes of the subscribed table, signed the Standard Webhooks way', async () => {
    const sub = await subscribe(w.apiKey, '/rows', {
      events: ['row.inserted', 'row.updated', 'row.deleted'],
      tables: ['orders'],
      description: 'orders feed',
    });
    const sentFrom = Math.floor(Date.now() / 1000);
    expect(
      (
        await w.call('POST', '/v1/insert', {
          apiKey: w.apiKey,
          body: { table: 'orders', values: { sku: 'tea', qty: 1 } },
        })
      ).status,
    ).toBe(201);
    expect(
      (await w.call('POST', '/v1/insert', { apiKey: w.apiKey, body: { table: 'notes', values: {} } })).status,
    ).toBe(201);
    expect(
      (
        await w.call('POST', '/v1/update', {
          apiKey: w.apiKey,
          body: { table: 'orders', where: { sku: 'tea' }, set: { qty: 2 } },
        })
      ).status,
    ).toBe(200);
    expect(
      (await w.call('POST', '/v1/delete', { apiKey: w.apiKey, body: { table: 'orders', where: { sku: 'tea' } } }))
        .status,
    ).toBe(200);
    const got = await rx.waitFor('/rows', 3);
    const receivedBy = Math.ceil(Date.now() / 1000);
    const bodies = got.map((r) => verified(sub.secret, r));
    expect(bodies.map((b) => b.type).sort()).toEqual(['row.deleted', 'row.inserted', 'row.updated']);
    const inserted = bodies.find((b) => b.type === 'row.inserted')!;
    expect(inserted.data).toEqual({
      project_id: w.projectId,
      table: 'orders',
      row: { id: expect.any(Number), sku: 'tea', qty: 1 },
      user_id: null,
    });
    expect(bodies.find((b) => b.type === 'row.updated')!.data.row).toMatchObject({ sku: 'tea', qty: 2 });
    expect(bodies.find((b) => b.type === 'row.deleted')!.data.row).toMatchObject({ sku: 'tea', qty: 2 });
    for (const r of got) {
      expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      // Stamped when sent: between the writes and their arrival (one clock, whole seconds).
      expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(sentFrom);
      expect(Number(r.headers['webhook-timestamp'])).toBeLessThanOrEqual(receivedBy);
      expect(r.headers['content-type']).toBe('application/json');
      // A signature under another secret does not verify.
      expect(() => verified('whsec_' + Buffer.from('another secret of 24 bytes!').toString('base64'), r)).toThrow();
    }
    // The log says each one succeeded, with its status and latency.
    const log = await deliveries(w.apiKey, sub, (l) => l.length === 3 && l.every((d) => d.status === 'succeeded'));
    for (const d of log)
      expect(d).toMatchObject({
        attempts: 1,
        last_status_code: 200,
        last_latency_ms: expect.any(Number),
        last_response: '{"ok":true}',
        delivered_at: expect.any(String),
      });
    expect(rx.at('/rows')).toHaveLength(3);
  });

  it('delivers rows written inside a transaction and by a function, and only what the subscription names', async () => {
    const sub = await subscribe(w.apiKey, '/inserts', { events: ['row.inserted'], tables: ['orders'] });
    await w.call('POST', '/v1/transaction', {
      apiKey: w.apiKey,
      body: {
        operations: [
          {
            action: 'insert',
            table: 'orders',
            values: [
              { sku: 'a', qty: 1 },
              { sku: 'b', qty: 2 },
            ],
          },
          { action: 'update', table: 'orders', where: { sku: 'a' }, set: { qty: 5 } },
        ],
      },
    });
    const fn = await w.call('POST', '/edge/api/v1/functions', {
      apiKey: w.apiKey,
      body: {
        name: 'add-order',
        steps: [
          {
            name: 'save',
            kind: 'Database',
            query: { action: 'insert', table: 'orders', values: { sku: 'c', qty: 3 } },
          },
        ],
      },
    });
    expect(fn.status).toBe(201);
    expect((await w.call('POST', '/edge/api/v1/invoke/add-order', { apiKey: w.apiKey, body: {} })).status).toBe(200);
    const got = await rx.waitFor('/inserts', 3);
    expect(got.map((r) => (verified(sub.secret, r).data.row as { sku: string }).sku).sort()).toEqual(['a', 'b', 'c']);
    // A rolled-back transaction delivers nothing.
    const failed = await w.call('POST', '/v1/transaction', {
      apiKey: w.apiKey,
      body: {
        operations: [
          { action: 'insert', table: 'orders', values: { sku: 'never', qty: 1 } },
          { action: 'insert', table: 'orders', values: { sku: null } },
        ],
      },
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(
      (
        await w.call('POST', '/v1/insert', {
          apiKey: w.apiKey,
          body: { table: 'orders', values: { sku: 'marker', qty: 1 } },
        })
      ).status,
    ).toBe(201);
    await rx.waitFor('/inserts', 4);
    const skus = (await logOf(w.apiKey, sub)).map((d) => (d.payload.data.row as { sku: string }).sku);
    expect(skus.sort()).toEqual(['a', 'b', 'c', 'marker']);
  });

  it('stops delivering when the subscription is disabled, and starts again when enabled', async () => {
    const sub = await subscribe(w.apiKey, '/toggle', { events: ['row.inserted'], tables: ['notes'] });
    expect(
      (await w.call('PUT', `${SUBS}/${sub.id}`, { apiKey: w.apiKey, body: { enabled: false } })).body.event_subscription
        .enabled,
    ).toBe(false);
    await w.call('POST', '/v1/insert', { apiKey: w.apiKey, body: { table: 'notes', values: {} } });
    expect(await logOf(w.apiKey, sub)).toHaveLength(0);
    expect(
      (await w.call('PUT', `${SUBS}/${sub.id}`, { apiKey: w.apiKey, body: { enabled: true } })).body.event_subscription
        .enabled,
    ).toBe(true);
    await w.call('POST', '/v1/insert', { apiKey: w.apiKey, body: { table: 'notes', values: {} } });
    await rx.waitFor('/toggle', 1);
  });
});

describe('end-user, storage and execution events', () => {
  let project: Project;

  beforeAll(async () => {
    project = await newProject(w.p.url);
  });

  it('delivers user.registered and user.signed_in', async () => {
    const sub = await subscribe(project.apiKey, '/users', { events: ['user.registered', 'user.signed_in'] });
    const user = await registerUser(w.p.url, project);
    expect((await passwordGrant(w.p.url, project, user)).status).toBe(200);
    const got = await rx.waitFor('/users', 2);
    const bodies = Object.fromEntries(got.map((r) => verified(sub.secret, r)).map((b) => [b.type, b]));
    expect(bodies['user.registered']!.data).toEqual({
      project_id: project.id,
      user: { id: user.id, email: user.email, email_verified: false, created_at: expect.any(String) },
    });
    expect(bodies['user.signed_in']!.data).toMatchObject({
      project_id: project.id,
      user: { id: user.id, email: user.email },
      client_id: project.clientId,
      amr: ['pwd'],
      session_id: expect.any(String),
    });
  });

  it('delivers storage.object.created and storage.object.deleted', async () => {
    const sub = await subscribe(project.apiKey, '/files', {
      events: ['storage.object.created', 'storage.object.deleted'],
    });
    const up = await put(w.p.url, project, 'docs', 'a.txt', 'hello');
    expect(up.status).toBe(201);
    const id = up.body.object.id as string;
    expect((await w.call('DELETE', `${STORAGE}/objects/${id}`, { apiKey: project.apiKey })).status).toBe(204);
    const got = await rx.waitFor('/files', 2);
    const bodies = got.map((r) => verified(sub.secret, r));
    expect(bodies.map((b) => b.type)).toEqual(['storage.object.created', 'storage.object.deleted']);
    expect(bodies[0]!.data).toEqual({
      project_id: project.id,
      object: {
        id,
        folder: 'docs',
        name: 'a.txt',
        content_type: expect.any(String),
        size: 5,
        sha256: expect.any(String),
        owner_id: null,
      },
    });
  });

  it('delivers execution.failed for a failed run', async () => {
    const sub = await subscribe(project.apiKey, '/failures', { events: ['execution.failed'] });
    expect(
      (
        await w.call('POST', '/edge/api/v1/functions', {
          apiKey: project.apiKey,
          body: {
            name: 'broken',
            steps: [{ name: 'read', kind: 'Database', query: { action: 'find', table: 'missing_table' } }],
          },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await w.call('POST', '/edge/api/v1/functions', {
          apiKey: project.apiKey,
          body: { name: 'fine', steps: [{ name: 'out', kind: 'Transform', expression: { ok: true } }] },
        })
      ).status,
    ).toBe(201);
    const res = await w.call('POST', '/edge/api/v1/invoke/broken', { apiKey: project.apiKey, body: {} });
    expect(res.status).toBe(502);
    expect((await w.call('POST', '/edge/api/v1/invoke/fine', { apiKey: project.apiKey, body: {} })).status).toBe(200);
    const [got] = await rx.waitFor('/failures', 1);
    const body = verified(sub.secret, got!);
    expect(body.type).toBe('execution.failed');
    expect(body.data.execution).toMatchObject({
      id: res.body.error.details.execution_id,
      function: 'broken',
      trigger: 'invoke',
      error: { step: 'read' },
    });
    // Recorded before each invoke answered: one delivery, for the failed run only.
    expect(await logOf(project.apiKey, sub)).toHaveLength(1);
  });

  it("sends nothing of a project to another project's subscriptions", async () => {
    const other = await subscribe(w.apiKey, '/other-users', { events: ['user.registered'] });
    await registerUser(w.p.url, project);
    // The event's handling made this project's delivery; another project's would have been made by the same handling.
    await rx.waitFor('/users', 3);
    expect(await logOf(w.apiKey, other)).toHaveLength(0);
    expect(rx.at('/other-users')).toHaveLength(0);
  });
});

describe('retries, dead letters and redelivery', () => {
  it('retries a failing receiver with backoff, dead-letters it when the window closes, and redelivers by hand', async () => {
    rx.answer('/down', { status: 503, body: 'maintenance' });
    const sub = await subscribe(w.apiKey, '/down', { events: ['row.inserted'], tables: ['notes'] });
    await w.call('POST', '/v1/insert', { apiKey: w.apiKey, body: { table: 'notes', values: {} } });
    const [dead] = await deliveries(w.apiKey, sub, (l) => l[0]?.status === 'dead');
    const tries = rx.at('/down');
    expect(tries.length).toBeGreaterThanOrEqual(4);
    expect(dead!.attempts).toBe(tries.length);
    // The same message id for every attempt, each signed anew; the waits grow.
    expect(new Set(tries.map((t) => t.headers['webhook-id'])).size).toBe(1);
    for (const t of tries) expect(verified(sub.secret, t).type).toBe('row.inserted');
    const gaps = tries.slice(1).map((t, i) => t.at - tries[i]!.at);
    expect(gaps[gaps.length - 1]!).toBeGreaterThan(gaps[0]!);
    const detail = await w.call('GET', `${SUBS}/${sub.id}/deliveries/${dead!.id as string}`, { apiKey: w.apiKey });
    expect(detail.body.delivery.attempt_log).toHaveLength(tries.length);
    expect(detail.body.delivery.attempt_log[0]).toMatchObject({
      attempt: 1,
      status_code: 503,
      response_excerpt: 'maintenance',
      error: 'answered 503',
      latency_ms: expect.any(Number),
    });
    expect(detail.body.delivery).toMatchObject({ status: 'dead', next_attempt_at: null, last_status_code: 503 });
    // Listed among the dead letters.
    expect(
      (await w.call('GET', `${SUBS}/${sub.id}/deliveries?status=dead`, { apiKey: w.apiKey })).body.deliveries.map(
        (d: { id: string }) => d.id,
      ),
    ).toContain(dead!.id);
    // The receiver is back: a redelivery succeeds, with the same message id.
    rx.answer('/down', { status: 204 });
    const again = await w.call('POST', `${SUBS}/${sub.id}/deliveries/${dead!.id as string}/redeliver`, {
      apiKey: w.apiKey,
    });
    expect(again.status).toBe(202);
    const [done] = await deliveries(w.apiKey, sub, (l) => l[0]?.status === 'succeeded');
    expect(done).toMatchObject({ attempts: tries.length + 1, last_status_code: 204 });
    const last = rx.at('/down').at(-1)!;
    expect(last.headers['webhook-id']).toBe(tries[0]!.headers['webhook-id']);
    expect(verified(sub.secret, last).type).toBe('row.inserted');
  });

  it('retries until the receiver recovers within the window', async () => {
    rx.answer('/flaky', (n) => (n <= 2 ? { status: 500 } : { status: 200 }));
    const sub = await subscribe(w.apiKey, '/flaky', { events: ['row.inserted'], tables: ['notes'] });
    await w.call('POST', '/v1/insert', { apiKey: w.apiKey, body: { table: 'notes', values: {} } });
    const [d] = await deliveries(w.apiKey, sub, (l) => l[0]?.status === 'succeeded');
    expect(d).toMatchObject({ attempts: 3, last_status_code: 200 });
  });

  it('sends a test event, rotates the secret, and signs later deliveries with the new one', async () => {
    const sub = await subscribe(w.apiKey, '/test', { events: ['execution.failed'] });
    const test = await w.call('POST', `${SUBS}/${sub.id}/test`, { apiKey: w.apiKey });
    expect(test.status).toBe(202);
    expect(test.body.delivery).toMatchObject({
      event: 'subscription.test',
      status: expect.stringMatching(/pending|delivering|succeeded/),
    });
    const [first] = await rx.waitFor('/test', 1);
    expect(verified(sub.secret, first!).data).toMatchObject({ subscription_id: sub.id });
    const rotated = await w.call('POST', `${SUBS}/${sub.id}/rotate-secret`, { apiKey: w.apiKey });
    expect(rotated.status).toBe(200);
    const secret = rotated.body.event_subscription.secret as string;
    expect(secret).not.toBe(sub.secret);
    await w.call('POST', `${SUBS}/${sub.id}/test`, { apiKey: w.apiKey });
    const [, second] = await rx.waitFor('/test', 2);
    expect(verified(secret, second!).type).toBe('subscription.test');
    expect(() => verified(sub.secret, second!)).toThrow();
    // Secrets are not listed.
    const listed = await w.call('GET', SUBS, { apiKey: w.apiKey });
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect((await w.call('GET', `${SUBS}/${sub.id}`, { apiKey: w.apiKey })).body.event_subscription.secret).toBeNull();
  });
});

describe('the subscriptions API', () => {
  it('lists, gets, changes and deletes subscriptions (by path or ?id=)', async () => {
    const sub = await subscribe(w.apiKey, '/crud', { events: ['user.registered'] });
    expect(
      (await w.call('GET', SUBS, { apiKey: w.apiKey })).body.event_subscriptions.map((s: { id: string }) => s.id),
    ).toContain(sub.id);
    const changed = await w.call('PUT', `${SUBS}/${sub.id}`, {
      apiKey: w.apiKey,
      body: { events: ['row.deleted'], tables: ['notes', 'orders'], description: 'now rows' },
    });
    expect(changed.body.event_subscription).toMatchObject({
      events: ['row.deleted'],
      tables: ['notes', 'orders'],
      description: 'now rows',
      url: `${rx.url}/crud`,
    });
    expect((await w.call('DELETE', `${SUBS}/${sub.id}`, { apiKey: w.apiKey })).status).toBe(204);
    expectError(await w.call('GET', `${SUBS}/${sub.id}`, { apiKey: w.apiKey }), 404, 'NOT_FOUND');
    const other = await subscribe(w.apiKey, '/crud2', { events: ['user.registered'] });
    expect((await w.call('DELETE', `${SUBS}?id=${other.id}`, { apiKey: w.apiKey })).status).toBe(204);
    expectError(await w.call('DELETE', `${SUBS}?id=${other.id}`, { apiKey: w.apiKey }), 404, 'NOT_FOUND');
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const bad = async (body: unknown, field: RegExp, code = 'VALIDATION_FAILED') =>
      expectError(await w.call('POST', SUBS, { apiKey: w.apiKey, body }), 400, code, field);
    await bad({ events: ['user.registered'] }, /url/, 'BAD_USER_INPUT');
    await bad({ url: 'ftp://example.com/x', events: ['user.registered'] }, /url/);
    await bad({ url: 'not a url', events: ['user.registered'] }, /url/);
    await bad({ url: `${rx.url}/x` }, /events/, 'BAD_USER_INPUT');
    await bad({ url: `${rx.url}/x`, events: [5] }, /events/, 'BAD_USER_INPUT');
    await bad({ url: '', events: ['user.registered'] }, /url/);
    await bad({ url: `${rx.url}/x`, events: [] }, /events/);
    await bad({ url: `${rx.url}/x`, events: ['row.exploded'] }, /events\[0\]/);
    await bad({ url: `${rx.url}/x`, events: ['row.inserted'] }, /tables/);
    await bad({ url: `${rx.url}/x`, events: ['user.registered'], tables: ['notes'] }, /tables/);
    await bad({ url: `${rx.url}/x`, events: ['row.inserted'], tables: ['no such; table'] }, /tables\[0\]/);
    await bad({ url: `${rx.url}/x`, events: ['user.registered'], secret: 'short' }, /secret/);
    expectError(
      await w.call('POST', SUBS, {
        apiKey: w.apiKey,
        body: { url: `${rx.url}/x`, events: ['user.registered'], extra: 1 },
      }),
      400,
      'BAD_USER_INPUT',
      /extra/,
    );
    const sub = await subscribe(w.apiKey, '/bad', { events: ['user.registered'] });
    expectError(
      await w.call('PUT', `${SUBS}/${sub.id}`, { apiKey: w.apiKey, body: { secret: 'whsec_x' } }),
      400,
      'VALIDATION_FAILED',
      /rotate/,
    );
    expectError(
      await w.call('PUT', `${SUBS}/${sub.id}`, { apiKey: w.apiKey, body: { events: ['row.inserted'] } }),
      400,
      'VALIDATION_FAILED',
      /tables/,
    );
    expectError(
      await w.call('GET', `${SUBS}/${sub.id}/deliveries?status=lost`, { apiKey: w.apiKey }),
      400,
      'VALIDATION_FAILED',
      /status/,
    );
    expectError(
      await w.call('GET', `${SUBS}/${sub.id}/deliveries?after=garbage`, { apiKey: w.apiKey }),
      400,
      'VALIDATION_FAILED',
      /after/,
    );
  });

  it('answers unknown and foreign ids 404, missing credentials 401, tenant tokens 403', async () => {
    const sub = await subscribe(w.apiKey, '/mine', { events: ['user.registered'] });
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const path of [
      `${SUBS}/${unknown}`,
      `${SUBS}/nope`,
      `${SUBS}/${sub.id}/deliveries/${unknown}`,
      `${SUBS}/${unknown}/deliveries`,
    ]) {
      expectError(await w.call('GET', path, { apiKey: w.apiKey }), 404, 'NOT_FOUND');
    }
    expectError(await w.call('GET', `${SUBS}/${sub.id}`, { apiKey: w.other.apiKey }), 404, 'NOT_FOUND');
    expectError(
      await w.call('PUT', `${SUBS}/${sub.id}`, { apiKey: w.other.apiKey, body: { enabled: false } }),
      404,
      'NOT_FOUND',
    );
    expectError(await w.call('DELETE', `${SUBS}/${sub.id}`, { apiKey: w.other.apiKey }), 404, 'NOT_FOUND');
    expectError(await w.call('POST', `${SUBS}/${sub.id}/rotate-secret`, { apiKey: w.other.apiKey }), 404, 'NOT_FOUND');
    expectError(await w.call('POST', `${SUBS}/${sub.id}/test`, { apiKey: w.other.apiKey }), 404, 'NOT_FOUND');
    expectError(await w.call('GET', `${SUBS}/${sub.id}/deliveries`, { apiKey: w.other.apiKey }), 404, 'NOT_FOUND');
    expectError(
      await w.call('POST', `${SUBS}/${sub.id}/deliveries/${unknown}/redeliver`, { apiKey: w.apiKey }),
      404,
      'NOT_FOUND',
    );
    expectError(await w.call('GET', SUBS, {}), 401, 'UNAUTHENTICATED');
    expectError(
      await w.call('POST', SUBS, { body: { url: `${rx.url}/x`, events: ['user.registered'] } }),
      401,
      'UNAUTHENTICATED',
    );
    expectError(await w.call('GET', SUBS, { token: w.token }), 403, 'FORBIDDEN');
    expect((await w.call('GET', `${SUBS}/${sub.id}`, { apiKey: w.apiKey })).status).toBe(200);
  });

  it('works over GraphQL', async () => {
    const gql = async (query: string, variables: Record<string, unknown> = {}) =>
      (await w.call('POST', '/graphql', { apiKey: w.apiKey, body: { query, variables } })).body;
    const made = await gql(
      'mutation($url: String!) { createEventSubscription(input: {url: $url, events: ["execution.failed"]}) { id secret events } }',
      { url: `${rx.url}/gql` },
    );
    expect(made.errors).toBeUndefined();
    const { id, secret } = made.data.createEventSubscription;
    const test = await gql('mutation($id: ID!) { testEventSubscription(id: $id) { id event } }', { id });
    const [got] = await rx.waitFor('/gql', 1);
    expect(verified(secret, got!).type).toBe('subscription.test');
    const log = await waitFor(async () => {
      const r = await gql(
        'query($id: ID!) { eventDeliveries(subscriptionId: $id) { items { id status attempts attemptLog { attempt statusCode } } } }',
        { id },
      );
      const items = r.data.eventDeliveries.items as { status: string }[];
      return items[0]?.status === 'succeeded' ? items : undefined;
    });
    expect(log[0]).toMatchObject({
      id: test.data.testEventSubscription.id,
      attempts: 1,
      attemptLog: [{ attempt: 1, statusCode: 200 }],
    });
  });
});
