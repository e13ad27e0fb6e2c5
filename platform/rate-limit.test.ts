import { describe, expect, it } from '@jest/globals';
import { AppError } from './errors.ts';
import { createFailureLimiter, createLimitSharing } from './rate-limit.ts';
import { configureBroadcasts } from './broadcast.ts';
import { waitFor } from '../tests/support/wait-for.ts';

// Broadcasts are signed with a key from the internal secret (see platform/secrets.ts).
configureBroadcasts('test-internal-secret-0123456789abcdefghij');

describe('failure limiter', () => {
  it('refuses a key after the allowed failures until its window ends', () => {
    let now = 0;
    const limiter = createFailureLimiter({ limit: 2, windowMs: 60_000, now: () => now });
    limiter.check('a');
    limiter.fail('a');
    limiter.fail('a');
    expect(() => limiter.check('a')).toThrow(AppError);
    try {
      limiter.check('a');
    } catch (err) {
      expect(err).toMatchObject({ code: 'RATE_LIMITED', details: { retry_after: 60 } });
    }
    limiter.check('b');
    now = 60_000;
    limiter.check('a');
  });

  it('forgets a key on reset', () => {
    const limiter = createFailureLimiter({ limit: 1, windowMs: 60_000 });
    limiter.fail('a');
    expect(() => limiter.check('a')).toThrow();
    limiter.reset('a');
    limiter.check('a');
  });

  it('keeps at most maxKeys entries', () => {
    const limiter = createFailureLimiter({ limit: 1, windowMs: 60_000, maxKeys: 2 });
    limiter.fail('a');
    limiter.fail('b');
    limiter.fail('c');
    limiter.check('a');
    expect(() => limiter.check('c')).toThrow();
  });
});

describe('failure limiter shared between processes', () => {
  /** Two "processes" linked like the broadcast links them: each hears the other's messages, not its own. */
  function linkedPair(limit: number) {
    const sent: { from: string; op: string; key: string }[] = [];
    const apply = new Map<string, (op: 'fail' | 'reset', key: string) => void>();
    const scope = (me: string, other: string) => ({
      publish: (op: 'fail' | 'reset', key: string) => {
        sent.push({ from: me, op, key });
        apply.get(other)?.(op, key);
      },
      subscribe: (fn: (op: 'fail' | 'reset', key: string) => void) => void apply.set(me, fn),
    });
    const a = createFailureLimiter({ limit, windowMs: 60_000, share: scope('a', 'b') });
    const b = createFailureLimiter({ limit, windowMs: 60_000, share: scope('b', 'a') });
    return { a, b, sent };
  }

  it('counts failures recorded by the other process, so the limit holds for both together', () => {
    const { a, b } = linkedPair(3);
    a.fail('account:ann@example.com');
    b.fail('account:ann@example.com');
    a.check('account:ann@example.com');
    b.fail('account:ann@example.com');
    expect(() => a.check('account:ann@example.com')).toThrow(
      expect.objectContaining({ code: 'RATE_LIMITED' }) as never,
    );
    expect(() => b.check('account:ann@example.com')).toThrow(AppError);
    b.check('account:bob@example.com');
  });

  it('forgets a key everywhere after a success, and announces only hashed keys', () => {
    const { a, b, sent } = linkedPair(1);
    a.fail('account:ann@example.com');
    expect(() => b.check('account:ann@example.com')).toThrow(AppError);
    b.reset('account:ann@example.com');
    a.check('account:ann@example.com');
    expect(sent.map((m) => m.op)).toEqual(['fail', 'reset']);
    expect(JSON.stringify(sent)).not.toContain('ann@example.com');
    // A reset of a key nobody counted announces nothing (a successful sign-in costs no broadcast).
    a.reset('account:carl@example.com');
    expect(sent).toHaveLength(2);
  });
});

describe('createLimitSharing over the platform broadcasts', () => {
  it("makes one process's failures count in another process on the same database", async () => {
    const { createTestDatabase } = await import('../tests/support/database.ts');
    const { createLogger } = await import('./logger.ts');
    const { publishBroadcastNow } = await import('./broadcast.ts');
    const pg = (await import('pg')).default;
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const logger = createLogger('silent');
    const make = () =>
      createLimitSharing({
        url: db.url,
        logger,
        publish: async (m) => await publishBroadcastNow(client, 'rate-limits.changed', m),
      });
    const one = make();
    const two = make();
    try {
      await one.start();
      await two.start();
      const a = createFailureLimiter({ limit: 2, windowMs: 60_000, share: one.scope('tenant.signIn.account') });
      const b = createFailureLimiter({ limit: 2, windowMs: 60_000, share: two.scope('tenant.signIn.account') });
      const other = createFailureLimiter({ limit: 2, windowMs: 60_000, share: two.scope('identity.signIn.account') });
      a.fail('account:ann');
      a.fail('account:ann');
      // Refused by the other process's limiter once the shared failures reach it.
      await waitFor(
        () => {
          try {
            b.check('account:ann');
            return false;
          } catch (err) {
            expect(err).toMatchObject({ code: 'RATE_LIMITED' });
            return true;
          }
        },
        { timeoutMs: 15_000, intervalMs: 10, message: 'the shared failures to refuse the account' },
      );
      // Another limiter (another scope) is not affected.
      other.check('account:ann');
    } finally {
      await one.stop();
      await two.stop();
      await client.end();
      await db.drop();
    }
  });
});
