// Many runs at once: executions and their step logs are written in shared statements and async runs are
// queued several to a scheduler job, yet every run is recorded in full and readable as soon as it is answered.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { startEdgeWorld, type EdgeWorld } from './functions-helpers.ts';
import { waitFor } from '../../support/wait-for.ts';

const N = 40;

describe('edge functions under concurrent load', () => {
  let w: EdgeWorld;

  beforeAll(async () => {
    // 40 runs at once, past the free plan's 10 concurrent runs (functions-plan-limits.test.ts tests that cap): the
    // account is on the self-hosted plan, which has none.
    w = await startEdgeWorld({ TESSERA_WEBHOOK_RATE_LIMIT: '1000', TESSERA_DEFAULT_PLAN: 'self-hosted' });
    const { call, apiKey } = w;
    expect(
      (await call('POST', '/edge/api/v1/secrets', { apiKey, body: { name: 'TOKEN', value: 'tok-secret-value' } }))
        .status,
    ).toBe(201);
    const fn = await call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: {
        name: 'echo',
        steps: [
          { name: 'shape', kind: 'Transform', expression: { n: '{{ input.body.n }}', token: '{{ secrets.TOKEN }}' } },
          {
            name: 'answer',
            kind: 'Transform',
            expression: { n: '{{ steps.shape.body.n }}', signed: "{{ steps.shape.body.token == 'tok-secret-value' }}" },
          },
        ],
      },
    });
    expect(fn.status).toBe(201);
    expect(
      (await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { slug: 'echo', function: 'echo' } })).status,
    ).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await w?.p.close();
  });

  const events = async (id: string) => {
    const res = await w.call('GET', `/edge/api/v1/executions/${id}/events`, { apiKey: w.apiKey });
    expect(res.status).toBe(200);
    return res.body.events as { step: string; type: string; input: unknown; output: unknown }[];
  };

  it('records every one of many concurrent webhook runs with its step log, readable as soon as it is answered', async () => {
    const answers = await Promise.all(
      Array.from({ length: N }, async (_, n) => {
        const res = await fetch(`${w.p.url}/webhooks/${w.projectId}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ n }),
        });
        const body = (await res.json()) as { n: number; signed: boolean };
        const id = res.headers.get('x-execution-id')!;
        // Read straight after the answer: the execution is already there.
        const detail = await w.call('GET', `/edge/api/v1/executions/${id}`, { apiKey: w.apiKey });
        return { status: res.status, body, id, detail };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(N).fill(200));
    expect(answers.map((a) => a.body)).toEqual(Array.from({ length: N }, (_, n) => ({ n, signed: true })));
    expect(new Set(answers.map((a) => a.id)).size).toBe(N);
    for (const [n, a] of answers.entries()) {
      expect(a.detail.status).toBe(200);
      expect(a.detail.body.execution).toMatchObject({
        status: 'succeeded',
        trigger: 'webhook',
        output: { n, signed: true },
        input: { body: { n } },
      });
    }
    for (const a of answers.slice(0, 5)) {
      const log = await events(a.id);
      expect(log.map((e) => `${e.step}:${e.type}`)).toEqual([
        'shape:started',
        'shape:succeeded',
        'answer:started',
        'answer:succeeded',
      ]);
      // The secret's value never shows in the step log.
      expect(JSON.stringify(log)).not.toContain('tok-secret-value');
      expect(JSON.stringify(log)).toContain('{{secrets.TOKEN}}');
    }
  }, 60_000);

  it('runs every one of many concurrent async invokes exactly once, each with its step log', async () => {
    const queued = await Promise.all(
      Array.from({ length: N }, async (_, n) => {
        const res = await w.call('POST', '/edge/api/v1/invoke/echo?async=true', { apiKey: w.apiKey, body: { n } });
        expect(res.status).toBe(202);
        return res.body.execution_id as string;
      }),
    );
    expect(new Set(queued).size).toBe(N);
    const done = await waitFor(
      async () => {
        const all = await Promise.all(
          queued.map(
            async (id) => (await w.call('GET', `/edge/api/v1/executions/${id}`, { apiKey: w.apiKey })).body.execution,
          ),
        );
        return all.every((e) => e.status === 'succeeded') ? all : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(done.map((e) => e.output)).toEqual(Array.from({ length: N }, (_, n) => ({ n, signed: true })));
    for (const id of queued.slice(0, 5))
      expect((await events(id)).map((e) => e.type)).toEqual(['started', 'succeeded', 'started', 'succeeded']);
    // Each ran once: two events per step, no more.
    const db = new pg.Client({ connectionString: w.p.tessera!.config.databaseUrl! });
    await db.connect();
    try {
      const { rows } = await db.query<{ n: number }>(
        'select coalesce(sum(jsonb_array_length(step_log)), 0)::int as n from function_executions where id = any($1::uuid[])',
        [queued],
      );
      expect(rows[0]!.n).toBe(N * 4);
    } finally {
      await db.end();
    }
  }, 60_000);
});
