// The edge-functions REST API over HTTP: functions, invoke, secrets, receivers, cron, e-mail templates,
// executions and stats, with their failure paths (bad body, unknown id, missing/garbage/foreign credentials).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { ROUTE_TABLE } from '../../../rest-compat/route-table.ts';
import { startEdgeWorld, expectError, type EdgeWorld } from './functions-helpers.ts';
import { waitFor } from '../../support/wait-for.ts';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const F = '/edge/api/v1';

describe('edge functions API', () => {
  let w: EdgeWorld;
  beforeAll(async () => {
    w = await startEdgeWorld();
  }, 60_000);
  afterAll(async () => {
    await w?.p.close();
  });

  const as = (apiKey = w.apiKey) => ({ apiKey });

  describe('credentials', () => {
    const rows = ROUTE_TABLE.filter((r) => r.path.startsWith('/edge/'));
    const pathOf = (p: string) => p.replace(':id', UNKNOWN).replace(':name', 'f');
    it('has a row for every seed path of edge functions, database hooks included', () => {
      const have = new Set(rows.map((r) => `${r.method} ${r.path}`));
      for (const seed of [
        'GET /functions',
        'POST /functions',
        'GET /functions/:id',
        'PUT /functions/:id',
        'DELETE /functions/:id',
        'POST /invoke/:name',
        'GET /webhooks',
        'POST /webhooks',
        'DELETE /webhooks',
        'GET /hooks',
        'POST /hooks',
        'DELETE /hooks',
        'GET /cron',
        'POST /cron',
        'DELETE /cron',
        'GET /email-templates',
        'POST /email-templates',
        'PUT /email-templates',
        'DELETE /email-templates',
        'GET /email-config',
        'POST /email-config',
        'DELETE /email-config',
        'GET /executions',
        'GET /executions/:id',
        'GET /executions/:id/events',
        'GET /stats',
      ]) {
        const [m, p] = seed.split(' ');
        expect(have).toContain(`${m} ${F}${p}`);
      }
    });
    it.each(rows.map((r) => [r.method, r.path]))('%s %s without credentials answers 401', async (method, path) => {
      expectError(
        await w.call(method, pathOf(path), { body: method === 'GET' ? undefined : {} }),
        401,
        'UNAUTHENTICATED',
      );
    });
    it.each(rows.map((r) => [r.method, r.path]))('%s %s with a garbage API key answers 401', async (method, path) => {
      expectError(
        await w.call(method, pathOf(path), { apiKey: 'tsk_garbage', body: method === 'GET' ? undefined : {} }),
        401,
        'INVALID_API_KEY',
      );
    });
    it.each(rows.map((r) => [r.method, r.path]))('%s %s with a tenant token answers 403', async (method, path) => {
      expectError(
        await w.call(method, pathOf(path), { token: w.token, body: method === 'GET' ? undefined : {} }),
        403,
        'FORBIDDEN',
      );
    });
  });

  describe('functions', () => {
    const def = (name: string, extra: Record<string, unknown> = {}) => ({
      name,
      description: 'Doubles',
      steps: [{ name: 'double', kind: 'Transform', expression: '{{ input.body.n * 2 }}' }],
      ...extra,
    });

    it('creates, reads, lists, updates (bumping the version) and deletes a function', async () => {
      const created = await w.call('POST', `${F}/functions`, {
        ...as(),
        body: def('double', { timeout_ms: 2000, retries: 1 }),
      });
      expect(created.status).toBe(201);
      expect(created.body.function).toMatchObject({
        name: 'double',
        slug: 'double',
        description: 'Doubles',
        timeout_ms: 2000,
        retries: 1,
        version: 1,
      });
      const id = created.body.function.id;
      expect((await w.call('GET', `${F}/functions/${id}`, as())).body.function.name).toBe('double');
      expect(
        (await w.call('GET', `${F}/functions`, as())).body.functions.map((f: { name: string }) => f.name),
      ).toContain('double');
      const updated = await w.call('PUT', `${F}/functions/${id}`, { ...as(), body: def('double', { slug: 'twice' }) });
      expect(updated.body.function).toMatchObject({ slug: 'twice', version: 2, timeout_ms: 10000, retries: 0 });
      expect(
        (await w.call('PUT', `${F}/functions/${id}`, { ...as(), body: def('double') })).body.function.version,
      ).toBe(3);
      expect((await w.call('DELETE', `${F}/functions/${id}`, as())).status).toBe(204);
      expectError(await w.call('GET', `${F}/functions/${id}`, as()), 404, 'NOT_FOUND');
    });

    it('keeps names and slugs unique per project, and projects apart', async () => {
      await w.call('POST', `${F}/functions`, { ...as(), body: def('unique') });
      expectError(await w.call('POST', `${F}/functions`, { ...as(), body: def('unique') }), 409, 'CONFLICT', /unique/);
      expectError(
        await w.call('POST', `${F}/functions`, { ...as(), body: def('other', { slug: 'unique' }) }),
        409,
        'CONFLICT',
        /slug/,
      );
      expect((await w.call('POST', `${F}/functions`, { ...as(w.other.apiKey), body: def('unique') })).status).toBe(201);
      const mine = (await w.call('GET', `${F}/functions`, as())).body.functions.find(
        (f: { name: string }) => f.name === 'unique',
      );
      expectError(await w.call('GET', `${F}/functions/${mine.id}`, as(w.other.apiKey)), 404, 'NOT_FOUND');
      expectError(
        await w.call('PUT', `${F}/functions/${mine.id}`, { ...as(w.other.apiKey), body: def('x') }),
        404,
        'NOT_FOUND',
      );
      expectError(await w.call('DELETE', `${F}/functions/${mine.id}`, as(w.other.apiKey)), 404, 'NOT_FOUND');
    });

    it('refuses bad definitions naming the step and field', async () => {
      const bad = await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'bad', steps: [{ name: 'verify', kind: 'Transform', expression: '{{ input.body = 1 }}' }] },
      });
      expectError(bad, 400, 'VALIDATION_FAILED', /verify.*expression.*assignments/);
      expect(bad.body.error.details).toMatchObject({ step: 'verify', field: 'expression' });
      const kind = await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'kind', steps: [{ name: 'q', kind: 'Sql', query: 'select 1' }] },
      });
      expectError(kind, 400, 'VALIDATION_FAILED', /Transform, Database, HTTP/);
      expect(kind.body.error.details).toMatchObject({ step: 'q', field: 'kind' });
      const db = await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'db', steps: [{ name: 'q', kind: 'Database', query: { action: 'upsert', table: 'x' } }] },
      });
      expectError(db, 400, 'VALIDATION_FAILED', /find, findOne, insert/);
      expect(db.body.error.details).toMatchObject({ step: 'q', field: 'query.action' });
      const order = await w.call('POST', `${F}/functions`, {
        ...as(),
        body: {
          name: 'order',
          steps: [
            { name: 'a', kind: 'Transform', expression: '{{ steps.b.body }}' },
            { name: 'b', kind: 'Transform', expression: 1 },
          ],
        },
      });
      expect(order.body.error.details).toMatchObject({ step: 'a', field: 'expression' });
      expectError(
        await w.call('POST', `${F}/functions`, { ...as(), body: { steps: [] } }),
        400,
        'BAD_USER_INPUT',
        /name/,
      );
      expectError(
        await w.call('POST', `${F}/functions`, { ...as(), body: { name: 'x', steps: [], extra: 1 } }),
        400,
        'BAD_USER_INPUT',
        /extra/,
      );
      expectError(
        await w.call('POST', `${F}/functions`, { ...as(), body: def('t', { timeout_ms: 'slow' }) }),
        400,
        'BAD_USER_INPUT',
        /timeout/,
      );
      expectError(await w.call('POST', `${F}/functions`, { ...as(), raw: '{nope' }), 400, 'BAD_REQUEST');
      expectError(await w.call('POST', `${F}/functions`, { ...as(), body: [1] }), 400, 'BAD_REQUEST', /object/);
      expectError(await w.call('GET', `${F}/functions/not-a-uuid`, as()), 404, 'NOT_FOUND');
      expectError(await w.call('PUT', `${F}/functions/${UNKNOWN}`, { ...as(), body: def('nobody') }), 404, 'NOT_FOUND');
      expectError(await w.call('DELETE', `${F}/functions/${UNKNOWN}`, as()), 404, 'NOT_FOUND');
      expectError(await w.call('GET', `${F}/functions?first=0`, as()), 400, 'VALIDATION_FAILED', /first/);
    });
  });

  describe('invoke', () => {
    beforeAll(async () => {
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: {
          name: 'greet',
          steps: [
            { name: 'check', kind: 'Transform', expression: '{{ input.body.name ? true : false }}' },
            {
              name: 'refuse',
              kind: 'Transform',
              when: '{{ !steps.check.body }}',
              return: true,
              expression: { error: 'NAME_REQUIRED', status: 422 },
            },
            {
              name: 'hello',
              kind: 'Transform',
              expression: { greeting: 'Hello {{ input.body.name }}', secret_len: '{{ secrets.TOKEN.length }}' },
            },
          ],
        },
      });
      await w.call('POST', `${F}/secrets`, { ...as(), body: { name: 'TOKEN', value: 'super-secret-token' } });
    });

    it('returns the final output synchronously, and an {error, status} result as that status', async () => {
      const ok = await w.call('POST', `${F}/invoke/greet`, { ...as(), body: { name: 'Ada' } });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ greeting: 'Hello Ada', secret_len: 18 });
      expect(ok.headers.get('x-execution-id')).toMatch(/^[0-9a-f-]{36}$/);
      const refused = await w.call('POST', `${F}/invoke/greet`, { ...as(), body: {} });
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({ error: 'NAME_REQUIRED', status: 422 });
    });

    it('queues with async=true (202 and an execution id) and the run shows up in executions', async () => {
      const res = await w.call('POST', `${F}/invoke/greet?async=true`, { ...as(), body: { name: 'Bob' } });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ execution_id: expect.any(String), status: 'queued' });
      const done = await waitFor(async () => {
        const e = await w.call('GET', `${F}/executions/${res.body.execution_id}`, as());
        return e.body.execution.status === 'succeeded' ? e.body.execution : undefined;
      });
      expect(done).toMatchObject({
        function: 'greet',
        trigger: 'invoke',
        output: { greeting: 'Hello Bob' },
        input: { body: { name: 'Bob' } },
      });
      expect(done.duration_ms).toBeGreaterThanOrEqual(0);
      expect(Date.parse(done.started_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    });

    it('runs with dry_run=true without recording and returns the step trace', async () => {
      const before = (await w.call('GET', `${F}/executions?function=greet`, as())).body.executions.length;
      const res = await w.call('POST', `${F}/invoke/greet?dry_run=true`, { ...as(), body: { name: 'Cy' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ dry_run: true, status: 'succeeded', output: { greeting: 'Hello Cy' } });
      expect(res.body.trace.map((e: { step: string; type: string }) => `${e.step}:${e.type}`)).toEqual([
        'check:started',
        'check:succeeded',
        'refuse:skipped',
        'hello:started',
        'hello:succeeded',
      ]);
      expect((await w.call('GET', `${F}/executions?function=greet`, as())).body.executions.length).toBe(before);
    });

    it('sends no HTTP request in a dry run, and refuses loopback targets in a real one', async () => {
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: {
          name: 'outbound',
          steps: [
            {
              name: 'call',
              kind: 'HTTP',
              request: { method: 'POST', url: 'http://localhost:9/x', body: { a: '{{ input.body.a }}' } },
            },
          ],
        },
      });
      const dry = await w.call('POST', `${F}/invoke/outbound?dry_run=true`, { ...as(), body: { a: 1 } });
      expect(dry.body.trace[0].input.request).toMatchObject({ url: 'http://localhost:9/x', body: { a: 1 } });
      expect(dry.body.trace[1].output).toMatchObject({ dry_run: true });
      const real = await w.call('POST', `${F}/invoke/outbound`, { ...as(), body: { a: 1 } });
      expectError(real, 502, 'FUNCTION_FAILED', /loopback, private or link-local/);
      expect(real.body.error.details).toMatchObject({ step: 'call', reason: 'HTTP_REFUSED' });
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: {
          name: 'metadata',
          steps: [{ name: 'call', kind: 'HTTP', request: { url: 'http://169.254.169.254/latest/meta-data' } }],
        },
      });
      expectError(await w.call('POST', `${F}/invoke/metadata`, as()), 502, 'FUNCTION_FAILED', /169\.254\.169\.254/);
    });

    it('stops a function that invokes itself without end', async () => {
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'loop', steps: [{ name: 'again', kind: 'Invoke', function: 'loop' }] },
      });
      const res = await w.call('POST', `${F}/invoke/loop`, as());
      expectError(res, 502, 'FUNCTION_FAILED', /at most 8 levels/);
    });

    it('fails a run whose values grow past their limits instead of holding them (a definition doubling a string)', async () => {
      // Each step doubles the last one's string: left alone, ~25 steps would hold gigabytes in the shared process.
      const doubling = (n: number) =>
        Array.from({ length: n }, (_, i) => ({
          name: `s${i}`,
          kind: 'Transform',
          expression: i === 0 ? '{{ input.body.s }}' : `{{ steps.s${i - 1}.body }}{{ steps.s${i - 1}.body }}`,
        }));
      await w.call('POST', `${F}/functions`, { ...as(), body: { name: 'grow', steps: doubling(12) } });
      const s = 'x'.repeat(600_000);
      const one = await w.call('POST', `${F}/invoke/grow`, { ...as(), body: { s } });
      // 600k, 1.2M, 2.4M, 4.8M, then 9.6M characters: past the 8 MiB a single value may take.
      expectError(one, 502, 'FUNCTION_FAILED', /at most 8388608/);
      expect(one.body.error.details).toMatchObject({ step: 's4', reason: 'VALUE_TOO_LARGE' });
      // The failure is recorded, without the value that was refused.
      const id = one.body.error.details.execution_id;
      const events = await w.call('GET', `${F}/executions/${id}/events`, as());
      expect(events.status).toBe(200);
      expect(events.body.events.at(-1)).toMatchObject({ step: 's4', type: 'failed' });
      expect(JSON.stringify(events.body).length).toBeLessThan(40_000_000);
      // Values each within the limit, but together past the run's 32 MiB: copies of a 4.8M-character string.
      const steps = doubling(4);
      for (let i = 4; i < 8; i++) steps.push({ name: `s${i}`, kind: 'Transform', expression: '{{ steps.s3.body }}' });
      await w.call('POST', `${F}/functions`, { ...as(), body: { name: 'copies', steps } });
      const all = await w.call('POST', `${F}/invoke/copies`, { ...as(), body: { s } });
      expectError(all, 502, 'FUNCTION_FAILED', /past 33554432 characters/);
      expect(all.body.error.details).toMatchObject({ reason: 'VALUE_TOO_LARGE' });
      // A run within both limits is untouched.
      const small = await w.call('POST', `${F}/invoke/copies`, { ...as(), body: { s: 'ab' } });
      expect(small.status).toBe(200);
      expect(small.body).toBe('abababababababab');
    }, 60_000);

    it('refuses unknown functions, bad flags and combined modes', async () => {
      expectError(await w.call('POST', `${F}/invoke/nope`, { ...as(), body: {} }), 404, 'NOT_FOUND');
      expectError(
        await w.call('POST', `${F}/invoke/greet?async=maybe`, { ...as(), body: {} }),
        400,
        'VALIDATION_FAILED',
        /async/,
      );
      expectError(
        await w.call('POST', `${F}/invoke/greet?async=true&dry_run=true`, { ...as(), body: {} }),
        400,
        'VALIDATION_FAILED',
        /dry_run/,
      );
      expectError(await w.call('POST', `${F}/invoke/greet`, { ...as(w.other.apiKey), body: {} }), 404, 'NOT_FOUND');
      expectError(await w.call('POST', `${F}/invoke/greet`, { ...as(), raw: '{nope' }), 400, 'BAD_REQUEST');
    });
  });

  describe('secrets', () => {
    it('stores values encrypted, lists names only and deletes by name', async () => {
      const set = await w.call('POST', `${F}/secrets`, {
        ...as(),
        body: { name: 'API_TOKEN', value: 'tok-value-123' },
      });
      expect(set.status).toBe(201);
      expect(set.body.secret).toEqual({
        name: 'API_TOKEN',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const list = await w.call('GET', `${F}/secrets`, as());
      expect(list.body.secrets.map((s: { name: string }) => s.name)).toContain('API_TOKEN');
      expect(JSON.stringify(list.body)).not.toContain('tok-value-123');
      const c = new pg.Client({ connectionString: w.p.tessera!.config.databaseUrl! });
      await c.connect();
      const rows = await c.query("select * from function_secrets where name = 'API_TOKEN'");
      await c.end();
      expect(JSON.stringify(rows.rows)).not.toContain('tok-value-123');
      expect((await w.call('DELETE', `${F}/secrets?name=API_TOKEN`, as())).status).toBe(204);
      expectError(await w.call('DELETE', `${F}/secrets`, { ...as(), body: { name: 'API_TOKEN' } }), 404, 'NOT_FOUND');
    });

    it('keeps secret values out of answers and execution logs: {{secrets.NAME}} stands where the value was', async () => {
      await w.call('POST', `${F}/secrets`, { ...as(), body: { name: 'HIDDEN', value: 'do-not-log-me' } });
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: {
          name: 'leaky',
          steps: [{ name: 'a', kind: 'Transform', expression: { auth: 'Bearer {{ secrets.HIDDEN }}' } }],
        },
      });
      const res = await w.call('POST', `${F}/invoke/leaky`, as());
      expect(res.body).toEqual({ auth: 'Bearer {{secrets.HIDDEN}}' });
      const events = await w.call('GET', `${F}/executions/${res.headers.get('x-execution-id')}/events`, as());
      expect(JSON.stringify(events.body)).not.toContain('do-not-log-me');
      expect(events.body.events[0].input.expression.auth).toBe('Bearer {{secrets.HIDDEN}}');
    });

    it('refuses bad names and values', async () => {
      expectError(
        await w.call('POST', `${F}/secrets`, { ...as(), body: { name: '1bad', value: 'x' } }),
        400,
        'VALIDATION_FAILED',
        /name/,
      );
      expectError(
        await w.call('POST', `${F}/secrets`, { ...as(), body: { name: 'OK', value: '' } }),
        400,
        'VALIDATION_FAILED',
        /value/,
      );
      expectError(
        await w.call('POST', `${F}/secrets`, { ...as(), body: { name: 'OK' } }),
        400,
        'BAD_USER_INPUT',
        /value/,
      );
      expectError(await w.call('DELETE', `${F}/secrets`, as()), 400, 'BAD_USER_INPUT', /name/);
    });
  });

  describe('webhook receivers', () => {
    it('creates, lists and deletes receivers, with bad input refused', async () => {
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'rcv', slug: 'rcv-fn', steps: [{ name: 'a', kind: 'Transform', expression: 1 }] },
      });
      const made = await w.call('POST', `${F}/webhooks`, { ...as(), body: { function: 'rcv', description: 'Orders' } });
      expect(made.status).toBe(201);
      expect(made.body.webhook).toMatchObject({ slug: 'rcv-fn', function: 'rcv', description: 'Orders' });
      expectError(
        await w.call('POST', `${F}/webhooks`, { ...as(), body: { function: 'rcv' } }),
        409,
        'CONFLICT',
        /slug/,
      );
      expectError(
        await w.call('POST', `${F}/webhooks`, { ...as(), body: { function: 'ghost' } }),
        400,
        'VALIDATION_FAILED',
        /function/,
      );
      expectError(
        await w.call('POST', `${F}/webhooks`, { ...as(), body: { function: 'rcv', slug: 'Bad Slug' } }),
        400,
        'VALIDATION_FAILED',
        /slug/,
      );
      expectError(await w.call('POST', `${F}/webhooks`, { ...as(), body: {} }), 400, 'BAD_USER_INPUT', /function/);
      expect((await w.call('GET', `${F}/webhooks`, as())).body.webhooks.map((x: { slug: string }) => x.slug)).toContain(
        'rcv-fn',
      );
      expect((await w.call('GET', `${F}/webhooks`, as(w.other.apiKey))).body.webhooks).toEqual([]);
      expectError(
        await w.call('DELETE', `${F}/webhooks?id=${made.body.webhook.id}`, as(w.other.apiKey)),
        404,
        'NOT_FOUND',
      );
      expect((await w.call('DELETE', `${F}/webhooks`, { ...as(), body: { id: made.body.webhook.id } })).status).toBe(
        204,
      );
      expectError(await w.call('DELETE', `${F}/webhooks?id=${made.body.webhook.id}`, as()), 404, 'NOT_FOUND');
      expectError(await w.call('DELETE', `${F}/webhooks`, as()), 400, 'BAD_USER_INPUT', /id/);
    });
  });

  describe('cron', () => {
    it('creates cron jobs showing their next runs in the time zone, updates and deletes them', async () => {
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'nightly', steps: [{ name: 'a', kind: 'Transform', expression: '{{ input.body }}' }] },
      });
      const made = await w.call('POST', `${F}/cron`, {
        ...as(),
        body: {
          name: 'nightly-report',
          schedule: '30 2 * * *',
          timezone: 'Europe/Paris',
          function: 'nightly',
          input: { kind: 'report' },
        },
      });
      expect(made.status).toBe(201);
      const job = made.body.cron_job;
      expect(job).toMatchObject({
        name: 'nightly-report',
        schedule: '30 2 * * *',
        timezone: 'Europe/Paris',
        function: 'nightly',
        input: { kind: 'report' },
        enabled: true,
        last_run_at: null,
      });
      expect(job.next_runs).toHaveLength(5);
      for (const t of job.next_runs) {
        const local = new Intl.DateTimeFormat('en-GB', {
          timeZone: 'Europe/Paris',
          hour: '2-digit',
          minute: '2-digit',
        }).format(new Date(t));
        expect(local).toBe('02:30');
      }
      expect((await w.call('GET', `${F}/cron`, as())).body.cron_jobs.map((c: { name: string }) => c.name)).toContain(
        'nightly-report',
      );
      const off = await w.call('PUT', `${F}/cron/${job.id}`, { ...as(), body: { enabled: false } });
      expect(off.body.cron_job).toMatchObject({ enabled: false, next_runs: [] });
      expectError(
        await w.call('POST', `${F}/cron`, {
          ...as(),
          body: { name: 'nightly-report', schedule: '* * * * *', function: 'nightly' },
        }),
        409,
        'CONFLICT',
      );
      expect((await w.call('DELETE', `${F}/cron?id=${job.id}`, as())).status).toBe(204);
      expectError(await w.call('DELETE', `${F}/cron?id=${job.id}`, as()), 404, 'NOT_FOUND');
    });

    it('refuses bad schedules, time zones and functions', async () => {
      expectError(
        await w.call('POST', `${F}/cron`, { ...as(), body: { name: 'c', schedule: 'every day', function: 'nightly' } }),
        400,
        'VALIDATION_FAILED',
        /schedule/,
      );
      expectError(
        await w.call('POST', `${F}/cron`, {
          ...as(),
          body: { name: 'c', schedule: '61 * * * *', function: 'nightly' },
        }),
        400,
        'VALIDATION_FAILED',
        /schedule/,
      );
      expectError(
        await w.call('POST', `${F}/cron`, {
          ...as(),
          body: { name: 'c', schedule: '* * * * *', timezone: 'Mars/Olympus', function: 'nightly' },
        }),
        400,
        'VALIDATION_FAILED',
        /timezone/,
      );
      expectError(
        await w.call('POST', `${F}/cron`, { ...as(), body: { name: 'c', schedule: '* * * * *', function: 'ghost' } }),
        400,
        'VALIDATION_FAILED',
        /function/,
      );
      expectError(
        await w.call('POST', `${F}/cron`, { ...as(), body: { name: 'c', schedule: '* * * * *' } }),
        400,
        'BAD_USER_INPUT',
        /function/,
      );
      expectError(await w.call('PUT', `${F}/cron/${UNKNOWN}`, { ...as(), body: { enabled: true } }), 404, 'NOT_FOUND');
      expectError(await w.call('DELETE', `${F}/cron?id=nope`, as()), 404, 'NOT_FOUND');
    });
  });

  describe('e-mail templates', () => {
    it('creates, reads, previews, updates and deletes templates', async () => {
      const made = await w.call('POST', `${F}/email-templates`, {
        ...as(),
        body: {
          name: 'welcome',
          subject: 'Welcome {{ name }}',
          html: '<p>Hi {{ name }}, <a href="{{ link }}">start</a></p>',
          text: 'Hi {{ name }}: {{ link }}',
        },
      });
      expect(made.status).toBe(201);
      const t = made.body.email_template;
      expect(t).toMatchObject({ name: 'welcome', variables: ['link', 'name'] });
      expect((await w.call('GET', `${F}/email-templates/${t.id}`, as())).body.email_template.subject).toBe(
        'Welcome {{ name }}',
      );
      expect(
        (await w.call('GET', `${F}/email-templates`, as())).body.email_templates.map((x: { name: string }) => x.name),
      ).toContain('welcome');
      const preview = await w.call('POST', `${F}/email-templates/${t.id}/preview`, {
        ...as(),
        body: { variables: { name: '<Ada>', link: 'https://x.example' } },
      });
      expect(preview.body.preview).toEqual({
        subject: 'Welcome <Ada>',
        html: '<p>Hi &lt;Ada&gt;, <a href="https://x.example">start</a></p>',
        text: 'Hi <Ada>: https://x.example',
      });
      const upd = await w.call('PUT', `${F}/email-templates?id=${t.id}`, {
        ...as(),
        body: { subject: 'Hello {{ name }}' },
      });
      expect(upd.body.email_template).toMatchObject({ subject: 'Hello {{ name }}', text: 'Hi {{ name }}: {{ link }}' });
      const upd2 = await w.call('PUT', `${F}/email-templates`, {
        ...as(),
        body: { id: t.id, text: 'Plain {{ name }}' },
      });
      expect(upd2.body.email_template.text).toBe('Plain {{ name }}');
      expect((await w.call('DELETE', `${F}/email-templates`, { ...as(), body: { id: t.id } })).status).toBe(204);
      expectError(await w.call('GET', `${F}/email-templates/${t.id}`, as()), 404, 'NOT_FOUND');
    });

    it('refuses bad templates and unknown ids', async () => {
      expectError(
        await w.call('POST', `${F}/email-templates`, {
          ...as(),
          body: { name: 'x', subject: 'Hi {{ name = 1 }}', text: 't' },
        }),
        400,
        'VALIDATION_FAILED',
        /subject/,
      );
      expectError(
        await w.call('POST', `${F}/email-templates`, { ...as(), body: { name: 'x', subject: 's' } }),
        400,
        'VALIDATION_FAILED',
        /html or text/,
      );
      expectError(
        await w.call('POST', `${F}/email-templates`, { ...as(), body: { name: 'bad name', subject: 's', text: 't' } }),
        400,
        'VALIDATION_FAILED',
        /name/,
      );
      expectError(
        await w.call('PUT', `${F}/email-templates?id=${UNKNOWN}`, { ...as(), body: { subject: 's' } }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await w.call('PUT', `${F}/email-templates`, { ...as(), body: { subject: 's' } }),
        400,
        'BAD_USER_INPUT',
        /id/,
      );
      expectError(await w.call('DELETE', `${F}/email-templates?id=${UNKNOWN}`, as()), 404, 'NOT_FOUND');
      expectError(
        await w.call('POST', `${F}/email-templates/${UNKNOWN}/preview`, { ...as(), body: {} }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('e-mail config', () => {
    it('keeps the password write-only and refuses bad settings', async () => {
      expect((await w.call('GET', `${F}/email-config`, as())).body).toEqual({ email_config: null });
      const set = await w.call('POST', `${F}/email-config`, {
        ...as(),
        body: {
          host: 'smtp.example.com',
          port: 587,
          user: 'mailer',
          password: 'smtp-pass-1',
          from: 'Shop <shop@example.com>',
        },
      });
      expect(set.status).toBe(200);
      expect(set.body.email_config).toMatchObject({
        host: 'smtp.example.com',
        port: 587,
        secure: false,
        user: 'mailer',
        from: 'Shop <shop@example.com>',
        has_password: true,
      });
      expect(JSON.stringify(set.body)).not.toContain('smtp-pass-1');
      expect(JSON.stringify((await w.call('GET', `${F}/email-config`, as())).body)).not.toContain('smtp-pass-1');
      expectError(
        await w.call('POST', `${F}/email-config`, { ...as(), body: { host: 'h', port: 70000, from: 'a@b.c' } }),
        400,
        'VALIDATION_FAILED',
        /port/,
      );
      expectError(
        await w.call('POST', `${F}/email-config`, { ...as(), body: { host: 'h', from: 'not an address' } }),
        400,
        'VALIDATION_FAILED',
        /from/,
      );
      expectError(
        await w.call('POST', `${F}/email-config`, { ...as(), body: { from: 'a@b.c' } }),
        400,
        'BAD_USER_INPUT',
        /host/,
      );
      expectError(
        await w.call('POST', `${F}/email-config/test`, { ...as(), body: { to: 'nope' } }),
        400,
        'VALIDATION_FAILED',
        /to/,
      );
      expect((await w.call('DELETE', `${F}/email-config`, as())).status).toBe(204);
      expectError(await w.call('DELETE', `${F}/email-config`, as()), 404, 'NOT_FOUND');
      expectError(
        await w.call('POST', `${F}/email-config/test`, { ...as(), body: { to: 'a@example.com' } }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('executions and stats', () => {
    it('filters, pages with a cursor and refuses bad filters', async () => {
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'counted', steps: [{ name: 'a', kind: 'Transform', expression: '{{ input.body.i }}' }] },
      });
      for (let i = 0; i < 5; i++) await w.call('POST', `${F}/invoke/counted`, { ...as(), body: { i } });
      const first = await w.call('GET', `${F}/executions?function=counted&first=2`, as());
      expect(first.body.executions.map((e: { output: number }) => e.output)).toEqual([4, 3]);
      const second = await w.call(
        'GET',
        `${F}/executions?function=counted&first=2&after=${first.body.next_cursor}`,
        as(),
      );
      expect(second.body.executions.map((e: { output: number }) => e.output)).toEqual([2, 1]);
      const third = await w.call(
        'GET',
        `${F}/executions?function=counted&first=2&after=${second.body.next_cursor}`,
        as(),
      );
      expect(third.body).toMatchObject({ executions: [{ output: 0 }], next_cursor: null });
      expect((await w.call('GET', `${F}/executions?function=counted&status=failed`, as())).body.executions).toEqual([]);
      expect(
        (await w.call('GET', `${F}/executions?function=counted&trigger=invoke&since=2000-01-01T00:00:00Z`, as())).body
          .executions,
      ).toHaveLength(5);
      expect(
        (await w.call('GET', `${F}/executions?function=counted&until=2000-01-01T00:00:00Z`, as())).body.executions,
      ).toHaveLength(0);
      expect(
        (await w.call('GET', `${F}/executions`, as(w.other.apiKey))).body.executions.some(
          (e: { function: string }) => e.function === 'counted',
        ),
      ).toBe(false);
      expectError(await w.call('GET', `${F}/executions?status=weird`, as()), 400, 'VALIDATION_FAILED', /status/);
      expectError(await w.call('GET', `${F}/executions?trigger=weird`, as()), 400, 'VALIDATION_FAILED', /trigger/);
      expectError(await w.call('GET', `${F}/executions?since=yesterday`, as()), 400, 'VALIDATION_FAILED', /since/);
      expectError(await w.call('GET', `${F}/executions?after=garbage`, as()), 400, 'VALIDATION_FAILED', /after/);
      expectError(await w.call('GET', `${F}/executions?first=1000`, as()), 400, 'VALIDATION_FAILED', /first/);
      const one = first.body.executions[0];
      expectError(await w.call('GET', `${F}/executions/${one.id}`, as(w.other.apiKey)), 404, 'NOT_FOUND');
      expectError(await w.call('GET', `${F}/executions/${one.id}/events`, as(w.other.apiKey)), 404, 'NOT_FOUND');
      expectError(await w.call('GET', `${F}/executions/${UNKNOWN}`, as()), 404, 'NOT_FOUND');
      expectError(await w.call('GET', `${F}/executions/nope/events`, as()), 404, 'NOT_FOUND');
    });

    it('counts by status with p50/p95 durations per function', async () => {
      await w.call('POST', `${F}/functions`, {
        ...as(),
        body: { name: 'flaky', steps: [{ name: 'a', kind: 'Invoke', function: '{{ input.body.target }}' }] },
      });
      await w.call('POST', `${F}/invoke/flaky`, { ...as(), body: { target: 'counted' } });
      await w.call('POST', `${F}/invoke/flaky`, { ...as(), body: { target: 'missing' } });
      const stats = await w.call('GET', `${F}/stats`, as());
      const flaky = stats.body.functions.find((f: { function: string }) => f.function === 'flaky');
      expect(flaky).toMatchObject({ total: 2, succeeded: 1, failed: 1, queued: 0, running: 0 });
      expect(flaky.p50_ms).toBeGreaterThanOrEqual(0);
      expect(flaky.p95_ms).toBeGreaterThanOrEqual(flaky.p50_ms);
      const counted = stats.body.functions.find((f: { function: string }) => f.function === 'counted');
      expect(counted.total).toBeGreaterThanOrEqual(6);
      const empty = await w.call('GET', `${F}/stats?since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00Z`, as());
      expect(empty.body).toEqual({
        since: '2000-01-01T00:00:00.000Z',
        until: '2000-01-02T00:00:00.000Z',
        functions: [],
      });
      expectError(
        await w.call('GET', `${F}/stats?since=2001-01-01T00:00:00Z&until=2000-01-01T00:00:00Z`, as()),
        400,
        'VALIDATION_FAILED',
        /since/,
      );
      expectError(await w.call('GET', `${F}/stats?until=never`, as()), 400, 'VALIDATION_FAILED', /until/);
    });
  });

  describe('project deletion', () => {
    it("removes the project's functions, secrets, receivers, cron jobs and executions", async () => {
      const { call, token } = w;
      const res = await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Doomed' } });
      const { id, api_key: apiKey } = res.body.project;
      await call('POST', `${F}/functions`, {
        apiKey,
        body: { name: 'fn', steps: [{ name: 'a', kind: 'Transform', expression: 1 }] },
      });
      await call('POST', `${F}/secrets`, { apiKey, body: { name: 'S', value: 'v' } });
      await call('POST', `${F}/webhooks`, { apiKey, body: { function: 'fn' } });
      await call('POST', `${F}/cron`, { apiKey, body: { name: 'c', schedule: '0 0 * * *', function: 'fn' } });
      const run = await call('POST', `${F}/invoke/fn`, { apiKey });
      // The receiver is cached once used; the project's removal must drop it too.
      expect((await call('POST', `/webhooks/${id}/fn`, { body: {} })).status).toBe(200);
      const executionId = run.headers.get('x-execution-id');
      expect(executionId).toEqual(expect.any(String));
      expect((await call('DELETE', `/auth/api/v1/projects/${id}`, { token })).status).toBe(204);
      const c = new pg.Client({ connectionString: w.p.tessera!.config.databaseUrl! });
      await c.connect();
      try {
        await waitFor(async () => {
          const counts = await Promise.all(
            ['edge_functions', 'function_secrets', 'webhook_receivers', 'cron_jobs', 'function_executions'].map(
              async (t) =>
                Number((await c.query(`select count(*) from ${t} where project_id = $1`, [id])).rows[0].count),
            ),
          );
          return counts.every((n) => n === 0) ? true : undefined;
        });
        // The step logs go with their executions (a log is a column of its execution's row).
        expect(
          Number(
            (await c.query('select count(*) from function_executions where id = $1', [executionId])).rows[0].count,
          ),
        ).toBe(0);
        const jobs = await c.query(
          `select count(*) from agenda_jobs where name = 'functions.cron.tick' and data->>'projectId' = $1`,
          [id],
        );
        expect(Number(jobs.rows[0].count)).toBe(0);
      } finally {
        await c.end();
      }
      expectError(await call('POST', `/webhooks/${id}/fn`, { body: {} }), 404, 'NOT_FOUND');
    });
  });
});
