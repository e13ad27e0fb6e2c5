// Database hooks in split mode: the data subgraph's process calls the functions subgraph's process through
// its router (signed context, which also carries the hook depth), hears `hooks.changed` from another process
// (broadcast), and the after-hook runs on the functions process's scheduler.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SPLIT_START_HOOK_MS, startSplit, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { createProject, dataCall, signIn, type Call } from '../data/data-support.ts';
import { waitFor } from '../../support/wait-for.ts';

const F = '/edge/api/v1';

let platform: TestPlatform;
let call: Call;

beforeAll(async () => {
  platform = await startSplit();
  call = client(platform.url);
}, SPLIT_START_HOOK_MS);

afterAll(async () => {
  await platform?.close();
});

describe('database hooks in split mode', () => {
  it('refuses and changes writes, audits after commit, bounds recursion and follows hook changes across processes', async () => {
    const project = await createProject(call, await signIn(call));
    const apiKey = project.apiKey;
    const data = dataCall(call, apiKey);
    const post = async (path: string, body: unknown) => {
      const res = await call('POST', `${F}${path}`, { apiKey, body });
      expect(res.status).toBe(201);
      return res.body;
    };
    expect(
      (
        await data('rawSQL', {
          sql: 'create table orders (id serial primary key, sku text not null, qty int not null)',
        })
      ).status,
    ).toBe(200);
    expect((await data('rawSQL', { sql: 'create table audit (order_id int, sku text)' })).status).toBe(200);
    expect((await data('rawSQL', { sql: 'create table loops (id serial primary key, n int)' })).status).toBe(200);
    await post('/functions', {
      name: 'check',
      steps: [
        {
          name: 'refuse',
          kind: 'Transform',
          when: '{{ input.body.row.qty > 100 }}',
          return: true,
          expression: { error: 'TOO_MANY', status: 422 },
        },
        {
          name: 'shape',
          kind: 'Transform',
          expression: { row: { sku: '{{ upper(input.body.row.sku) }}', qty: '{{ input.body.row.qty }}' } },
        },
      ],
    });
    await post('/functions', {
      name: 'audit',
      steps: [
        {
          name: 'w',
          kind: 'Database',
          query: {
            action: 'insert',
            table: 'audit',
            values: { order_id: '{{ input.body.row.id }}', sku: '{{ input.body.row.sku }}' },
          },
        },
      ],
    });
    await post('/functions', {
      name: 'loop',
      steps: [
        {
          name: 'again',
          kind: 'Database',
          query: { action: 'insert', table: 'loops', values: { n: '{{ input.body.row.n + 1 }}' } },
        },
      ],
    });

    const before = (await post('/hooks', { table: 'orders', timing: 'before', events: ['insert'], function: 'check' }))
      .hook;
    await post('/hooks', { table: 'orders', timing: 'after', events: ['insert'], function: 'audit' });
    await post('/hooks', { table: 'loops', timing: 'before', events: ['insert'], function: 'loop' });

    // The broadcast crosses processes: the data process hears of the new hooks (no stale "no hooks" answer).
    let i = 0;
    const refused = await waitFor(
      async () => {
        const r = await data('insert', { table: 'orders', values: { sku: `big${i++}`, qty: 500 } });
        return r.status !== 201 && r;
      },
      { timeoutMs: 15_000, intervalMs: 100, message: 'the data process to hear of the new hooks' },
    );
    expect({
      status: refused.status,
      code: refused.body.error?.code,
      error: refused.body.error?.details?.error,
    }).toEqual({ status: 422, code: 'HOOK_REJECTED', error: 'TOO_MANY' });

    const made = await data('insert', { table: 'orders', values: { sku: 'tea', qty: 2 } });
    expect(made.status).toBe(201);
    expect(made.body.rows[0]).toMatchObject({ sku: 'TEA', qty: 2 });
    await waitFor(
      async () =>
        (await data('find', { table: 'audit', where: { order_id: made.body.rows[0].id } })).body.rows?.[0]?.sku ===
        'TEA',
      { message: 'audit row' },
    );

    // The depth travels in the signed context from process to process.
    const loop = await data('insert', { table: 'loops', values: { n: 0 } });
    expect(loop.status).toBe(502);
    expect(loop.body.error.message).toMatch(/4 levels deep; at most 3/);
    expect((await data('rawSQL', { sql: 'select count(*)::int as n from loops' })).body.rows).toEqual([{ n: 0 }]);

    expect((await call('DELETE', `${F}/hooks?id=${before.id}`, { apiKey })).status).toBe(204);
    await waitFor(
      async () => (await data('insert', { table: 'orders', values: { sku: 'big-ok', qty: 500 } })).status === 201,
      { message: 'hook removed', timeoutMs: 15_000 },
    );
    expect((await data('find', { table: 'orders', where: { sku: 'big-ok' } })).body.rows).toHaveLength(1);
  }, 90_000);
});
