// Replay of an execution from a step, and the diff of two executions, over REST and GraphQL. The function charges a
// local payment server (a side effect), then saves an order (which fails without a quantity), then answers. A replay
// from the failed step with a fixed input succeeds without charging again; secrets are read fresh and never
// recorded; the version the execution ran is replayed unless the current one is asked for.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectError, startEdgeWorld, type EdgeWorld } from './functions-helpers.ts';
import { waitFor } from '../../support/wait-for.ts';

let w: EdgeWorld;
let pay: http.Server;
let payUrl: string;
const charges: { authorization: string | undefined; body: unknown }[] = [];
let slowRelease: (() => void) | undefined;

const E = '/edge/api/v1';
const steps = (answerExpression: Record<string, unknown>) => [
  {
    name: 'charge',
    kind: 'HTTP',
    request: {
      method: 'POST',
      url: `${payUrl}/charge`,
      headers: { authorization: 'Bearer {{ secrets.PAY_TOKEN }}' },
      body: { amount: '{{ input.body.amount }}' },
    },
  },
  {
    name: 'save',
    kind: 'Database',
    query: {
      action: 'insert',
      table: 'orders',
      values: { charge_id: '{{ steps.charge.body.charge_id }}', qty: '{{ input.body.qty }}' },
    },
  },
  { name: 'answer', kind: 'Transform', expression: answerExpression },
];

const api = (method: string, path: string, body?: unknown) =>
  w.call(method, path, { apiKey: w.apiKey, ...(body === undefined ? {} : { body }) });

/** Invokes `checkout` without a quantity: the charge happens, the save fails. Answers the failed execution's id. */
async function failedCheckout(amount: number): Promise<string> {
  const res = await api('POST', `${E}/invoke/checkout`, { amount });
  expectError(res, 502, 'FUNCTION_FAILED');
  expect(res.body.error.details.step).toBe('save');
  return res.body.error.details.execution_id as string;
}

beforeAll(async () => {
  pay = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      if (req.url === '/slow') {
        slowRelease = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow": true}');
        return;
      }
      charges.push({ authorization: req.headers.authorization, body: JSON.parse(text || 'null') });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ charge_id: charges.length, token_seen: req.headers.authorization }));
    });
  });
  await new Promise<void>((r) => pay.listen(0, '127.0.0.1', r));
  payUrl = `http://127.0.0.1:${(pay.address() as AddressInfo).port}`;
  w = await startEdgeWorld({ TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true' });
  expect(
    (
      await api('POST', '/v1/rawSQL', {
        sql: 'create table orders (id serial primary key, charge_id int not null, qty int not null)',
      })
    ).status,
  ).toBe(200);
  expect((await api('POST', `${E}/secrets`, { name: 'PAY_TOKEN', value: 'pay-token-one-1111' })).status).toBe(201);
  expect(
    (
      await api('POST', `${E}/functions`, {
        name: 'checkout',
        steps: steps({ order: '{{ steps.save.body.rows[0].id }}', charge: '{{ steps.charge.body.charge_id }}', v: 1 }),
      })
    ).status,
  ).toBe(201);
}, 120_000);

afterAll(async () => {
  await w?.p.close();
  await new Promise((r) => pay.close(r));
});

describe('replay from a step', () => {
  it('replays the failed step with a fixed input: it succeeds and the earlier side effect is not repeated', async () => {
    const before = charges.length;
    const original = await failedCheckout(5);
    expect(charges.length).toBe(before + 1);
    const replay = await api('POST', `${E}/executions/${original}/replay`, { input: { amount: 5, qty: 2 } });
    expect(replay.status).toBe(201);
    const e = replay.body.execution;
    expect(e).toMatchObject({
      status: 'succeeded',
      trigger: 'replay',
      trigger_ref: original,
      replay_of: original,
      replay_from_step: 'save',
      function: 'checkout',
      function_version: 1,
    });
    expect(e.output).toEqual({ order: expect.any(Number), charge: before + 1, v: 1 });
    expect(e.input.body).toEqual({ amount: 5, qty: 2 });
    // No second charge: the charge step's recorded result was reused.
    expect(charges.length).toBe(before + 1);
    const events = (await api('GET', `${E}/executions/${e.id}/events`)).body.events as {
      step: string;
      type: string;
      output: unknown;
    }[];
    expect(events.map((x) => `${x.step}:${x.type}`)).toEqual([
      'charge:reused',
      'save:started',
      'save:succeeded',
      'answer:started',
      'answer:succeeded',
    ]);
    expect(events[0]!.output).toMatchObject({ status: 200, body: { charge_id: before + 1 } });
    // The replay is listed under its trigger.
    const listed = await api('GET', `${E}/executions?trigger=replay`);
    expect((listed.body.executions as { id: string }[]).map((x) => x.id)).toContain(e.id);
  });

  it('diffs the original and its replay step by step', async () => {
    const original = await failedCheckout(7);
    const replayed = (await api('POST', `${E}/executions/${original}/replay`, { input: { amount: 7, qty: 1 } })).body
      .execution;
    const res = await api('GET', `${E}/executions/${original}/diff/${replayed.id}`);
    expect(res.status).toBe(200);
    const d = res.body.diff;
    expect(d.from).toMatchObject({ id: original, status: 'failed', trigger: 'invoke' });
    expect(d.to).toMatchObject({ id: replayed.id, status: 'succeeded', trigger: 'replay', replay_of: original });
    expect(d.status).toEqual({ changed: true, from: 'failed', to: 'succeeded' });
    expect(d.input).toMatchObject({
      changed: true,
      from: { body: { amount: 7 } },
      to: { body: { amount: 7, qty: 1 } },
    });
    expect(d.output).toMatchObject({ changed: true, from: null, to: { charge: expect.any(Number) } });
    expect(d.error.from).toMatchObject({ step: 'save' });
    expect(d.error.to).toBeNull();
    expect(typeof d.duration_ms.delta_ms).toBe('number');
    const byStep: Record<string, any> = Object.fromEntries((d.steps as { step: string }[]).map((s) => [s.step, s])); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(d.steps.map((s: { step: string }) => s.step)).toEqual(['charge', 'save', 'answer']);
    expect(byStep.charge.status).toEqual({ changed: true, from: 'succeeded', to: 'reused' });
    expect(byStep.charge.output.changed).toBe(false);
    expect(byStep.save.status).toEqual({ changed: true, from: 'failed', to: 'succeeded' });
    expect(byStep.save.input).toMatchObject({ changed: true });
    expect(byStep.save.from).toMatchObject({
      kind: 'Database',
      status: 'failed',
      attempts: 1,
      error: { code: expect.any(String) },
    });
    expect(byStep.answer.from).toBeNull();
    expect(byStep.answer.to).toMatchObject({ status: 'succeeded', output: { body: { charge: expect.any(Number) } } });
    expect(byStep.answer.status).toEqual({ changed: true, from: null, to: 'succeeded' });
  });

  it('runs the chosen step and what follows, reading secrets as they are now and never recording them', async () => {
    const original = await failedCheckout(9);
    const before = charges.length;
    expect((await api('POST', `${E}/secrets`, { name: 'PAY_TOKEN', value: 'pay-token-two-2222' })).status).toBe(201);
    const replay = await api('POST', `${E}/executions/${original}/replay`, {
      from_step: 'charge',
      input: { amount: 9, qty: 3 },
    });
    expect(replay.body.execution).toMatchObject({ status: 'succeeded', replay_from_step: 'charge' });
    expect(charges.length).toBe(before + 1);
    expect(charges[charges.length - 1]!.authorization).toBe('Bearer pay-token-two-2222');
    const events = JSON.stringify((await api('GET', `${E}/executions/${replay.body.execution.id}/events`)).body);
    expect(events).not.toContain('pay-token-two-2222');
    expect(events).toContain('{{secrets.PAY_TOKEN}}');
    const diff = JSON.stringify(
      (await api('GET', `${E}/executions/${original}/diff/${replay.body.execution.id}`)).body,
    );
    expect(diff).not.toMatch(/pay-token-(one|two)/);
  });

  it('replays the version the execution ran, or the current one on request', async () => {
    const original = await failedCheckout(11);
    const fn = (await api('GET', `${E}/functions?first=100`)).body.functions.find(
      (f: { name: string }) => f.name === 'checkout',
    );
    expect(
      (await api('PUT', `${E}/functions/${fn.id}`, { name: 'checkout', steps: steps({ v: 2 }) })).body.function.version,
    ).toBe(2);
    const old = await api('POST', `${E}/executions/${original}/replay`, { input: { amount: 11, qty: 1 } });
    expect(old.body.execution).toMatchObject({ status: 'succeeded', function_version: 1, output: { v: 1 } });
    const now = await api('POST', `${E}/executions/${original}/replay`, {
      input: { amount: 11, qty: 1 },
      use_current_definition: true,
    });
    expect(now.body.execution).toMatchObject({ status: 'succeeded', function_version: 2, output: { v: 2 } });
  });

  it('keeps the recorded input when none is given, and answers a replay that fails again as a failed execution', async () => {
    const original = await failedCheckout(13);
    const again = await api('POST', `${E}/executions/${original}/replay`);
    expect(again.status).toBe(201);
    expect(again.body.execution).toMatchObject({
      status: 'failed',
      replay_of: original,
      error: { step: 'save' },
      input: { body: { amount: 13 } },
    });
  });

  it('refuses what cannot be replayed: unknown steps, steps without a recorded result, running executions', async () => {
    const original = await failedCheckout(15);
    expectError(
      await api('POST', `${E}/executions/${original}/replay`, { from_step: 'nope' }),
      400,
      'VALIDATION_FAILED',
      /from_step/,
    );
    expectError(await api('POST', `${E}/executions/${original}/replay`, { from_step: 5 }), 400, 'BAD_USER_INPUT');
    expectError(
      await api('POST', `${E}/executions/${original}/replay`, { from_step: 'answer' }),
      409,
      'CONFLICT',
      /"save" has no recorded result/,
    );
    expectError(await api('POST', `${E}/executions/${original}/replay`, { unknown_field: 1 }), 400, 'BAD_USER_INPUT');
    expectError(await api('POST', `${E}/executions/${original}/replay`, [1, 2]), 400, 'BAD_REQUEST');
    // Still running: an async run waiting on a slow server.
    expect(
      (
        await api('POST', `${E}/functions`, {
          name: 'slow',
          steps: [{ name: 'wait', kind: 'HTTP', request: { url: `${payUrl}/slow`, timeout_ms: 20_000 } }],
          timeout_ms: 30_000,
        })
      ).status,
    ).toBe(201);
    const queued = await api('POST', `${E}/invoke/slow?async=true`, {});
    const running = queued.body.execution_id as string;
    await waitFor(async () =>
      (await api('GET', `${E}/executions/${running}`)).body.execution.status === 'running' ? true : undefined,
    );
    expectError(await api('POST', `${E}/executions/${running}/replay`, {}), 409, 'CONFLICT', /still running/);
    slowRelease?.();
    await waitFor(async () =>
      (await api('GET', `${E}/executions/${running}`)).body.execution.status === 'succeeded' ? true : undefined,
    );
  });

  it('answers 404 for unknown or foreign executions, 401 without credentials, and 404 when the function was deleted', async () => {
    const original = await failedCheckout(17);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectError(await api('POST', `${E}/executions/${unknown}/replay`, {}), 404, 'NOT_FOUND');
    expectError(await api('POST', `${E}/executions/not-a-uuid/replay`, {}), 404, 'NOT_FOUND');
    expectError(
      await w.call('POST', `${E}/executions/${original}/replay`, { apiKey: w.other.apiKey, body: {} }),
      404,
      'NOT_FOUND',
    );
    expectError(await w.call('POST', `${E}/executions/${original}/replay`, { body: {} }), 401, 'UNAUTHENTICATED');
    expectError(
      await w.call('GET', `${E}/executions/${original}/diff/${original}`, { apiKey: w.other.apiKey }),
      404,
      'NOT_FOUND',
    );
    expectError(await api('GET', `${E}/executions/${original}/diff/${unknown}`), 404, 'NOT_FOUND');
    expectError(await w.call('GET', `${E}/executions/${original}/diff/${original}`, {}), 401, 'UNAUTHENTICATED');
    expectError(
      await w.call('GET', `${E}/executions/${original}/diff/${original}`, { token: w.token }),
      403,
      'FORBIDDEN',
    );
    // A function deleted since cannot be replayed.
    expect(
      (
        await api('POST', `${E}/functions`, {
          name: 'gone',
          steps: [{ name: 'boom', kind: 'Database', query: { action: 'find', table: 'no_such_table' } }],
        })
      ).status,
    ).toBe(201);
    const failed = await api('POST', `${E}/invoke/gone`, {});
    const gone = (await api('GET', `${E}/functions?first=100`)).body.functions.find(
      (f: { name: string }) => f.name === 'gone',
    );
    expect((await api('DELETE', `${E}/functions/${gone.id}`)).status).toBe(204);
    expectError(
      await api('POST', `${E}/executions/${failed.body.error.details.execution_id}/replay`, {}),
      404,
      'NOT_FOUND',
      /deleted/,
    );
  });

  it('replays and diffs over GraphQL', async () => {
    const original = await failedCheckout(19);
    const gql = async (query: string, variables: Record<string, unknown>) =>
      (await w.call('POST', '/graphql', { apiKey: w.apiKey, body: { query, variables } })).body;
    const r = await gql(
      'mutation($id: ID!) { replayFunctionExecution(id: $id, input: {fromStep: "save", input: {amount: 19, qty: 4}}) { id status replayOf replayFromStep output } }',
      { id: original },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.replayFunctionExecution).toMatchObject({
      status: 'succeeded',
      replayOf: original,
      replayFromStep: 'save',
    });
    const d = await gql(
      'query($a: ID!, $b: ID!) { functionExecutionDiff(id: $a, other: $b) { status { changed from to } steps { step status { from to } } } }',
      {
        a: original,
        b: r.data.replayFunctionExecution.id,
      },
    );
    expect(d.data.functionExecutionDiff.status).toEqual({ changed: true, from: 'failed', to: 'succeeded' });
    expect(d.data.functionExecutionDiff.steps.map((s: { step: string }) => s.step)).toEqual([
      'charge',
      'save',
      'answer',
    ]);
  });
});
