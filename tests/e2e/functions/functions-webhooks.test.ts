// The seed's webhook example as written, and the public receiver's limits, over HTTP.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEdgeWorld, expectError, type EdgeWorld } from './functions-helpers.ts';
import { waitFor } from '../../support/wait-for.ts';

const SIGNING_SECRET = 'whsec_test_0123456789';

describe('inbound webhooks (public receiver)', () => {
  let w: EdgeWorld;
  let sink: http.Server;
  let sinkUrl: string;
  const received: unknown[] = [];

  beforeAll(async () => {
    sink = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ stored: true, id: 'ord-1' }));
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/orders`;
    w = await startEdgeWorld({
      TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true',
      TESSERA_WEBHOOK_BODY_LIMIT: '4096',
      TESSERA_WEBHOOK_RATE_LIMIT: '40',
    });
    const { call, apiKey } = w;
    expect(
      (await call('POST', '/edge/api/v1/secrets', { apiKey, body: { name: 'SIGNING_SECRET', value: SIGNING_SECRET } }))
        .status,
    ).toBe(201);
    // The long work: an HTTP call, run asynchronously.
    const process = await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: {
        name: 'process-payment',
        steps: [
          {
            name: 'store',
            kind: 'HTTP',
            request: {
              method: 'POST',
              url: sinkUrl,
              body: { order: '{{ input.body.data.order }}', amount: '{{ input.body.data.amount }}' },
            },
          },
          { name: 'done', kind: 'Transform', expression: { order_id: '{{ steps.store.body.id }}' } },
        ],
      },
    });
    expect(process.status).toBe(201);
    const hook = await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: {
        name: 'payment-webhook',
        slug: 'payments',
        description: 'Verifies the signature, acknowledges, hands the work on',
        steps: [
          {
            name: 'verify',
            kind: 'Transform',
            expression:
              "{{ safeEqual(hmacSha256(secrets.SIGNING_SECRET, input.rawBody), input.headers['X-Signature']) }}",
          },
          {
            name: 'reject',
            kind: 'Transform',
            when: '{{ !steps.verify.body }}',
            return: true,
            expression: { error: 'INVALID_SIGNATURE', status: 401 },
          },
          { name: 'handoff', kind: 'Invoke', function: 'process-payment', async: true, input: '{{ input.body }}' },
          { name: 'ack', kind: 'Transform', expression: { received: true } },
        ],
      },
    });
    expect(hook.status).toBe(201);
    const receiver = await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { function: 'payment-webhook' } });
    expect(receiver.status).toBe(201);
    expect(receiver.body.webhook).toMatchObject({
      slug: 'payments',
      function: 'payment-webhook',
      url: expect.stringMatching(new RegExp(`/webhooks/${w.projectId}/payments$`)),
    });
  }, 90_000);

  afterAll(async () => {
    await w?.p.close();
    sink?.close();
  });

  const post = (path: string, raw: string, headers: Record<string, string> = {}) =>
    fetch(w.p.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: raw,
    }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      body: await r.json().catch(() => undefined),
    }));
  const sign = (raw: string) => crypto.createHmac('sha256', SIGNING_SECRET).update(raw).digest('hex');

  it('answers {"received": true} to a correctly signed payload and runs the long work asynchronously', async () => {
    const raw = JSON.stringify({ type: 'payment.succeeded', data: { order: 'A-17', amount: 990 } });
    const res = await post(`/webhooks/${w.projectId}/payments`, raw, { 'X-Signature': sign(raw) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    const hookExecution = res.headers.get('x-execution-id');
    expect(hookExecution).toMatch(/^[0-9a-f-]{36}$/);

    const { call, apiKey } = w;
    const child = await waitFor(async () => {
      const list = await call(
        'GET',
        '/edge/api/v1/executions?function=process-payment&trigger=function&status=succeeded',
        { apiKey },
      );
      return list.body.executions.find((e: { parent_id: string }) => e.parent_id === hookExecution);
    });
    expect(child).toMatchObject({
      trigger: 'function',
      trigger_ref: 'payment-webhook',
      status: 'succeeded',
      output: { order_id: 'ord-1' },
      input: { body: { type: 'payment.succeeded' } },
    });
    expect(received).toContainEqual({ order: 'A-17', amount: 990 });
    const events = await call('GET', `/edge/api/v1/executions/${child.id}/events`, { apiKey });
    expect(events.body.events.map((e: { step: string; type: string }) => `${e.step}:${e.type}`)).toEqual([
      'store:started',
      'store:succeeded',
      'done:started',
      'done:succeeded',
    ]);
    expect(events.body.events[0].input.request).toMatchObject({
      method: 'POST',
      url: expect.any(String),
      body: { order: 'A-17', amount: 990 },
    });

    const parent = await call('GET', `/edge/api/v1/executions/${hookExecution}`, { apiKey });
    expect(parent.body.execution).toMatchObject({
      function: 'payment-webhook',
      trigger: 'webhook',
      trigger_ref: 'payments',
      status: 'succeeded',
      output: { received: true },
      response_status: 200,
    });
    expect(parent.body.execution.input).toMatchObject({ method: 'POST', headers: { 'x-signature': sign(raw) } });
    const parentEvents = await call('GET', `/edge/api/v1/executions/${hookExecution}/events`, { apiKey });
    expect(parentEvents.body.events.find((e: { step: string }) => e.step === 'reject').type).toBe('skipped');
  });

  it('answers 401 {"error": "INVALID_SIGNATURE"} to a wrongly signed payload and starts nothing', async () => {
    const before = (await w.call('GET', '/edge/api/v1/executions?function=process-payment', { apiKey: w.apiKey })).body
      .executions.length;
    const raw = JSON.stringify({ type: 'payment.succeeded', data: { order: 'FORGED', amount: 1 } });
    const forged = await post(`/webhooks/${w.projectId}/payments`, raw, { 'X-Signature': sign('something else') });
    expect(forged.status).toBe(401);
    expect(forged.body).toEqual({ error: 'INVALID_SIGNATURE', status: 401 });
    const unsigned = await post(`/edge/webhooks/${w.projectId}/payments`, raw);
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toEqual({ error: 'INVALID_SIGNATURE', status: 401 });
    // A correctly signed payload sent after them is handed on and done: the forged ones would have been queued first.
    const marker = JSON.stringify({ type: 'payment.succeeded', data: { order: 'AFTER-FORGED', amount: 2 } });
    expect((await post(`/webhooks/${w.projectId}/payments`, marker, { 'X-Signature': sign(marker) })).status).toBe(200);
    await waitFor(() => received.some((r) => (r as { order?: string }).order === 'AFTER-FORGED'), {
      message: 'the signed payload sent after the forged ones',
    });
    expect(
      (await w.call('GET', '/edge/api/v1/executions?function=process-payment', { apiKey: w.apiKey })).body.executions
        .length,
    ).toBe(before + 1);
    expect(received).not.toContainEqual({ order: 'FORGED', amount: 1 });
  });

  it('is public: no X-Api-Key needed, and one given is ignored', async () => {
    const raw = '{"data":{"order":"B","amount":2}}';
    const res = await post(`/webhooks/${w.projectId}/payments`, raw, {
      'X-Signature': sign(raw),
      'X-Api-Key': 'tsk_garbage',
    });
    expect(res.status).toBe(200);
  });

  it('answers 404 for unknown slugs and projects', async () => {
    expectError(await w.call('POST', `/webhooks/${w.projectId}/nope`, { body: {} }), 404, 'NOT_FOUND');
    expectError(await w.call('POST', `/webhooks/${w.other.projectId}/payments`, { body: {} }), 404, 'NOT_FOUND');
    expectError(await w.call('POST', '/webhooks/not-a-uuid/payments', { body: {} }), 404, 'NOT_FOUND');
    expectError(await w.call('GET', `/webhooks/${w.projectId}/payments`), 404, 'ROUTE_NOT_FOUND');
  });

  it('hands the function the method, query, headers and raw body of any content type', async () => {
    const { call, apiKey } = w;
    await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: {
        name: 'echo',
        steps: [
          {
            name: 'out',
            kind: 'Transform',
            expression: {
              method: '{{ input.method }}',
              q: '{{ input.query.ref }}',
              body: '{{ input.body }}',
              raw: '{{ input.rawBody }}',
              ua: "{{ input.headers['User-Agent'] }}",
            },
          },
        ],
      },
    });
    await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { function: 'echo', slug: 'echo' } });
    const form = await fetch(`${w.p.url}/webhooks/${w.projectId}/echo?ref=abc`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Sender/1' },
      body: 'a=1&b=two',
    });
    expect(await form.json()).toEqual({
      method: 'POST',
      q: 'abc',
      body: { a: '1', b: 'two' },
      raw: 'a=1&b=two',
      ua: 'Sender/1',
    });
    const text = await fetch(`${w.p.url}/webhooks/${w.projectId}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(await text.json()).toMatchObject({ body: 'hello', raw: 'hello' });
    expectError(await call('POST', `/webhooks/${w.projectId}/echo`, { raw: '{not json' }), 400, 'BAD_REQUEST', /JSON/);
  });

  it('replays the stored answer for a repeated Idempotency-Key without running again', async () => {
    const { call, apiKey } = w;
    await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: { name: 'stamp', steps: [{ name: 'out', kind: 'Transform', expression: { id: '{{ uuid() }}' } }] },
    });
    await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { function: 'stamp' } });
    const first = await post(`/webhooks/${w.projectId}/stamp`, '{}', { 'Idempotency-Key': 'evt_1' });
    const again = await post(`/webhooks/${w.projectId}/stamp`, '{}', { 'Idempotency-Key': 'evt_1' });
    const other = await post(`/webhooks/${w.projectId}/stamp`, '{}', { 'Idempotency-Key': 'evt_2' });
    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('x-idempotent-replay')).toBe('true');
    expect(other.body.id).not.toBe(first.body.id);
    const runs = await call('GET', '/edge/api/v1/executions?function=stamp', { apiKey });
    expect(runs.body.executions).toHaveLength(2);
    expectError(
      await call('POST', `/webhooks/${w.projectId}/stamp`, {
        body: {},
        headers: { 'idempotency-key': 'x'.repeat(300) },
      }),
      400,
      'VALIDATION_FAILED',
      /Idempotency-Key/,
    );
  });

  it('refuses bodies over the webhook body limit with 413', async () => {
    expectError(
      await w.call('POST', `/webhooks/${w.projectId}/echo`, { raw: JSON.stringify({ x: 'y'.repeat(5000) }) }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('rate limits one receiver with 429 and a Retry-After', async () => {
    const { call, apiKey } = w;
    await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: { name: 'busy', steps: [{ name: 'out', kind: 'Transform', expression: 1 }] },
    });
    await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { function: 'busy' } });
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++)
      statuses.push((await call('POST', `/webhooks/${w.projectId}/busy`, { body: {} })).status);
    expect(statuses.slice(0, 40).every((s) => s === 200)).toBe(true);
    const limited = await call('POST', `/webhooks/${w.projectId}/busy`, { body: {} });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another receiver is not affected.
    expect((await call('POST', `/webhooks/${w.projectId}/echo`, { body: {} })).status).toBe(200);
  });

  it('answers 502 FUNCTION_FAILED with nothing but the execution id when the function fails (the caller is anonymous)', async () => {
    const { call, apiKey } = w;
    await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: {
        name: 'broken',
        steps: [{ name: 'call', kind: 'HTTP', request: { url: 'http://127.0.0.1:1/nothing', timeout_ms: 500 } }],
      },
    });
    await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { function: 'broken' } });
    const res = await call('POST', `/webhooks/${w.projectId}/broken`, { body: {} });
    expectError(res, 502, 'FUNCTION_FAILED', /its execution/);
    expect(res.body.error.message).not.toMatch(/call|127\.0\.0\.1/);
    expect(res.body.error.details).toEqual({ execution_id: expect.any(String) });
    const e = await call('GET', `/edge/api/v1/executions/${res.body.error.details.execution_id}`, { apiKey });
    expect(e.body.execution).toMatchObject({ status: 'failed', error: { step: 'call' } });
  });

  it('runs what the receiver, its function and the secrets are at the very next request after any change (receivers are cached)', async () => {
    const { call, apiKey } = w;
    const F = '/edge/api/v1';
    expect(
      (await call('POST', `${F}/secrets`, { apiKey, body: { name: 'GREETING', value: 'hello-one' } })).status,
    ).toBe(201);
    const made = await call('POST', `${F}/functions`, {
      apiKey,
      body: {
        name: 'cached',
        steps: [
          {
            name: 'out',
            kind: 'Transform',
            expression: {
              v: 1,
              greeting:
                "{{ secrets.GREETING == 'hello-one' ? 'one' : secrets.GREETING == 'hello-two' ? 'two' : null }}",
            },
          },
        ],
      },
    });
    expect(made.status).toBe(201);
    const fnId = made.body.function.id as string;
    const receiver = await call('POST', `${F}/webhooks`, { apiKey, body: { function: 'cached' } });
    expect(receiver.status).toBe(201);
    const hit = async () => await call('POST', `/webhooks/${w.projectId}/cached`, { body: {} });
    // Twice: the second answer comes from the cached receiver. (The function tells which secret it saw without
    // answering it: a secret's value in an answer is redacted.)
    expect((await hit()).body).toEqual({ v: 1, greeting: 'one' });
    expect((await hit()).body).toEqual({ v: 1, greeting: 'one' });
    // A new version of the function.
    const steps = [
      {
        name: 'out',
        kind: 'Transform',
        expression: {
          v: 2,
          greeting: "{{ secrets.GREETING == 'hello-one' ? 'one' : secrets.GREETING == 'hello-two' ? 'two' : null }}",
        },
      },
    ];
    expect((await call('PUT', `${F}/functions/${fnId}`, { apiKey, body: { name: 'cached', steps } })).status).toBe(200);
    expect((await hit()).body).toEqual({ v: 2, greeting: 'one' });
    // A replaced secret.
    expect(
      (await call('POST', `${F}/secrets`, { apiKey, body: { name: 'GREETING', value: 'hello-two' } })).status,
    ).toBe(201);
    expect((await hit()).body).toEqual({ v: 2, greeting: 'two' });
    // A deleted secret: the template sees none.
    expect((await call('DELETE', `${F}/secrets?name=GREETING`, { apiKey })).status).toBe(204);
    const without = await hit();
    expect(without.body).toEqual({ v: 2, greeting: null });
    // A deleted receiver: 404 at once; made again for another function: that one runs.
    expect((await call('DELETE', `${F}/webhooks?id=${receiver.body.webhook.id as string}`, { apiKey })).status).toBe(
      204,
    );
    expectError(await hit(), 404, 'NOT_FOUND');
    await call('POST', `${F}/functions`, {
      apiKey,
      body: { name: 'cached-other', steps: [{ name: 'out', kind: 'Transform', expression: { other: true } }] },
    });
    expect(
      (await call('POST', `${F}/webhooks`, { apiKey, body: { slug: 'cached', function: 'cached-other' } })).status,
    ).toBe(201);
    expect((await hit()).body).toEqual({ other: true });
    expect((await hit()).body).toEqual({ other: true });
    // A deleted function takes its receiver with it.
    const otherId = (await call('GET', `${F}/functions`, { apiKey })).body.functions.find(
      (f: { name: string }) => f.name === 'cached-other',
    ).id as string;
    expect((await call('DELETE', `${F}/functions/${otherId}`, { apiKey })).status).toBe(204);
    expectError(await hit(), 404, 'NOT_FOUND');
  });

  it('invokes what the function and the secrets are at the very next request after any change (invoked functions are cached)', async () => {
    const { call, apiKey } = w;
    const F = '/edge/api/v1';
    const pk = (await call('GET', `/auth/api/v1/projects/${w.projectId}`, { token: w.token })).body.project
      .publishable_key as string;
    expect((await call('POST', `${F}/secrets`, { apiKey, body: { name: 'SALUTE', value: 'salute-one' } })).status).toBe(
      201,
    );
    const definition = (v: number, isPublic: boolean) => ({
      name: 'cached-invoke',
      public: isPublic,
      steps: [
        {
          name: 'out',
          kind: 'Transform',
          expression: {
            v,
            salute: "{{ secrets.SALUTE == 'salute-one' ? 'one' : secrets.SALUTE == 'salute-two' ? 'two' : null }}",
          },
        },
      ],
    });
    const made = await call('POST', `${F}/functions`, { apiKey, body: definition(1, true) });
    expect(made.status).toBe(201);
    const fnId = made.body.function.id as string;
    const invoke = async (key = apiKey) => await call('POST', `${F}/invoke/cached-invoke`, { apiKey: key, body: {} });
    // Twice each: the second answer comes from the cached function.
    for (const key of [apiKey, apiKey, pk, pk]) expect((await invoke(key)).body).toEqual({ v: 1, salute: 'one' });
    // A new version, no longer public: the publishable key is refused at once.
    expect((await call('PUT', `${F}/functions/${fnId}`, { apiKey, body: definition(2, false) })).status).toBe(200);
    expect((await invoke()).body).toEqual({ v: 2, salute: 'one' });
    expectError(await invoke(pk), 403, 'FORBIDDEN');
    // A replaced secret, then a deleted one (sync, dry run and async runs all see it).
    expect((await call('POST', `${F}/secrets`, { apiKey, body: { name: 'SALUTE', value: 'salute-two' } })).status).toBe(
      201,
    );
    expect((await invoke()).body).toEqual({ v: 2, salute: 'two' });
    const dry = await call('POST', `${F}/invoke/cached-invoke?dry_run=true`, { apiKey, body: {} });
    expect(dry.body).toMatchObject({ dry_run: true, output: { v: 2, salute: 'two' } });
    expect((await call('DELETE', `${F}/secrets?name=SALUTE`, { apiKey })).status).toBe(204);
    expect((await invoke()).body).toEqual({ v: 2, salute: null });
    const queued = await call('POST', `${F}/invoke/cached-invoke?async=true`, { apiKey, body: {} });
    expect(queued.status).toBe(202);
    const ran = await waitFor(
      async () => {
        const e = await call('GET', `${F}/executions/${queued.body.execution_id as string}`, { apiKey });
        return e.body.execution?.status === 'succeeded' ? e.body.execution : undefined;
      },
      { message: 'the async run' },
    );
    expect(ran.output).toEqual({ v: 2, salute: null });
    // Deleted: 404 at once, also to the other project's key never having seen it.
    expect((await call('DELETE', `${F}/functions/${fnId}`, { apiKey })).status).toBe(204);
    expectError(await invoke(), 404, 'NOT_FOUND');
    expectError(await invoke(w.other.apiKey), 404, 'NOT_FOUND');
  });
});
