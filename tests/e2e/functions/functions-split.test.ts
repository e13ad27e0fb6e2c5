// Edge functions in split mode: the public webhook receiver on the front door, the functions subgraph in
// its own process, an asynchronous hand-off through the scheduler, and a Database step that reaches the
// data subgraph (another process) through the router; outbound event deliveries of the data subgraph's writes,
// idempotent invoke and replay across the processes.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import { SPLIT_START_HOOK_MS, startSplit, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { startReceiver, verified, type Receiver } from './event-receiver.ts';
import { waitFor } from '../../support/wait-for.ts';

const SECRET = 'whsec_split_0123456789';
let p: TestPlatform;
let call: ReturnType<typeof client>;
let projectId: string;
let apiKey: string;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  // Event deliveries go to a receiver on loopback.
  p = await startSplit({ TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true' });
  call = client(p.url);
  const email = `edge-split-${Date.now()}@example.com`;
  await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } });
  const token = (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } })).body
    .access_token as string;
  const made = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Split edge' } });
  expect(made.status).toBe(201);
  projectId = made.body.project.id as string;
  apiKey = made.body.project.api_key as string;
  // The data subgraph makes the project's schema from the project.created event.
  await waitFor(
    async () =>
      (await call('POST', '/v1/rawSQL', { apiKey, body: { sql: 'select 1 as ok' } })).status === 200 ? true : undefined,
    { timeoutMs: 30_000 },
  );
  expect(
    (
      await call('POST', '/v1/rawSQL', {
        apiKey,
        body: { sql: 'create table payments (id serial primary key, ref text not null, amount int not null)' },
      })
    ).status,
  ).toBe(200);
  expect(
    (await call('POST', '/edge/api/v1/secrets', { apiKey, body: { name: 'SIGNING_SECRET', value: SECRET } })).status,
  ).toBe(201);
  const store = await call('POST', '/edge/api/v1/functions', {
    apiKey,
    body: {
      name: 'store-payment',
      steps: [
        {
          name: 'insert',
          kind: 'Database',
          query: {
            action: 'insert',
            table: 'payments',
            values: { ref: '{{ input.body.ref }}', amount: '{{ input.body.amount }}' },
          },
        },
        { name: 'out', kind: 'Transform', expression: { id: '{{ steps.insert.body.rows[0].id }}' } },
      ],
    },
  });
  expect({ status: store.status, body: store.body }).toMatchObject({ status: 201 });
  const hook = await call('POST', '/edge/api/v1/functions', {
    apiKey,
    body: {
      name: 'receive',
      slug: 'payments',
      steps: [
        {
          name: 'verify',
          kind: 'Transform',
          expression:
            "{{ safeEqual(hmacSha256(secrets.SIGNING_SECRET, input.rawBody), input.headers['x-signature']) }}",
        },
        {
          name: 'reject',
          kind: 'Transform',
          when: '{{ !steps.verify.body }}',
          return: true,
          expression: { error: 'INVALID_SIGNATURE', status: 401 },
        },
        { name: 'handoff', kind: 'Invoke', function: 'store-payment', async: true, input: '{{ input.body }}' },
        { name: 'ack', kind: 'Transform', expression: { received: true } },
      ],
    },
  });
  expect({ status: hook.status, body: hook.body }).toMatchObject({ status: 201 });
  expect((await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { function: 'receive' } })).status).toBe(201);
}, SPLIT_START_HOOK_MS);

afterAll(async () => {
  await p?.close();
  await rx?.close();
});

const post = async (raw: string, headers: Record<string, string>) => {
  const r = await fetch(`${p.url}/webhooks/${projectId}/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });
  return { status: r.status, body: (await r.json()) as unknown, execution: r.headers.get('x-execution-id') };
};

it('verifies a signed webhook, answers at once, and stores the payment through an asynchronous Database step', async () => {
  const raw = JSON.stringify({ ref: 'S-1', amount: 420 });
  const res = await post(raw, { 'x-signature': crypto.createHmac('sha256', SECRET).update(raw).digest('hex') });
  expect(res).toMatchObject({ status: 200, body: { received: true } });
  const child = await waitFor(
    async () => {
      const list = await call('GET', '/edge/api/v1/executions?function=store-payment&status=succeeded', { apiKey });
      return list.body.executions.find((e: { parent_id: string }) => e.parent_id === res.execution);
    },
    { timeoutMs: 30_000 },
  );
  expect(child.output).toEqual({ id: expect.any(Number) });
  const rows = await call('POST', '/v1/find', { apiKey, body: { table: 'payments', where: { ref: 'S-1' } } });
  expect(rows.body.rows).toEqual([{ id: child.output.id, ref: 'S-1', amount: 420 }]);
}, 60_000);

it('refuses a wrongly signed webhook with 401 and stores nothing', async () => {
  const raw = JSON.stringify({ ref: 'FORGED', amount: 1 });
  const res = await post(raw, { 'x-signature': 'deadbeef' });
  expect(res).toMatchObject({ status: 401, body: { error: 'INVALID_SIGNATURE', status: 401 } });
  await new Promise((r) => setTimeout(r, 1000)); // the asynchronous Database step a forged call would start has no later marker here
  expect(
    (await call('POST', '/v1/find', { apiKey, body: { table: 'payments', where: { ref: 'FORGED' } } })).body.rows,
  ).toEqual([]);
  expect((await post(raw, {})).status).toBe(401);
}, 30_000);

it('answers 404 for an unknown slug across processes', async () => {
  const r = await fetch(`${p.url}/webhooks/${projectId}/nope`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(r.status).toBe(404);
  expect(((await r.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
});

it('honours a rotated signing secret and a removed receiver at the very next webhook (cached receivers)', async () => {
  const raw = JSON.stringify({ ref: 'S-ROT', amount: 5 });
  const sign = (secret: string) => crypto.createHmac('sha256', secret).update(raw).digest('hex');
  expect((await post(raw, { 'x-signature': sign(SECRET) })).status).toBe(200);
  const rotated = `${SECRET}-rotated`;
  expect(
    (await call('POST', '/edge/api/v1/secrets', { apiKey, body: { name: 'SIGNING_SECRET', value: rotated } })).status,
  ).toBe(201);
  expect((await post(raw, { 'x-signature': sign(SECRET) })).status).toBe(401);
  expect((await post(raw, { 'x-signature': sign(rotated) })).status).toBe(200);
  const receivers = (await call('GET', '/edge/api/v1/webhooks', { apiKey })).body.webhooks as {
    id: string;
    slug: string;
  }[];
  const id = receivers.find((r) => r.slug === 'payments')!.id;
  expect((await call('DELETE', `/edge/api/v1/webhooks?id=${id}`, { apiKey })).status).toBe(204);
  expect((await post(raw, { 'x-signature': sign(rotated) })).status).toBe(404);
}, 30_000);

it("delivers the data subgraph's committed rows to a subscription, signed, from the functions process", async () => {
  const sub = await call('POST', '/edge/api/v1/event-subscriptions', {
    apiKey,
    body: { url: `${rx.url}/split`, events: ['row.inserted'], tables: ['payments'] },
  });
  expect(sub.status).toBe(201);
  expect(
    (await call('POST', '/v1/insert', { apiKey, body: { table: 'payments', values: { ref: 'EV-1', amount: 7 } } }))
      .status,
  ).toBe(201);
  const [got] = await rx.waitFor('/split', 1, 30_000);
  expect(verified(sub.body.event_subscription.secret, got!).data).toMatchObject({
    project_id: projectId,
    table: 'payments',
    row: { ref: 'EV-1', amount: 7 },
  });
}, 60_000);

it('runs an idempotent invoke once and replays a failed execution from its failed step', async () => {
  const a = await call('POST', '/edge/api/v1/invoke/store-payment', {
    apiKey,
    body: { ref: 'IDEM-1', amount: 1 },
    headers: { 'Idempotency-Key': 'split-1' },
  });
  const b = await call('POST', '/edge/api/v1/invoke/store-payment', {
    apiKey,
    body: { ref: 'IDEM-1', amount: 1 },
    headers: { 'Idempotency-Key': 'split-1' },
  });
  expect(a.status).toBe(200);
  expect(b.body).toEqual(a.body);
  expect(b.headers.get('x-idempotent-replay')).toBe('true');
  expect(
    (await call('POST', '/v1/find', { apiKey, body: { table: 'payments', where: { ref: 'IDEM-1' } } })).body.rows,
  ).toHaveLength(1);
  // No amount: the insert fails; the replay with the amount succeeds.
  const failed = await call('POST', '/edge/api/v1/invoke/store-payment', { apiKey, body: { ref: 'REPLAY-1' } });
  expect(failed.status).toBe(502);
  const replay = await call('POST', `/edge/api/v1/executions/${failed.body.error.details.execution_id}/replay`, {
    apiKey,
    body: { input: { ref: 'REPLAY-1', amount: 3 } },
  });
  expect(replay.body.execution).toMatchObject({
    status: 'succeeded',
    replay_of: failed.body.error.details.execution_id,
    replay_from_step: 'insert',
  });
}, 60_000);
