// Observability: OpenTelemetry traces exported over OTLP/HTTP to a receiver in this test (one trace across the
// front door, the router process, a subgraph process and PostgreSQL in split mode; across HTTP, GraphQL and pg in
// one-process mode), Prometheus /metrics on every process with counters that move, and the access log.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import {
  startOneProcess,
  startProcess,
  SPLIT_START_HOOK_MS,
  startSplit,
  stopProcess,
  TEST_SECRET,
  type TestPlatform,
} from '../../support/platform.ts';
import { createTestDatabase } from '../../support/database.ts';
import { freePort } from '../../../platform/net.ts';
import { newStorageProject, STORAGE, client, put } from '../storage/storage-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

type Span = {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
};

/** An OTLP/HTTP (JSON) trace receiver: what an OpenTelemetry collector listens for on :4318. */
async function startReceiver(): Promise<{ url: string; spans: Span[]; close: () => Promise<void> }> {
  const spans: Span[] = [];
  type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
  const value = (v: AnyValue) => v.stringValue ?? v.intValue ?? v.boolValue;
  const attrs = (list: { key: string; value: AnyValue }[] = []) =>
    Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: AnyValue }[] };
            scopeSpans: {
              spans: {
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                name: string;
                attributes?: { key: string; value: AnyValue }[];
              }[];
            }[];
          }[];
        };
        for (const rs of body.resourceSpans) {
          const service = String(attrs(rs.resource.attributes)['service.name']);
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                attributes: attrs(s.attributes),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${port}`, spans, close: () => new Promise((r) => server.close(() => r())) };
}

/** Parses the Prometheus text exposition format into samples. */
function parseMetrics(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<ReturnType<typeof parseMetrics>> {
  const res = await fetch(`${url}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await res.text());
}

function sum(samples: ReturnType<typeof parseMetrics>, name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}

const TRACING = { OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_TRACES_SAMPLER: 'always_on' };

describe('split mode, traced and measured', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let p: TestPlatform;
  let layout: { router: { url: string }; subgraphs: Record<string, { url: string }> };
  const METRICS_TOKEN = 'metrics-token-0123456789';

  beforeAll(async () => {
    receiver = await startReceiver();
    p = await startSplit({
      ...TRACING,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      TESSERA_METRICS_TOKEN: METRICS_TOKEN,
    });
    layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as typeof layout;
  }, SPLIT_START_HOOK_MS);
  afterAll(async () => {
    await p?.close();
    await receiver?.close();
  }, 60_000);

  it('exports one trace across the front door, the router process, a subgraph process and PostgreSQL', async () => {
    const project = await newStorageProject(p.url);
    // The usage read spans two subgraphs, so the front door hands it to the router process (no fast path).
    const res = await fetch(`${p.url}${STORAGE}/usage`, { headers: { 'x-api-key': project.apiKey } });
    expect(res.status).toBe(200);
    const requestTraceOf = () =>
      receiver.spans.find(
        (s) =>
          s.service === 'tessera-front-door' &&
          s.name.startsWith('GET') &&
          [s.attributes['http.route'], s.attributes['url.path'], s.attributes['http.target']].some((v) =>
            String(v ?? '').includes('/usage'),
          ),
      );
    const root = await waitFor(requestTraceOf, { message: 'the front door span of the usage request' });
    const trace = await waitFor(
      () => {
        const spans = receiver.spans.filter((s) => s.traceId === root.traceId);
        const services = new Set(spans.map((s) => s.service));
        const db = spans.some(
          (s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql',
        );
        // Each process exports in its own batches, so a child can arrive before its parent: wait for the whole tree.
        const ids = new Set(spans.map((s) => s.spanId));
        const complete = spans.every((s) => s === root || (s.parentSpanId && ids.has(s.parentSpanId)));
        return services.has('tessera-router') &&
          (services.has('tessera-storage') || services.has('tessera-tenant')) &&
          db &&
          complete
          ? spans
          : undefined;
      },
      { message: 'spans of the router, a subgraph and PostgreSQL in one complete tree', timeoutMs: 30_000 },
    );
    const services = new Set(trace.map((s) => s.service));
    expect(services.size).toBeGreaterThanOrEqual(3);
    // One tree: every span but the root has its parent in the trace.
    const ids = new Set(trace.map((s) => s.spanId));
    const roots = trace.filter((s) => !s.parentSpanId || !ids.has(s.parentSpanId));
    expect(roots.map((s) => s.service)).toEqual(['tessera-front-door']);
    // GraphQL execution spans in a subgraph.
    expect(
      trace.some((s) => s.name.startsWith('graphql.') || s.attributes['graphql.operation.type'] !== undefined),
    ).toBe(true);
  }, 60_000);

  it('serves /metrics on every process, only with the metrics token, with counters that move', async () => {
    const processes = [
      p.url,
      layout.router.url,
      ...Object.values(layout.subgraphs).map((s) => s.url.replace(/\/graphql$/, '')),
    ];
    for (const url of processes) {
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      expect(
        (await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status,
      ).toBe(401);
    }
    const auth = { authorization: `Bearer ${METRICS_TOKEN}` };
    const storageUrl = layout.subgraphs.storage!.url.replace(/\/graphql$/, '');
    const before = await scrape(p.url, auth);
    const storageBefore = await scrape(storageUrl, auth);
    const project = await newStorageProject(p.url);
    expect((await put(p.url, project, 'docs', 'a.txt', 'x'.repeat(1000), { confirm: true })).status).toBe(201);
    const after = await scrape(p.url, auth);
    const storageAfter = await scrape(storageUrl, auth);
    const login = {
      name: 'tessera_http_requests_total',
      labels: { route: '/auth/api/v1/tenant/login', method: 'POST', status: '200' },
    };
    expect(sum(after, login.name, login.labels)).toBeGreaterThan(sum(before, login.name, login.labels));
    expect(
      sum(after, 'tessera_http_request_duration_seconds_count', { route: '/auth/api/v1/tenant/login' }),
    ).toBeGreaterThan(
      sum(before, 'tessera_http_request_duration_seconds_count', { route: '/auth/api/v1/tenant/login' }),
    );
    expect(after.find((s) => s.name === 'tessera_http_requests_total')!.labels.role).toBe('front-door');
    expect(
      sum(storageAfter, 'tessera_graphql_operations_total', { subgraph: 'storage', type: 'mutation', outcome: 'ok' }),
    ).toBeGreaterThan(
      sum(storageBefore, 'tessera_graphql_operations_total', { subgraph: 'storage', type: 'mutation', outcome: 'ok' }),
    );
    expect(sum(storageAfter, 'tessera_upload_bytes_total') - sum(storageBefore, 'tessera_upload_bytes_total')).toBe(
      1000,
    );
    expect(
      storageAfter.some(
        (s) =>
          s.name === 'tessera_db_pool_connections' &&
          s.labels.pool === 'subgraph:storage' &&
          s.labels.state === 'total',
      ),
    ).toBe(true);
    expect(storageAfter.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    // The data process reports its project connections (one budget for every project) beside its platform pool.
    const data = await scrape(layout.subgraphs.data!.url.replace(/\/graphql$/, ''), auth);
    for (const pool of ['data:projects', 'data:admin']) {
      expect(
        data.some(
          (s) => s.name === 'tessera_db_pool_connections' && s.labels.pool === pool && s.labels.state === 'waiting',
        ),
      ).toBe(true);
    }
    // The functions process reports its scheduler's queue.
    const functions = await scrape(layout.subgraphs.functions!.url.replace(/\/graphql$/, ''), auth);
    expect(functions.some((s) => s.name === 'tessera_scheduler_queue_depth')).toBe(true);
    expect(functions.some((s) => s.name === 'tessera_scheduler_lag_seconds')).toBe(true);
  }, 60_000);
});

describe('one-process mode, traced', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let child: Awaited<ReturnType<typeof startProcess>> | undefined;
  let drop: (() => Promise<void>) | undefined;
  let url = '';
  let dataDir = '';

  beforeAll(async () => {
    receiver = await startReceiver();
    const db = await createTestDatabase();
    drop = db.drop;
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    dataDir = fs.mkdtempSync(path.resolve('.tessera', 'test-data', 'otel-'));
    child = await startProcess(
      [path.resolve('main.ts')],
      {
        ...TRACING,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATABASE_URL: db.url,
        TESSERA_DATA_DIR: dataDir,
        TESSERA_INTERNAL_SECRET: TEST_SECRET,
      },
      `${url}/health`,
    );
  }, 120_000);
  afterAll(async () => {
    if (child) await stopProcess(child);
    await drop?.();
    await receiver?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('exports one trace from the HTTP request through GraphQL execution to PostgreSQL', async () => {
    const call = client(url);
    const res = await call('POST', '/auth/api/v1/tenants/signup', {
      body: { email: `otel-${Date.now()}@example.com`, password: 'correct horse battery', name: 'Otel' },
    });
    expect(res.status).toBe(201);
    const isDb = (s: Span) =>
      s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql';
    const spans = await waitFor(
      () => {
        for (const root of receiver.spans.filter((s) => s.name.startsWith('POST') && !s.parentSpanId)) {
          const t = receiver.spans.filter((s) => s.traceId === root.traceId);
          if (t.some((s) => s.name.startsWith('graphql.')) && t.some(isDb)) return t;
        }
        return undefined;
      },
      { message: 'a trace with the signup request, GraphQL and PostgreSQL spans', timeoutMs: 30_000 },
    );
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['tessera']));
  }, 60_000);
});

describe('the access log and metrics without a token', () => {
  let p: TestPlatform;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n').filter(Boolean))
          lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    p = await startOneProcess({}, pino({ level: 'info' }, sink));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
  }, 60_000);

  it('writes one line per request with method, route, status, duration, request id and project', async () => {
    const project = await newStorageProject(p.url);
    const res = await fetch(`${p.url}${STORAGE}/usage`, {
      headers: { 'x-api-key': project.apiKey, 'x-request-id': 'access-log-check' },
    });
    expect(res.status).toBe(200);
    const line = await waitFor(() => lines.find((l) => l.msg === 'request' && l.request_id === 'access-log-check'), {
      message: 'the access log line',
    });
    expect(line).toMatchObject({ method: 'GET', route: `${STORAGE}/usage`, status: 200, project: project.id });
    expect(typeof line.duration_ms).toBe('number');
    expect(lines.filter((l) => l.msg === 'request' && l.request_id === 'access-log-check')).toHaveLength(1);
    // Paths that match no route are logged under a fixed label, not the path a caller chose.
    await fetch(`${p.url}/no/such/path/${'x'.repeat(50)}`);
    const miss = await waitFor(
      () => lines.find((l) => l.msg === 'request' && l.status === 404 && l.route === 'unmatched'),
      { message: 'the unmatched line' },
    );
    expect(JSON.stringify(miss)).not.toContain('xxxxxxxxxx');
  });

  it('answers /metrics to anyone when no token is configured, in the Prometheus format', async () => {
    const samples = await scrape(p.url);
    expect(sum(samples, 'tessera_http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(samples.find((s) => s.name === 'tessera_http_requests_total')!.labels.role).toBe('all');
  });
});
