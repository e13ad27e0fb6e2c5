// Secrets never leave the function engine in clear: through every step kind (Transform, HTTP, Database, Email,
// Invoke) and every way out (a sync invoke's answer, a dry run's trace, an async run's execution record and step
// log, the public webhook's answer to an anonymous caller, the process logs), in the secret's own form and its
// encodings (URL, base64 inside a longer text, hex). Split mode, so the logs of every process are read.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SPLIT_START_HOOK_MS, startSplit, type TestPlatform } from '../support/platform.ts';
import { client, type Res } from '../support/http.ts';
import { attackTable, type Attack } from './attack-table.ts';
import { waitFor } from '../support/wait-for.ts';
import { setPlanLimits } from '../support/plans.ts';

// Characters that URLs, JSON and forms each encode their own way.
const SECRET = 'Tok/3n+Sëcret&v=1 0123456789abcdef';
const NAME = 'API_TOKEN';

/** The secret as an upstream, a URL, a header or a log might carry it. */
const leaks = (): string[] => {
  const bytes = Buffer.from(SECRET, 'utf8');
  const basic = Buffer.from(`user:${SECRET}`, 'utf8').toString('base64');
  return [
    SECRET,
    'Tok/3n+S',
    '0123456789abcdef',
    encodeURIComponent(SECRET),
    encodeURI(SECRET),
    bytes.toString('base64'),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    basic.slice(8, -4),
    JSON.stringify(SECRET).slice(1, -1),
  ];
};

let platform: TestPlatform;
let call: ReturnType<typeof client>;
let apiKey: string;
let projectId: string;
let upstream: http.Server;
let upstreamUrl: string;
let logs = '';

/** An outside API: `/fail/...` answers 500; `/echo` answers what it got, with the `x-token` header re-encoded. */
async function startUpstream(): Promise<void> {
  upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      if (req.url?.startsWith('/fail')) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`no such account: ${decodeURIComponent(req.url)}`);
        return;
      }
      const token = String(req.headers['x-token'] ?? '');
      const b = Buffer.from(token, 'utf8');
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo-token': encodeURIComponent(token) });
      res.end(
        JSON.stringify({
          url: req.url,
          headers: req.headers,
          body,
          encoded: { hex: b.toString('hex'), base64: b.toString('base64'), url: encodeURIComponent(token) },
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
}

const step = (s: Record<string, unknown>) => ({ name: 's', retries: 0, ...s });

/** One function per step kind and way a secret can get out. */
const FUNCTIONS = (): Record<string, unknown[]> => ({
  'transform-output': [
    step({
      kind: 'Transform',
      expression: {
        token: `{{ secrets.${NAME} }}`,
        b64: `{{ base64(secrets.${NAME}) }}`,
        basic: `Basic {{ base64('user:' + secrets.${NAME}) }}`,
      },
    }),
  ],
  'transform-error-result': [
    step({ kind: 'Transform', expression: { error: `bad key {{ secrets.${NAME} }}`, status: 401 } }),
  ],
  'http-secret-in-path': [
    step({ kind: 'HTTP', request: { method: 'GET', url: `${upstreamUrl}/fail/{{ secrets.${NAME} }}` } }),
  ],
  'http-secret-in-host': [
    step({ kind: 'HTTP', request: { method: 'GET', url: `http://{{ secrets.${NAME} }}.invalid/x` } }),
  ],
  'http-invalid-url': [step({ kind: 'HTTP', request: { method: 'GET', url: `{{ secrets.${NAME} }}` } })],
  'http-echo': [
    step({
      kind: 'HTTP',
      request: {
        method: 'POST',
        url: `${upstreamUrl}/echo?key={{ secrets.${NAME} }}`,
        headers: { 'x-token': `{{ secrets.${NAME} }}`, authorization: `Basic {{ base64('user:' + secrets.${NAME}) }}` },
        body: { key: `{{ secrets.${NAME} }}` },
      },
    }),
  ],
  'database-error': [
    step({ kind: 'Database', query: { action: 'rawSQL', sql: `select '{{ secrets.${NAME} }}'::int` } }),
  ],
  'email-error': [step({ kind: 'Email', template: 'none', to: `{{ secrets.${NAME} }}` })],
  'invoke-child': [step({ kind: 'Invoke', function: 'transform-output', input: { passed: `{{ secrets.${NAME} }}` } })],
});

const invoke = (name: string, query = ''): Promise<Res> =>
  call('POST', `/edge/api/v1/invoke/${name}${query}`, { apiKey, body: { hello: 'world' } });

/** Waits for an execution to finish and answers its record and step log as one text. */
async function recordOf(id: string): Promise<Res> {
  const finished = async () => {
    const rec = await call('GET', `/edge/api/v1/executions/${id}`, { apiKey });
    return rec.body?.execution && !['queued', 'running'].includes(rec.body.execution.status) && rec;
  };
  const rec = await waitFor(finished, { timeoutMs: 20_000, intervalMs: 100, message: `execution ${id} to finish` });
  const events = await call('GET', `/edge/api/v1/executions/${id}/events`, { apiKey });
  expect(events.status).toBe(200);
  return {
    status: rec.status,
    body: { execution: rec.body.execution, events: events.body.events },
    headers: rec.headers,
  };
}

beforeAll(async () => {
  await startUpstream();
  platform = await startSplit({
    LOG_LEVEL: 'debug',
    TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true',
    TESSERA_WEBHOOK_RATE_LIMIT: '10000',
  });
  const collect = (d: Buffer) => (logs += d.toString('utf8'));
  platform.child!.stdout!.on('data', collect);
  platform.child!.stderr!.on('data', collect);
  call = client(platform.url);
  const email = `secrets-${Date.now()}@example.com`;
  await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } });
  const token = (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } })).body
    .access_token;
  const project = (await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Secrets' } })).body.project;
  apiKey = project.api_key;
  projectId = project.id;
  expect((await call('POST', '/edge/api/v1/secrets', { apiKey, body: { name: NAME, value: SECRET } })).status).toBe(
    201,
  );
  for (const [name, steps] of Object.entries(FUNCTIONS())) {
    const res = await call('POST', '/edge/api/v1/functions', { apiKey, body: { name, steps } });
    expect({ name, status: res.status, body: res.status === 201 ? null : res.body }).toEqual({
      name,
      status: 201,
      body: null,
    });
    expect((await call('POST', '/edge/api/v1/webhooks', { apiKey, body: { slug: name, function: name } })).status).toBe(
      201,
    );
  }
}, SPLIT_START_HOOK_MS);

afterAll(async () => {
  await platform?.close();
  await new Promise((r) => upstream?.close(r));
});

const refused = { notContaining: leaks };

describe('secrets never leave the engine in clear', () => {
  const rows: Attack[] = [];
  for (const fn of Object.keys(FUNCTIONS())) {
    rows.push(
      {
        name: `${fn}: the answer of a synchronous invoke`,
        attack: async () => {
          const res = await invoke(fn);
          return { ...res, status: res.status >= 200 ? 1 : 0 };
        },
        refused: { status: 1, ...refused },
      },
      {
        name: `${fn}: a dry run's output, error and step trace`,
        attack: async () => {
          const res = await invoke(fn, '?dry_run=true');
          expect(res.status).toBe(200);
          return res;
        },
        refused: { status: 200, ...refused },
      },
      {
        name: `${fn}: an asynchronous run's execution record (input, output, error) and step log`,
        attack: async () => {
          const res = await invoke(fn, '?async=true');
          expect(res.status).toBe(202);
          return await recordOf(res.body.execution_id);
        },
        refused: { status: 200, ...refused },
      },
      {
        name: `${fn}: a synchronous run's execution record and step log`,
        attack: async () => {
          const res = await invoke(fn);
          const id = res.headers.get('x-execution-id') || res.body?.error?.details?.execution_id;
          expect(typeof id).toBe('string');
          return await recordOf(id);
        },
        refused: { status: 200, ...refused },
      },
      {
        name: `${fn}: the public webhook's answer to an anonymous caller`,
        attack: async () => {
          const res = await call('POST', `/webhooks/${projectId}/${fn}`, { body: { hello: 'world' } });
          return { ...res, status: res.status >= 200 ? 1 : 0 };
        },
        refused: { status: 1, ...refused },
      },
    );
  }
  attackTable(rows);

  it("tells an anonymous webhook caller only that the run failed, and the execution's id", async () => {
    const res = await call('POST', `/webhooks/${projectId}/http-secret-in-path`, { body: {} });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('FUNCTION_FAILED');
    expect(res.body.error.details).toEqual({ execution_id: expect.any(String) });
    // (The execution's id is taken out first: a random UUID may well contain "500".)
    const id = res.body.error.details.execution_id as string;
    expect(res.body.error.message.replace(id, '<id>')).toBe('The function failed; its execution <id> says why');
    // The project itself sees why, redacted, in the record.
    const rec = await recordOf(res.body.error.details.execution_id);
    expect(rec.body.execution.error.message).toMatch(/answered 500/);
  });

  it('records the HTTP step URL with {{secrets.NAME}} where the secret was', async () => {
    const res = await invoke('http-echo', '?dry_run=true');
    const started = res.body.trace.find((e: { type: string }) => e.type === 'started');
    expect(started.input.request.url).toBe(`${upstreamUrl}/echo?key={{secrets.${NAME}}}`);
    expect(started.input.request.headers['x-token']).toBe(`{{secrets.${NAME}}}`);
    const sync = await invoke('http-echo');
    expect(sync.body.encoded).toEqual({
      hex: `{{secrets.${NAME}}}`,
      base64: `{{secrets.${NAME}}}`,
      url: `{{secrets.${NAME}}}`,
    });
    expect(sync.body.headers.authorization).toMatch(/^Basic .*\{\{secrets\.API_TOKEN\}\}/);
  });

  it('lets a function use its secrets where they are meant to go (the outside API got the real value)', async () => {
    // The upstream echoed it back: redacted on the way out, so the request carried the value itself.
    const sync = await invoke('http-echo');
    expect(sync.status).toBe(200);
    expect(sync.body.body).toBe(JSON.stringify({ key: `{{secrets.${NAME}}}` }));
  });

  it('writes none of it to the logs of any process', async () => {
    // A cron job failing every second logs its error (redacted) in the functions process. Every second is under the
    // free plan's minimum interval (10 s): the operator allows it for this test.
    await setPlanLimits(platform, 'free', { min_cron_interval_seconds: 1 });
    const cron = await call('POST', '/edge/api/v1/cron', {
      apiKey,
      body: { name: 'leaky', schedule: '* * * * * *', timezone: 'UTC', function: 'http-secret-in-path' },
    });
    expect(cron.status).toBe(201);
    await waitFor(() => /cron run failed/.test(logs), {
      timeoutMs: 15_000,
      intervalMs: 200,
      message: 'the failed cron run in the log',
    });
    await call('DELETE', `/edge/api/v1/cron?id=${cron.body.cron_job.id}`, { apiKey });
    expect(logs.length).toBeGreaterThan(1000);
    for (const leak of leaks()) expect({ leak, found: logs.includes(leak) }).toEqual({ leak, found: false });
  }, 30_000);
});
