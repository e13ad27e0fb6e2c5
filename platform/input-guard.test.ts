import { describe, it, expect } from '@jest/globals';
import { checkJsonValue, checkTextRecord, isStorableTime, parseCheckedJson, textProblem } from './input-guard.ts';
import { AppError } from './errors.ts';

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
};

describe('the input guard', () => {
  it('accepts ordinary text, emoji (surrogate pairs) and control characters PostgreSQL stores', () => {
    expect(textProblem('héllo 🎉 \t\n\u0001')).toBeUndefined();
  });

  it('names NUL and lone surrogates', () => {
    expect(textProblem('a\u0000b')).toMatch(/NUL/);
    expect(textProblem('a\ud800b')).toMatch(/surrogate/);
    expect(textProblem('\udc00')).toMatch(/surrogate/);
  });

  it('refuses JSON nested past the limit without recursion (10,000 levels)', () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const err = refusal(() => parseCheckedJson(deep, { maxDepth: 64, where: 'body' }));
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.details).toMatchObject({ limit: 'json_depth', max: 64 });
    expect(() =>
      checkJsonValue(JSON.parse('['.repeat(64) + ']'.repeat(64)), { maxDepth: 64, where: 'body' }),
    ).not.toThrow();
  });

  it('names the field holding bad text, in values and in keys', () => {
    expect(
      refusal(() => checkJsonValue({ values: [{ name: 'x\u0000' }] }, { maxDepth: 10, where: 'body' })).details,
    ).toMatchObject({ field: 'values[0].name' });
    expect(
      refusal(() => checkJsonValue({ where: { ['a\ud800']: 1 } }, { maxDepth: 10, where: 'body' })).message,
    ).toMatch(/key/);
    expect(refusal(() => checkJsonValue('\u0000', { maxDepth: 10, where: 'variables' })).code).toBe(
      'VALIDATION_FAILED',
    );
  });

  it('refuses malformed JSON and prototype poisoning with a 400', () => {
    expect(refusal(() => parseCheckedJson('{"a":', { maxDepth: 10, where: 'body' })).code).toBe('BAD_REQUEST');
    expect(
      refusal(() => parseCheckedJson('{"__proto__": {"admin": true}}', { maxDepth: 10, where: 'body' })).code,
    ).toBe('BAD_REQUEST');
    expect(
      refusal(() => parseCheckedJson('{"a": {"constructor": {"prototype": {}}}}', { maxDepth: 10, where: 'body' }))
        .code,
    ).toBe('BAD_REQUEST');
    expect(parseCheckedJson('{"constructor": "fine"}', { maxDepth: 10, where: 'body' })).toEqual({
      constructor: 'fine',
    });
  });

  it('checks flat records (query strings, path parameters, forms), arrays included', () => {
    expect(refusal(() => checkTextRecord({ id: ['ok', 'b\u0000'] }, 'query')).details).toMatchObject({
      field: 'id',
      source: 'query',
    });
    expect(() => checkTextRecord({ first: '10' }, 'query')).not.toThrow();
  });

  it('keeps times PostgreSQL can store (years 1 to 9999)', () => {
    expect(isStorableTime(new Date('2026-01-01T00:00:00Z'))).toBe(true);
    expect(isStorableTime(new Date('-271821-04-20T00:00:00Z'))).toBe(false);
    expect(isStorableTime(new Date('+275760-09-13T00:00:00Z'))).toBe(false);
    expect(isStorableTime(new Date('nope'))).toBe(false);
  });
});
