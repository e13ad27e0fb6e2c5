// The `Database` step end to end over HTTP: a function Transform → Database insert → Transform, its row
// visible through the data API; every action reachable; data API errors as failed steps naming the data
// error code; the project's isolation; dry runs rolled back; bad steps refused at save time.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startEdgeWorld, expectError, type EdgeWorld } from './functions-helpers.ts';
import { dropLeftoverRoles } from '../data/data-support.ts';
import { waitFor } from '../../support/wait-for.ts';

const F = '/edge/api/v1';

describe('Database steps', () => {
  let w: EdgeWorld;
  const as = (apiKey = w.apiKey) => ({ apiKey });
  const data = (action: string, body: unknown, apiKey = w.apiKey) => w.call('POST', `/v1/${action}`, { apiKey, body });
  const save = async (name: string, steps: unknown[]) => {
    const res = await w.call('POST', `${F}/functions`, { ...as(), body: { name, steps } });
    expect(res.status).toBe(201);
    return res;
  };

  beforeAll(async () => {
    w = await startEdgeWorld();
    for (const key of [w.apiKey, w.other.apiKey]) {
      await waitFor(async () => (await data('rawSQL', { sql: 'select 1 as one' }, key)).status === 200, {
        message: 'project schema',
      });
      const made = await data(
        'rawSQL',
        {
          sql: 'create table orders (id serial primary key, sku text not null unique, qty int not null check (qty > 0), total numeric(10,2))',
        },
        key,
      );
      expect(made.status).toBe(200);
    }
    await save('place-order', [
      {
        name: 'shape',
        kind: 'Transform',
        expression: {
          sku: '{{ input.body.sku }}',
          qty: '{{ input.body.qty }}',
          total: '{{ input.body.qty * input.body.price }}',
        },
      },
      {
        name: 'save',
        kind: 'Database',
        query: { action: 'insert', table: 'orders', values: '{{ steps.shape.body }}' },
      },
      {
        name: 'answer',
        kind: 'Transform',
        expression: { order_id: '{{ steps.save.body.rows[0].id }}', saved: '{{ steps.save.body.count }}' },
      },
    ]);
  }, 60_000);
  afterAll(async () => {
    const url = w?.p.tessera?.config.databaseUrl;
    await w?.p.close();
    if (url) await dropLeftoverRoles(url);
  });

  it('runs Transform → Database insert → Transform over HTTP, and the row is visible through /v1/find', async () => {
    const res = await w.call('POST', `${F}/invoke/place-order`, {
      ...as(),
      body: { sku: 'tea-1', qty: 3, price: 2.5 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ order_id: expect.any(Number), saved: 1 });
    const found = await data('find', { table: 'orders', where: { sku: 'tea-1' } });
    expect(found.body.rows).toEqual([{ id: res.body.order_id, sku: 'tea-1', qty: 3, total: 7.5 }]);
    const events = await w.call('GET', `${F}/executions/${res.headers.get('x-execution-id')}/events`, as());
    const saved = events.body.events.find(
      (e: { step: string; type: string }) => e.step === 'save' && e.type === 'succeeded',
    );
    expect(saved.output.body).toMatchObject({ count: 1, rows: [{ sku: 'tea-1', qty: 3 }] });
  });

  it('reaches every data API action with templates inside the query', async () => {
    await data('insert', {
      table: 'orders',
      values: [
        { sku: 'all-1', qty: 1 },
        { sku: 'all-2', qty: 5 },
      ],
    });
    await save('every-action', [
      {
        name: 'one',
        kind: 'Database',
        query: { action: 'findOne', table: 'orders', where: { sku: '{{ input.body.sku }}' }, select: ['sku', 'qty'] },
      },
      {
        name: 'many',
        kind: 'Database',
        query: {
          action: 'find',
          table: 'orders',
          where: { sku: { like: 'all-%' } },
          orderBy: '-qty',
          limit: '{{ input.body.limit }}',
        },
      },
      {
        name: 'bump',
        kind: 'Database',
        query: {
          action: 'update',
          table: 'orders',
          where: { sku: '{{ steps.one.body.row.sku }}' },
          set: { qty: '{{ steps.one.body.row.qty + 1 }}' },
        },
      },
      {
        name: 'sum',
        kind: 'Database',
        query: {
          action: 'aggregate',
          table: 'orders',
          aggregates: [{ fn: 'sum', column: 'qty', as: 'units' }],
          where: { sku: { like: 'all-%' } },
        },
      },
      {
        name: 'sql',
        kind: 'Database',
        query: { action: 'rawSQL', sql: 'select count(*)::int as n from orders where sku like $1', params: ['all-%'] },
      },
      {
        name: 'tx',
        kind: 'Database',
        query: {
          action: 'transaction',
          operations: [
            { action: 'delete', table: 'orders', where: { sku: 'all-2' } },
            { action: 'find', table: 'orders', where: { sku: 'all-2' } },
          ],
        },
      },
      {
        name: 'out',
        kind: 'Transform',
        expression: {
          one: '{{ steps.one.body.row }}',
          many: '{{ steps.many.body.rows.length }}',
          bumped: '{{ steps.bump.body.rows[0].qty }}',
          units: '{{ steps.sum.body.rows[0].units }}',
          n: '{{ steps.sql.body.rows[0].n }}',
          deleted: '{{ steps.tx.body.results[0].count }}',
          left: '{{ steps.tx.body.results[1].rows.length }}',
        },
      },
    ]);
    const res = await w.call('POST', `${F}/invoke/every-action`, { ...as(), body: { sku: 'all-1', limit: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      one: { sku: 'all-1', qty: 1 },
      many: 1,
      bumped: 2,
      units: 7,
      n: 2,
      deleted: 1,
      left: 0,
    });
  });

  it('fails the step naming the data error code (conflict, check, unknown table, bad argument)', async () => {
    await w.call('POST', `${F}/invoke/place-order`, { ...as(), body: { sku: 'dup', qty: 1, price: 1 } });
    const dup = await w.call('POST', `${F}/invoke/place-order`, { ...as(), body: { sku: 'dup', qty: 1, price: 1 } });
    expectError(dup, 502, 'FUNCTION_FAILED', /save.*insert on orders/);
    expect(dup.body.error.details).toMatchObject({ step: 'save', reason: 'CONFLICT' });
    const check = await w.call('POST', `${F}/invoke/place-order`, { ...as(), body: { sku: 'zero', qty: 0, price: 1 } });
    expect(check.body.error.details).toMatchObject({ step: 'save', reason: 'VALIDATION_FAILED' });
    await save('missing-table', [
      { name: 'q', kind: 'Database', query: { action: 'find', table: '{{ input.body.t }}' } },
    ]);
    const missing = await w.call('POST', `${F}/invoke/missing-table`, { ...as(), body: { t: 'nope' } });
    expectError(missing, 502, 'FUNCTION_FAILED', /find on nope/);
    expect(missing.body.error.details).toMatchObject({ step: 'q', reason: 'NOT_FOUND' });
    await save('bad-limit', [
      { name: 'q', kind: 'Database', query: { action: 'find', table: 'orders', limit: '{{ input.body.limit }}' } },
    ]);
    const bad = await w.call('POST', `${F}/invoke/bad-limit`, { ...as(), body: { limit: 'many' } });
    expectError(bad, 502, 'FUNCTION_FAILED');
    expect(bad.body.error.details).toMatchObject({ step: 'q' });
    const executions = await w.call('GET', `${F}/executions?function=place-order&status=failed`, as());
    expect(executions.body.executions.length).toBeGreaterThanOrEqual(2);
  });

  it("keeps to its own project's database", async () => {
    await data('insert', { table: 'orders', values: { sku: 'theirs', qty: 9 } }, w.other.apiKey);
    await save('peek', [
      { name: 'q', kind: 'Database', query: { action: 'find', table: 'orders', where: { sku: 'theirs' } } },
    ]);
    const res = await w.call('POST', `${F}/invoke/peek`, as());
    expect(res.body).toEqual({ rows: [] });
    await save('schema-hop', [
      { name: 'q', kind: 'Database', query: { action: 'rawSQL', sql: 'select * from pg_catalog.pg_authid' } },
    ]);
    expectError(await w.call('POST', `${F}/invoke/schema-hop`, as()), 502, 'FUNCTION_FAILED');
  });

  it('writes nothing in a dry run: the insert is rolled back and the trace shows what it would have done', async () => {
    const dry = await w.call('POST', `${F}/invoke/place-order?dry_run=true`, {
      ...as(),
      body: { sku: 'dry-1', qty: 2, price: 1 },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dry_run: true, status: 'succeeded', output: { saved: 1 } });
    const step = dry.body.trace.find(
      (e: { step: string; type: string }) => e.step === 'save' && e.type === 'succeeded',
    );
    expect(step.output).toMatchObject({ dry_run: 'rolled back', body: { count: 1, rows: [{ sku: 'dry-1' }] } });
    expect((await data('find', { table: 'orders', where: { sku: 'dry-1' } })).body.rows).toEqual([]);
    await save('dry-tx', [
      {
        name: 'q',
        kind: 'Database',
        query: {
          action: 'transaction',
          operations: [{ action: 'insert', table: 'orders', values: { sku: 'dry-2', qty: 1 } }],
        },
      },
    ]);
    const tx = await w.call('POST', `${F}/invoke/dry-tx?dry_run=true`, as());
    expect(tx.body.output).toMatchObject({ results: [{ count: 1 }] });
    expect((await data('find', { table: 'orders', where: { sku: 'dry-2' } })).body.rows).toEqual([]);
    const graphql = await w.call('POST', '/graphql', {
      ...as(),
      body: {
        query:
          'mutation { dataTransaction(operations: [{action: "insert", table: "orders", values: {sku: "dry-gql", qty: 1}}], rollback: true) { results } }',
      },
    });
    expect(graphql.body.data.dataTransaction.results[0]).toMatchObject({ count: 1 });
    expect((await data('find', { table: 'orders', where: { sku: 'dry-gql' } })).body.rows).toEqual([]);
    const failing = await w.call('POST', `${F}/invoke/place-order?dry_run=true`, {
      ...as(),
      body: { sku: 'dry-3', qty: -1, price: 1 },
    });
    expect(failing.body).toMatchObject({
      dry_run: true,
      status: 'failed',
      error: { step: 'save', code: 'VALIDATION_FAILED' },
    });
  });

  it('refuses bad Database steps at save time, naming the step and field', async () => {
    const bad = async (query: unknown, field: string, mentions: RegExp) => {
      const res = await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'bad-db', steps: [{ name: 'q', kind: 'Database', query }] },
      });
      expectError(res, 400, 'VALIDATION_FAILED', mentions);
      expect(res.body.error.details).toMatchObject({ step: 'q', field });
    };
    await bad({ action: 'drop', table: 'orders' }, 'query.action', /find, findOne, insert, update, delete/);
    await bad({ action: 'find' }, 'query.table', /required/);
    await bad({ action: 'find', table: ['orders'] }, 'query.table', /string/);
    await bad({ action: 'insert', table: 'orders' }, 'query.values', /required/);
    await bad({ action: 'find', table: 'orders', set: {} }, 'query.set', /not a field of find/);
    await bad('{{ input.body }}', 'query', /object/);
    await bad({ action: 'find', table: 'orders', where: { sku: '{{ input.body. }}' } }, 'query.where.sku', /./);
  });
});
