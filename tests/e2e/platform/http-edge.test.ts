// Server protections (issue 13): load shedding past the in-flight and connection caps (503 + Retry-After at once,
// health checks never shed) and slow clients cut off (slowloris), on a platform started with small limits.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { waitFor } from '../../support/wait-for.ts';

let p: TestPlatform;
let call: ReturnType<typeof client>;
let apiKey: string;
let port: number;
/** A server whose answers wait until the test releases them: the slow requests of the shedding test. */
let holder: http.Server;
let holderUrl: string;
const held: http.ServerResponse[] = [];

beforeAll(async () => {
  holder = http.createServer((_req, res) => void held.push(res));
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  holderUrl = `http://127.0.0.1:${(holder.address() as AddressInfo).port}/hold`;
  p = await startOneProcess({
    TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true',
    TESSERA_MAX_INFLIGHT: '3',
    TESSERA_MAX_CONNECTIONS: '20',
    TESSERA_HEADERS_TIMEOUT_MS: '1000',
  });
  call = client(p.url);
  port = Number(new URL(p.url).port);
  await call('POST', '/auth/api/v1/tenants/signup', {
    body: { email: 'edge@example.com', password: 'a long password' },
  });
  const token = (
    await call('POST', '/auth/api/v1/tenant/login', {
      body: { email: 'edge@example.com', password: 'a long password' },
    })
  ).body.access_token;
  apiKey = (await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Edge' } })).body.project.api_key;
  await waitFor(async () => (await call('POST', '/v1/rawSQL', { apiKey, body: { sql: 'select 1' } })).status === 200, {
    message: 'the project database',
  });
}, 60_000);

afterAll(async () => {
  for (const res of held) res.end('{}');
  await p?.close();
  holder?.close();
});

/** Opens a raw socket, sends `text`, resolves with what came back and how long the server took to close it. */
function rawExchange(text: string, timeoutMs = 10_000): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let answer = '';
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    s.on('data', (d) => (answer += d.toString()));
    s.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
    s.on('error', reject);
    s.setTimeout(timeoutMs, () => s.destroy());
  });
}

describe('the HTTP edge', () => {
  it('sheds requests past TESSERA_MAX_INFLIGHT with 503 and Retry-After at once, and never sheds /health', async () => {
    // Three slow requests: functions whose HTTP step waits for a server that answers only when the test says so, so
    // they stay in flight however slow the machine is. Answered at once, not queued behind them: checked by order,
    // not by a clock: the 503 arrives while none of the slow requests has finished (none can).
    expect(
      (
        await call('POST', '/edge/api/v1/functions', {
          apiKey,
          body: { name: 'hold', steps: [{ name: 'wait', kind: 'HTTP', request: { url: holderUrl } }] },
        })
      ).status,
    ).toBe(201);
    let settled = 0;
    const slow = () => call('POST', '/edge/api/v1/invoke/hold', { apiKey }).finally(() => settled++);
    const pending = Array.from({ length: 3 }, slow);
    // Probe until the three slow requests are all in (a loaded machine may take a moment to deliver them).
    let settledWhenShed = -1;
    const shed = await waitFor(
      async () => {
        const r = await call('GET', '/auth/api/v1/plans');
        if (r.status !== 503) return undefined;
        settledWhenShed = settled;
        return r;
      },
      { timeoutMs: 20_000, intervalMs: 30, message: 'a request shed while three slow ones were in flight' },
    );
    expect(shed.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { reason: 'overloaded', retry_after: 1 },
    });
    expect(shed.headers.get('retry-after')).toBe('1');
    expect(settledWhenShed).toBe(0);
    expect((await call('GET', '/health')).status).toBe(200);
    await waitFor(() => held.length === 3, { message: 'the three slow requests at the held server' });
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([200, 200, 200]);
    // The capacity comes back as soon as they finish.
    expect((await call('POST', '/v1/rawSQL', { apiKey, body: { sql: 'select 1' } })).status).toBe(200);
  });

  it('answers 408 and closes the connection of a client that never finishes its headers (slowloris)', async () => {
    // The socket gives up after 25 s: a close before that with the server's 408 is the server cutting it off (a lower
    // bound only: no machine is too slow for it).
    const { answer, closedAfterMs } = await rawExchange('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ', 25_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
    expect(closedAfterMs).toBeGreaterThanOrEqual(900);
  });

  it('answers 503 on connections past TESSERA_MAX_CONNECTIONS and closes them', async () => {
    const idle: net.Socket[] = [];
    for (let i = 0; i < 21; i++) {
      idle.push(
        await new Promise<net.Socket>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => resolve(s));
          s.on('error', () => {});
        }),
      );
    }
    const { answer } = await rawExchange('GET /auth/api/v1/plans HTTP/1.1\r\nHost: x\r\n\r\n', 25_000);
    for (const s of idle) s.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer.toLowerCase()).toContain('retry-after: 1');
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('TESSERA_MAX_CONNECTIONS');
    await waitFor(async () => (await call('GET', '/auth/api/v1/plans')).status === 200, {
      message: 'capacity to come back',
    });
  });
});
