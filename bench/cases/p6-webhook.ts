// P6: a public inbound webhook (`POST /webhooks/:project_id/:slug`, no API key) running a 3-step function
// synchronously: Transform (shape the row from the body) → Database (insert it into the data project's
// `bench_inserts` table, the same row P2 inserts) → Transform (the answer). Every run records its
// execution and its step log. The peer is the floor's plain `POST /insert` of the same row.
import { client } from '../../tests/support/http.ts';
import type { BenchCase, Target } from './types.ts';
import { check, dataProject, floorInsert, INSERT_ROW, INSERT_TABLE } from './p1-p2-data.ts';

const FUNCTION = 'p6-webhook-insert';
const SLUG = 'p6-insert';

/** The function: Transform → Database (insert) → Transform. */
export const P6_STEPS = [
  {
    name: 'shape',
    kind: 'Transform',
    expression: { category: '{{ input.body.category }}', n: '{{ input.body.n }}', title: '{{ input.body.title }}' },
  },
  {
    name: 'save',
    kind: 'Database',
    query: { action: 'insert', table: INSERT_TABLE, values: '{{ steps.shape.body }}' },
  },
  {
    name: 'answer',
    kind: 'Transform',
    expression: { count: '{{ steps.save.body.count }}', row: '{{ steps.save.body.rows[0] }}' },
  },
];

export const p6: BenchCase = {
  id: 'P6',
  title:
    'Public webhook POST /webhooks/:project_id/:slug → 3-step function (Transform, Database insert, Transform), synchronous',
  peer: 'node:http + pg floor (the same insert ... returning *, platform user)',
  goal: '>= 0.5x floor, p50 <= 5 ms',
  async setup(ctx) {
    const p = await dataProject(ctx);
    const call = client(ctx.tessera);
    const fn = await call('POST', '/edge/api/v1/functions', {
      apiKey: p.apiKey,
      body: { name: FUNCTION, steps: P6_STEPS },
    });
    if (fn.status !== 201) throw new Error(`P6 create function: ${fn.status} ${JSON.stringify(fn.body)}`);
    const hook = await call('POST', '/edge/api/v1/webhooks', {
      apiKey: p.apiKey,
      body: { slug: SLUG, function: FUNCTION },
    });
    if (hook.status !== 201) throw new Error(`P6 create webhook receiver: ${hook.status} ${JSON.stringify(hook.body)}`);
    const tessera: Target = {
      url: `${ctx.tessera}/webhooks/${p.projectId}/${SLUG}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(INSERT_ROW),
    };
    const targets = { tessera, peer: floorInsert(ctx, p) };
    // The answer is the inserted row, and the execution with its three steps is recorded.
    const res = await fetch(tessera.url, { method: 'POST', headers: tessera.headers, body: tessera.body as string });
    const body = (await res.json()) as { count?: number; row?: { title?: string } };
    if (res.status !== 200 || body.count !== 1 || body.row?.title !== INSERT_ROW.title)
      throw new Error(`P6 webhook: ${res.status} ${JSON.stringify(body)}`);
    const executionId = res.headers.get('x-execution-id');
    const events = await call('GET', `/edge/api/v1/executions/${executionId}/events`, { apiKey: p.apiKey });
    const succeeded = (events.body?.events ?? []).filter((e: { type: string }) => e.type === 'succeeded').length;
    if (events.status !== 200 || succeeded !== 3)
      throw new Error(`P6 execution events: ${events.status} ${JSON.stringify(events.body)}`);
    await check(targets.peer, 201, 'P6 floor insert');
    return targets;
  },
};
