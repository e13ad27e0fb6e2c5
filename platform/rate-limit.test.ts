import { describe, expect, it } from '@jest/globals';
import { AppError } from './errors.ts';
import { createFailureLimiter } from './rate-limit.ts';

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
