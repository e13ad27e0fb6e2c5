// The request id of every Tessera server (platform/http-edge.ts): a sane X-Request-Id is kept, anything else
// replaced, and every line a request's logger writes names it `request_id`, as the access line does.
import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { loadConfig } from '../../platform/config.ts';
import { edgeServerOptions, requestIdOf, upgradeRequestId } from '../../platform/http-edge.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('requestIdOf', () => {
  it.each([
    ['a UUID', '3f0c2a1e-8b7d-4c6e-9f00-1234567890ab'],
    ['a W3C trace id with a span', '4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7'],
    ['128 characters', 'a'.repeat(128)],
  ])('keeps %s', (_what, id) => {
    expect(requestIdOf({ headers: { 'x-request-id': id } })).toBe(id);
  });

  it.each([
    ['129 characters', 'a'.repeat(129)],
    ['an empty id', ''],
    ['a forged JSON field', 'x","level":60,"msg":"forged'],
    ['spaces', 'two words'],
    ['non-ASCII', 'caf\u00e9'],
    ['a control byte', 'a\u0001b'],
  ])('replaces %s with a new UUID', (_what, id) => {
    expect(requestIdOf({ headers: { 'x-request-id': id } })).toMatch(UUID);
  });

  it('makes a new UUID when there is no header, or several', () => {
    expect(requestIdOf({ headers: {} })).toMatch(UUID);
    expect(requestIdOf({ headers: { 'x-request-id': ['a', 'b'] as unknown as string } })).toMatch(UUID);
  });
});

describe('upgradeRequestId', () => {
  const upgrade = (id?: string) => ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as IncomingMessage;

  it('keeps a sane id and answers it again on every later call', () => {
    const req = upgrade('trace-1');
    expect([upgradeRequestId(req), upgradeRequestId(req)]).toEqual(['trace-1', 'trace-1']);
  });

  it('writes the replacement of a forged id (or of none) back on the request, so every listener reads one id', () => {
    for (const req of [upgrade('x","level":60,"msg":"forged'), upgrade()]) {
      const id = upgradeRequestId(req);
      expect(id).toMatch(UUID);
      expect(req.headers['x-request-id']).toBe(id);
      expect(upgradeRequestId(req)).toBe(id);
    }
  });
});

describe('a server built from edgeServerOptions', () => {
  it('logs a request’s own lines under request_id, the id it was handed', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n').filter(Boolean))
          lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const app = Fastify({
      ...edgeServerOptions(loadConfig({})),
      loggerInstance: pino({ level: 'info' }, sink) as FastifyBaseLogger,
      disableRequestLogging: true,
    });
    app.get('/x', async (req) => {
      req.log.warn('something worth a line');
      return { id: req.id };
    });
    const res = await app.inject({ method: 'GET', url: '/x', headers: { 'x-request-id': 'from-the-caller' } });
    await app.close();
    expect(res.json()).toEqual({ id: 'from-the-caller' });
    const line = lines.find((l) => l.msg === 'something worth a line');
    expect(line).toMatchObject({ request_id: 'from-the-caller' });
    expect(line).not.toHaveProperty('reqId');
  });
});
