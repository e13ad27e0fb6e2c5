// Database hooks end to end over HTTP: hooks managed through `/edge/api/v1/hooks`, fired by the data API's
// REST actions (`POST /v1/insert`, ... with X-Api-Key): before-hooks refusing or changing a write, after-hooks
// writing audit rows after commit (retried until they succeed), update and delete events, hooks inside a
// transaction and a dry run, bounded recursion, the data API's hook cache following every change at once,
// and the failure paths of the hooks API.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startEdgeWorld, expectError, type EdgeWorld } from './functions-helpers.ts';
import { dropLeftoverRoles } from '../data/data-support.ts';
import { waitFor } from '../../support/wait-for.ts';

const F = '/edge/api/v1';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

type Row = Record<string, unknown>;

describe('database hooks', () => {
  let w: EdgeWorld;
  const as = (apiKey = w.apiKey) => ({ apiKey });
  const data = (action: string, body: unknown, apiKey = w.apiKey) => w.call('POST', `/v1/${action}`, { apiKey, body });
  const sql = async (text: string, apiKey = w.apiKey) => {
    const res = await data('rawSQL', { sql: text }, apiKey);
    expect(res.status).toBe(200);
    return res.body.rows as Row[];
  };
  const saveFunction = async (name: string, steps: unknown[]) => {
    const res = await w.call('POST', `${F}/functions`, { ...as(), body: { name, steps } });
    expect(res.status).toBe(201);
  };
  const hook = async (body: Record<string, unknown>) => {
    const res = await w.call('POST', `${F}/hooks`, { ...as(), body });
    expect(res.status).toBe(201);
    return res.body.hook as { id: string };
  };
  const unhook = async (id: string) => expect((await w.call('DELETE', `${F}/hooks?id=${id}`, as())).status).toBe(204);
  const hookExecutions = async () =>
    (await w.call('GET', `${F}/executions?trigger=hook&first=100`, as())).body.executions as Row[];

  beforeAll(async () => {
    w = await startEdgeWorld();
    for (const key of [w.apiKey, w.other.apiKey]) {
      await waitFor(async () => (await data('rawSQL', { sql: 'select 1 as one' }, key)).status === 200, {
        message: 'project schema',
      });
      await sql('create table orders (id serial primary key, sku text not null, qty int not null, note text)', key);
    }
    await sql('create table audit (id serial primary key, order_id int, event text, sku text)');
    // Before insert: refuse more than 100, otherwise upper-case the sku and add a note.
    await saveFunction('check-order', [
      {
        name: 'refuse',
        kind: 'Transform',
        when: '{{ input.body.row.qty > 100 }}',
        return: true,
        expression: { error: 'TOO_MANY', status: 422, message: 'qty must be at most 100' },
      },
      {
        name: 'shape',
        kind: 'Transform',
        expression: {
          row: {
            sku: '{{ upper(input.body.row.sku) }}',
            qty: '{{ input.body.row.qty }}',
            note: 'checked by {{ input.body.timing }}-{{ input.body.event }}',
          },
        },
      },
    ]);
    // After insert, update, delete: one audit row per committed row.
    await saveFunction('audit-order', [
      {
        name: 'write',
        kind: 'Database',
        query: {
          action: 'insert',
          table: 'audit',
          values: {
            order_id: '{{ input.body.row.id }}',
            event: '{{ input.body.event }}',
            sku: '{{ input.body.row.sku }}',
          },
        },
      },
    ]);
  }, 60_000);
  afterAll(async () => {
    const url = w?.p.tessera?.config.databaseUrl;
    await w?.p.close();
    if (url) await dropLeftoverRoles(url);
  });

  describe('the hooks API', () => {
    it('creates, lists and deletes a hook of the project', async () => {
      const made = await w.call('POST', `${F}/hooks`, {
        ...as(),
        body: { table: 'orders', timing: 'after', events: ['delete', 'insert', 'insert'], function: 'audit-order' },
      });
      expect(made.status).toBe(201);
      expect(made.body.hook).toEqual({
        id: expect.any(String),
        table: 'orders',
        timing: 'after',
        events: ['insert', 'delete'],
        function: 'audit-order',
        created_at: expect.any(String),
      });
      const listed = await w.call('GET', `${F}/hooks`, as());
      expect(listed.status).toBe(200);
      expect(listed.body.hooks).toEqual([made.body.hook]);
      expect((await w.call('GET', `${F}/hooks`, as(w.other.apiKey))).body.hooks).toEqual([]);
      expect((await w.call('DELETE', `${F}/hooks`, { ...as(), body: { id: made.body.hook.id } })).status).toBe(204);
      expect((await w.call('GET', `${F}/hooks`, as())).body.hooks).toEqual([]);
    });

    it('refuses bad bodies with 400 VALIDATION_FAILED naming the field', async () => {
      const good = { table: 'orders', timing: 'before', events: ['insert'], function: 'check-order' };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ ...good, table: undefined }, /^table: .*required/],
        [{ ...good, table: 'orders; drop table orders' }, /^table: /],
        [{ ...good, table: 'x'.repeat(64) }, /^table: /],
        [{ ...good, timing: undefined }, /^timing: /],
        [{ ...good, timing: 'during' }, /^timing: must be "before" or "after"/],
        [{ ...good, events: [] }, /^events: /],
        [{ ...good, events: undefined }, /^events: /],
        [{ ...good, events: ['insert', 'upsert'] }, /^events\[1\]: /],
        [{ ...good, function: 'ghost' }, /^function: no function named "ghost"/],
        [{ ...good, function: undefined }, /^function: /],
        [{ ...good, function: '!bad name' }, /^function: /],
      ];
      for (const [body, message] of cases) {
        const res = await w.call('POST', `${F}/hooks`, { ...as(), body });
        expectError(res, 400, 'VALIDATION_FAILED', message);
        expect(res.body.error.details.field).toMatch(/^(table|timing|events|function)/);
      }
      expectError(
        await w.call('POST', `${F}/hooks`, { ...as(), body: { ...good, events: 'insert', timing: 3 } }),
        400,
        'BAD_USER_INPUT',
        /timing/,
      );
      expectError(await w.call('POST', `${F}/hooks`, { ...as(), raw: '{"table": ' }), 400, 'BAD_REQUEST');
      // The function must be one of this project's: the other project's key cannot use check-order.
      expectError(
        await w.call('POST', `${F}/hooks`, { ...as(w.other.apiKey), body: good }),
        400,
        'VALIDATION_FAILED',
        /function/,
      );
      expect((await w.call('GET', `${F}/hooks`, as())).body.hooks).toEqual([]);
    });

    it('refuses a table that is not in the project database with 400 naming it, and another project sees only its own tables', async () => {
      const unknown = await w.call('POST', `${F}/hooks`, {
        ...as(),
        body: { table: 'no_such_table', timing: 'after', events: ['insert'], function: 'audit-order' },
      });
      expectError(unknown, 400, 'VALIDATION_FAILED', /^table: no table named "no_such_table"/);
      expect(unknown.body.error.details).toEqual({ field: 'table', table: 'no_such_table' });
      // The other project's database has no `audit` table (this one has): the answer there is the one a table that
      // exists nowhere gets, so no project learns another's table names through it.
      await w.call('POST', `${F}/functions`, {
        ...as(w.other.apiKey),
        body: { name: 'audit-order', steps: [{ name: 'n', kind: 'Transform', expression: '{{ input.body }}' }] },
      });
      const foreign = await w.call('POST', `${F}/hooks`, {
        ...as(w.other.apiKey),
        body: { table: 'audit', timing: 'after', events: ['insert'], function: 'audit-order' },
      });
      expectError(foreign, 400, 'VALIDATION_FAILED', /^table: no table named "audit"/);
      expect(foreign.body.error.details).toEqual({ field: 'table', table: 'audit' });
      // Its own `orders` table is accepted.
      const own = await w.call('POST', `${F}/hooks`, {
        ...as(w.other.apiKey),
        body: { table: 'orders', timing: 'after', events: ['insert'], function: 'audit-order' },
      });
      expect(own.status).toBe(201);
      expect((await w.call('DELETE', `${F}/hooks?id=${own.body.hook.id}`, as(w.other.apiKey))).status).toBe(204);
      expect((await w.call('GET', `${F}/hooks`, as())).body.hooks).toEqual([]);
    });

    it('answers 404 for an unknown id or a hook of another project, and 400 without an id', async () => {
      const mine = await hook({ table: 'orders', timing: 'before', events: ['update'], function: 'check-order' });
      expectError(await w.call('DELETE', `${F}/hooks?id=${mine.id}`, as(w.other.apiKey)), 404, 'NOT_FOUND');
      expectError(await w.call('DELETE', `${F}/hooks?id=${UNKNOWN}`, as()), 404, 'NOT_FOUND');
      expectError(await w.call('DELETE', `${F}/hooks?id=not-a-uuid`, as()), 404, 'NOT_FOUND');
      expectError(await w.call('DELETE', `${F}/hooks`, as()), 400, 'BAD_USER_INPUT', /id/);
      await unhook(mine.id);
      expectError(await w.call('DELETE', `${F}/hooks?id=${mine.id}`, as()), 404, 'NOT_FOUND');
    });

    it('needs the project API key: 401 without or with a garbage key, 403 with a tenant token', async () => {
      const body = { table: 'orders', timing: 'before', events: ['insert'], function: 'check-order' };
      for (const [method, opts] of [
        ['GET', {}],
        ['POST', { body }],
        ['DELETE', { body: { id: UNKNOWN } }],
      ] as const) {
        expectError(await w.call(method, `${F}/hooks`, opts), 401, 'UNAUTHENTICATED');
        expectError(await w.call(method, `${F}/hooks`, { ...opts, apiKey: 'tsk_garbage' }), 401, 'INVALID_API_KEY');
        expectError(await w.call(method, `${F}/hooks`, { ...opts, token: w.token }), 403, 'FORBIDDEN');
      }
    });
  });

  describe('fired by the data API', () => {
    it('a before-hook refuses a write: the caller gets its status and error, and nothing is written', async () => {
      const h = await hook({ table: 'orders', timing: 'before', events: ['insert'], function: 'check-order' });
      try {
        const res = await data('insert', { table: 'orders', values: { sku: 'bulk', qty: 500 } });
        expectError(res, 422, 'HOOK_REJECTED', /^qty must be at most 100$/);
        expect(res.body.error.details).toMatchObject({
          error: 'TOO_MANY',
          status: 422,
          table: 'orders',
          event: 'insert',
          function: 'check-order',
          hook: h.id,
        });
        expect((await data('find', { table: 'orders', where: { sku: { ilike: 'bulk' } } })).body.rows).toEqual([]);
        // The refusal is the hook's recorded execution (trigger hook).
        const runs = await hookExecutions();
        expect(runs.find((e) => e.id === res.body.error.details.execution_id)).toMatchObject({
          function: 'check-order',
          trigger: 'hook',
          trigger_ref: h.id,
          response_status: 422,
        });
        // Another project's table of the same name has no hook.
        expect(
          (await data('insert', { table: 'orders', values: { sku: 'bulk', qty: 500 } }, w.other.apiKey)).status,
        ).toBe(201);
      } finally {
        await unhook(h.id);
      }
    });

    it('a before-hook changes the row written (each row of a multi-row insert, as many hooks as there are, in order)', async () => {
      await saveFunction('suffix', [
        {
          name: 'out',
          kind: 'Transform',
          expression: {
            row: {
              sku: '{{ input.body.row.sku }}-2',
              qty: '{{ input.body.row.qty }}',
              note: '{{ input.body.row.note }}',
            },
          },
        },
      ]);
      const first = await hook({ table: 'orders', timing: 'before', events: ['insert'], function: 'check-order' });
      const second = await hook({ table: 'orders', timing: 'before', events: ['insert'], function: 'suffix' });
      try {
        const one = await data('insert', {
          table: 'orders',
          values: { sku: 'tea', qty: 2 },
          returning: ['sku', 'note'],
        });
        expect(one.status).toBe(201);
        expect(one.body.rows).toEqual([{ sku: 'TEA-2', note: 'checked by before-insert' }]);
        const many = await data('insert', {
          table: 'orders',
          values: [
            { sku: 'a', qty: 1 },
            { sku: 'b', qty: 2 },
          ],
        });
        expect(many.body.rows.map((r: Row) => r.sku)).toEqual(['A-2', 'B-2']);
        const stored = await data('find', {
          table: 'orders',
          where: { sku: { in: ['TEA-2', 'A-2', 'B-2'] } },
          orderBy: 'id',
          select: ['sku', 'qty', 'note'],
        });
        expect(stored.body.rows).toEqual([
          { sku: 'TEA-2', qty: 2, note: 'checked by before-insert' },
          { sku: 'A-2', qty: 1, note: 'checked by before-insert' },
          { sku: 'B-2', qty: 2, note: 'checked by before-insert' },
        ]);
      } finally {
        await unhook(first.id);
        await unhook(second.id);
      }
    });

    it('an after-hook writes an audit row for every committed insert, update and delete', async () => {
      const h = await hook({
        table: 'orders',
        timing: 'after',
        events: ['insert', 'update', 'delete'],
        function: 'audit-order',
      });
      try {
        const made = await data('insert', { table: 'orders', values: { sku: 'audited', qty: 1 }, returning: false });
        expect(made.body).toEqual({ count: 1, rows: [] });
        const [{ id }] = await sql("select id from orders where sku = 'audited'");
        const audited = async (event: string) => {
          const rows = (await data('find', { table: 'audit', where: { order_id: id, event } })).body.rows as Row[];
          return rows.length > 0 ? rows : undefined;
        };
        expect(await waitFor(() => audited('insert'))).toEqual([
          { id: expect.any(Number), order_id: id, event: 'insert', sku: 'audited' },
        ]);
        expect((await data('update', { table: 'orders', where: { id }, set: { sku: 'audited-2' } })).body.count).toBe(
          1,
        );
        expect((await waitFor(() => audited('update')))[0]!.sku).toBe('audited-2');
        expect((await data('delete', { table: 'orders', where: { id }, returning: ['id'] })).body).toEqual({
          count: 1,
          rows: [{ id }],
        });
        expect((await waitFor(() => audited('delete')))[0]!.sku).toBe('audited-2');
        // Execution records are written in batches after the audit rows commit: wait for all three.
        const runs = await waitFor(async () => {
          const mine = (await hookExecutions()).filter((e) => e.trigger_ref === h.id && e.status !== 'running');
          return mine.length === 3 ? mine : undefined;
        });
        expect(runs.map((e) => e.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
        expect(runs.map((e) => (e.input as { body: { event: string } }).body.event).sort()).toEqual([
          'delete',
          'insert',
          'update',
        ]);
      } finally {
        await unhook(h.id);
      }
    });

    it('update and delete before-hooks see the set values and the filter, and may change or refuse them', async () => {
      await saveFunction('guard-update', [
        {
          name: 'refuse',
          kind: 'Transform',
          when: '{{ input.body.row.qty < 0 }}',
          return: true,
          expression: { error: 'NEGATIVE', status: 409 },
        },
        {
          name: 'stamp',
          kind: 'Transform',
          expression: { row: { qty: '{{ input.body.row.qty }}', note: 'updated where {{ json(input.body.where) }}' } },
        },
      ]);
      await saveFunction('guard-delete', [
        {
          name: 'refuse',
          kind: 'Transform',
          when: "{{ input.body.where.sku == 'KEEP' && input.body.row == null }}",
          return: true,
          expression: { error: 'PROTECTED', status: 403, message: 'this order is kept' },
        },
      ]);
      await data('insert', {
        table: 'orders',
        values: [
          { sku: 'KEEP', qty: 1 },
          { sku: 'CHANGE', qty: 1 },
        ],
      });
      const up = await hook({ table: 'orders', timing: 'before', events: ['update'], function: 'guard-update' });
      const del = await hook({ table: 'orders', timing: 'before', events: ['delete'], function: 'guard-delete' });
      try {
        expectError(
          await data('update', { table: 'orders', where: { sku: 'CHANGE' }, set: { qty: -1 } }),
          409,
          'HOOK_REJECTED',
          /NEGATIVE/,
        );
        const changed = await data('update', { table: 'orders', where: { sku: 'CHANGE' }, set: { qty: 7 } });
        expect(changed.body.rows).toEqual([
          expect.objectContaining({ sku: 'CHANGE', qty: 7, note: 'updated where {"sku":"CHANGE"}' }),
        ]);
        const kept = await data('delete', { table: 'orders', where: { sku: 'KEEP' } });
        expectError(kept, 403, 'HOOK_REJECTED', /this order is kept/);
        expect((await data('find', { table: 'orders', where: { sku: 'KEEP' } })).body.rows).toHaveLength(1);
        expect((await data('delete', { table: 'orders', where: { sku: 'CHANGE' } })).body.count).toBe(1);
      } finally {
        await unhook(up.id);
        await unhook(del.id);
      }
    });

    it('inside a transaction: a refusal rolls back every operation; after-hooks run only once it commits', async () => {
      const before = await hook({ table: 'orders', timing: 'before', events: ['insert'], function: 'check-order' });
      const after = await hook({ table: 'orders', timing: 'after', events: ['insert'], function: 'audit-order' });
      try {
        const refused = await data('transaction', {
          operations: [
            { action: 'insert', table: 'orders', values: { sku: 'tx-ok', qty: 1 } },
            { action: 'insert', table: 'orders', values: { sku: 'tx-big', qty: 101 } },
          ],
        });
        expectError(refused, 422, 'HOOK_REJECTED', /^operations\[1\] \(insert\): qty must be at most 100/);
        expect(refused.body.error.details).toMatchObject({ operation: 1, error: 'TOO_MANY' });
        expect(
          (await data('find', { table: 'orders', where: { sku: { in: ['TX-OK', 'TX-BIG'] } } })).body.rows,
        ).toEqual([]);
        const done = await data('transaction', {
          operations: [
            { action: 'insert', table: 'orders', values: { sku: 'tx-one', qty: 1 } },
            { action: 'insert', table: 'orders', values: { sku: 'tx-two', qty: 2 }, returning: ['sku'] },
            { action: 'find', table: 'orders', where: { sku: { like: 'TX-%' } }, select: ['sku'], orderBy: 'id' },
          ],
        });
        expect(done.status).toBe(200);
        expect(done.body.results[1]).toEqual({ count: 1, rows: [{ sku: 'TX-TWO' }] });
        expect(done.body.results[2].rows).toEqual([{ sku: 'TX-ONE' }, { sku: 'TX-TWO' }]);
        const audits = await waitFor(async () => {
          const rows = (await data('find', { table: 'audit', where: { sku: { in: ['TX-ONE', 'TX-TWO'] } } })).body
            .rows as Row[];
          return rows.length === 2 ? rows : undefined;
        });
        expect(audits.map((r) => r.sku).sort()).toEqual(['TX-ONE', 'TX-TWO']);
        // The refused transaction's first insert never reached the after-hook.
        expect((await data('find', { table: 'audit', where: { sku: 'TX-OK' } })).body.rows).toEqual([]);
      } finally {
        await unhook(before.id);
        await unhook(after.id);
      }
    });

    it('a dry run fires before-hooks as dry runs and queues no after-hook', async () => {
      await saveFunction('place', [
        {
          name: 'save',
          kind: 'Database',
          query: { action: 'insert', table: 'orders', values: { sku: '{{ input.body.sku }}', qty: 1 } },
        },
      ]);
      const before = await hook({ table: 'orders', timing: 'before', events: ['insert'], function: 'check-order' });
      const after = await hook({ table: 'orders', timing: 'after', events: ['insert'], function: 'audit-order' });
      try {
        const runsOf = async () =>
          (await hookExecutions()).filter((e) => e.trigger_ref === before.id || e.trigger_ref === after.id);
        const dry = await w.call('POST', `${F}/invoke/place?dry_run=true`, { ...as(), body: { sku: 'dry' } });
        expect(dry.status).toBe(200);
        expect(dry.body).toMatchObject({
          dry_run: true,
          status: 'succeeded',
          output: { count: 1, rows: [{ sku: 'DRY', note: 'checked by before-insert' }] },
        });
        expect(await runsOf()).toEqual([]);
        // The same call for real: recorded hook runs, an audit row. The dry run's after-hook would have been queued
        // before it, so once the real one has run, the dry one's is known never to come.
        expect((await w.call('POST', `${F}/invoke/place`, { ...as(), body: { sku: 'wet' } })).status).toBe(200);
        await waitFor(
          async () => (await data('find', { table: 'audit', where: { sku: 'WET' } })).body.rows.length === 1,
          { message: "the real call's audit row" },
        );
        await waitFor(async () => (await runsOf()).some((e) => e.trigger_ref === after.id), {
          message: "the real call's after-hook run",
        });
        expect((await runsOf()).filter((e) => e.trigger_ref === after.id)).toHaveLength(1);
        expect((await data('find', { table: 'orders', where: { sku: 'DRY' } })).body.rows).toEqual([]);
        expect((await data('find', { table: 'audit', where: { sku: 'DRY' } })).body.rows).toEqual([]);
      } finally {
        await unhook(before.id);
        await unhook(after.id);
      }
    });

    it('takes a new hook into account on the very next write, and stops at once when it is deleted', async () => {
      await sql('create table notes (id serial primary key, body text)');
      await saveFunction('no-notes', [
        { name: 'no', kind: 'Transform', expression: { error: 'NO_NOTES', status: 403 } },
      ]);
      expect((await data('insert', { table: 'notes', values: { body: 'one' } })).status).toBe(201);
      const h = await hook({ table: 'notes', timing: 'before', events: ['insert', 'update'], function: 'no-notes' });
      expectError(await data('insert', { table: 'notes', values: { body: 'two' } }), 403, 'HOOK_REJECTED', /NO_NOTES/);
      expectError(
        await data('update', { table: 'notes', where: { body: 'one' }, set: { body: 'uno' } }),
        403,
        'HOOK_REJECTED',
      );
      expect((await data('delete', { table: 'notes', where: { body: 'nothing' } })).status).toBe(200);
      await unhook(h.id);
      expect((await data('insert', { table: 'notes', values: { body: 'three' } })).status).toBe(201);
      // Deleting the function deletes its hooks, with the same effect.
      const again = await hook({ table: 'notes', timing: 'before', events: ['insert'], function: 'no-notes' });
      expectError(await data('insert', { table: 'notes', values: { body: 'four' } }), 403, 'HOOK_REJECTED');
      const fns = (await w.call('GET', `${F}/functions?first=100`, as())).body.functions as {
        id: string;
        name: string;
      }[];
      expect(
        (await w.call('DELETE', `${F}/functions/${fns.find((f) => f.name === 'no-notes')!.id}`, as())).status,
      ).toBe(204);
      expect((await w.call('GET', `${F}/hooks`, as())).body.hooks.map((x: Row) => x.id)).not.toContain(again.id);
      expect((await data('insert', { table: 'notes', values: { body: 'five' } })).status).toBe(201);
    });

    it('retries a failing after-hook with backoff until it succeeds (at least once)', async () => {
      await saveFunction('late-audit', [
        {
          name: 'write',
          kind: 'Database',
          query: { action: 'insert', table: 'late_audit', values: { order_id: '{{ input.body.row.id }}' } },
        },
      ]);
      const h = await hook({ table: 'orders', timing: 'after', events: ['insert'], function: 'late-audit' });
      try {
        const made = await data('insert', { table: 'orders', values: { sku: 'late', qty: 1 } });
        const id = made.body.rows[0].id;
        // late_audit does not exist yet: the first run fails and is recorded as failed.
        const failedRun = await waitFor(
          async () => (await hookExecutions()).find((e) => e.trigger_ref === h.id && e.status === 'failed'),
          { timeoutMs: 30_000 },
        );
        expect(failedRun.error).toMatchObject({ code: 'NOT_FOUND', step: 'write' });
        await sql('create table late_audit (id serial primary key, order_id int)');
        expect(
          await waitFor(
            async () => {
              const rows = (await data('find', { table: 'late_audit' })).body.rows as Row[];
              return rows.length > 0 ? rows : undefined;
            },
            { timeoutMs: 30_000 },
          ),
        ).toEqual([{ id: expect.any(Number), order_id: id }]);
        // The audit row commits before the execution's final record is written (records are batched): wait for it.
        expect(
          await waitFor(
            async () => (await hookExecutions()).find((e) => e.trigger_ref === h.id && e.status === 'succeeded'),
            { timeoutMs: 30_000 },
          ),
        ).toMatchObject({ function: 'late-audit', trigger: 'hook' });
      } finally {
        await unhook(h.id);
      }
    }, 75_000);
  });

  describe('recursion', () => {
    it('a before-hook whose function writes to its own table is stopped at TESSERA_HOOK_MAX_DEPTH, and nothing is written', async () => {
      await sql('create table loops (id serial primary key, n int not null)');
      await saveFunction('loop', [
        {
          name: 'again',
          kind: 'Database',
          query: { action: 'insert', table: 'loops', values: { n: '{{ input.body.row.n + 1 }}' } },
        },
      ]);
      const h = await hook({ table: 'loops', timing: 'before', events: ['insert'], function: 'loop' });
      try {
        const res = await data('insert', { table: 'loops', values: { n: 0 } });
        expectError(
          res,
          502,
          'FUNCTION_FAILED',
          /would fire database hooks 4 levels deep; at most 3 \(TESSERA_HOOK_MAX_DEPTH\)/,
        );
        expect(res.body.error.details).toMatchObject({ hook: h.id, function: 'loop', step: 'again' });
        expect(await sql('select count(*)::int as n from loops')).toEqual([{ n: 0 }]);
        const depths = (await hookExecutions()).filter((e) => e.trigger_ref === h.id).map((e) => e.status);
        expect(depths).toEqual(['failed', 'failed', 'failed']);
      } finally {
        await unhook(h.id);
      }
    });

    it('an after-hook writing to its own table runs three levels deep, then its write is refused and not retried', async () => {
      await sql('create table echoes (id serial primary key, n int not null)');
      await saveFunction('echo', [
        {
          name: 'again',
          kind: 'Database',
          query: { action: 'insert', table: 'echoes', values: { n: '{{ input.body.row.n + 1 }}' } },
        },
      ]);
      const h = await hook({ table: 'echoes', timing: 'after', events: ['insert'], function: 'echo' });
      try {
        expect((await data('insert', { table: 'echoes', values: { n: 0 } })).status).toBe(201);
        const runs = await waitFor(
          async () => {
            const r = (await hookExecutions()).filter((e) => e.trigger_ref === h.id);
            return r.length === 3 && r.every((e) => e.status !== 'running' && e.status !== 'queued') ? r : undefined;
          },
          { timeoutMs: 30_000 },
        );
        expect(runs.map((e) => e.status)).toEqual(['failed', 'succeeded', 'succeeded']);
        expect(runs[0]!.error).toMatchObject({ code: 'HOOK_DEPTH_EXCEEDED' });
        await new Promise((r) => setTimeout(r, 2500)); // a retry would come after ~1 s: no later event marks a retry that never comes
        expect((await hookExecutions()).filter((e) => e.trigger_ref === h.id)).toHaveLength(3);
        expect((await sql('select n from echoes order by n')).map((r) => r.n)).toEqual([0, 1, 2]);
      } finally {
        await unhook(h.id);
      }
    }, 45_000);
  });
});
