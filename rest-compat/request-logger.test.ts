import { describe, it, expect } from '@jest/globals';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { lazyRequestLogger } from './request-logger.ts';

function sink(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()),
  });
  const parent = pino(
    { level, redact: { paths: ['secret'], censor: '[redacted]' } },
    stream,
  ) as unknown as FastifyBaseLogger;
  let children = 0;
  const child = parent.child;
  parent.child = function (this: FastifyBaseLogger, b: Record<string, unknown>, o?: Record<string, unknown>) {
    children++;
    return child.call(this, b, o);
  } as FastifyBaseLogger['child'];
  return { parent, lines, children: () => children };
}

describe('the front door request logger (rest-compat/request-logger.ts)', () => {
  it('makes no pino child for a request that logs nothing, or only below the level', () => {
    const s = sink('warn');
    const log = lazyRequestLogger(s.parent, { reqId: 'r1' });
    log.info('not shown');
    log.debug({ a: 1 }, 'not shown');
    expect(s.children()).toBe(0);
    expect(s.lines).toHaveLength(0);
    expect(log.level).toBe('warn');
  });

  it('logs at enabled levels with the request id, redaction applied, and makes children that carry both bindings', async () => {
    const s = sink('info');
    const log = lazyRequestLogger(s.parent, { reqId: 'r2' });
    log.error({ secret: 'hunter2' }, 'it broke');
    log.child({ operation: 'op.one' }).warn('careful');
    await new Promise((r) => setImmediate(r));
    expect(s.children()).toBe(2); // the request's child, made once, and the operation's child of it
    expect(s.lines[0]).toMatchObject({ reqId: 'r2', secret: '[redacted]', msg: 'it broke', level: 50 });
    expect(s.lines[1]).toMatchObject({ reqId: 'r2', operation: 'op.one', msg: 'careful', level: 40 });
  });

  it('follows a level set on it, and makes the child at once when the route has its own options', () => {
    const s = sink('warn');
    const log = lazyRequestLogger(s.parent, { reqId: 'r3' });
    log.level = 'debug';
    log.debug('now shown');
    expect(s.lines).toMatchObject([{ reqId: 'r3', msg: 'now shown' }]);
    const eager = sink('warn');
    lazyRequestLogger(eager.parent, { reqId: 'r4' }, { level: 'info' });
    expect(eager.children()).toBe(1);
  });
});
