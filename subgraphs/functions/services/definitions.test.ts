// The rules of a function definition, checked when it is saved.
import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../../platform/errors.ts';
import { checkDefinition } from './definitions.ts';

function problem(
  input: Record<string, unknown>,
): { message: string; details: Record<string, unknown> | undefined } | null {
  try {
    checkDefinition(input);
    return null;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    expect(err.code).toBe('VALIDATION_FAILED');
    return { message: err.message, details: err.details };
  }
}

const transform = (name: string, expression: unknown, extra: Record<string, unknown> = {}) => ({
  name,
  kind: 'Transform',
  expression,
  ...extra,
});

describe('function definitions', () => {
  it('accepts a valid definition and fills the defaults', () => {
    const d = checkDefinition({
      name: 'Orders_Hook',
      steps: [transform('a', '{{ input.body }}'), transform('b', '{{ steps.a.body }}', { return: true })],
    });
    expect(d).toMatchObject({
      name: 'Orders_Hook',
      slug: 'orders-hook',
      description: '',
      timeoutMs: 10_000,
      retries: 0,
    });
    expect(d.compiled.map((c) => c.returns)).toEqual([false, true]);
  });

  it('refuses duplicate step names, naming the step and field', () => {
    expect(problem({ name: 'f', steps: [transform('a', 1), transform('a', 2)] })?.details).toEqual({
      step: 'a',
      field: 'name',
      index: 1,
    });
  });

  it('refuses unknown kinds, naming the kinds there are', () => {
    const p = problem({ name: 'f', steps: [{ name: 'q', kind: 'Sql', query: 'select 1' }] });
    expect(p?.details).toEqual({ step: 'q', field: 'kind', index: 0 });
    expect(p?.message).toMatch(/Transform, Database, HTTP, Email, Invoke/);
  });

  it('accepts Database steps with templates and refuses unknown actions, missing tables and foreign fields', () => {
    const db = (query: unknown) => ({ name: 'f', steps: [transform('a', 1), { name: 'q', kind: 'Database', query }] });
    expect(
      problem(db({ action: 'insert', table: '{{ input.body.table }}', values: { n: '{{ steps.a.body }}' } })),
    ).toBeNull();
    expect(problem(db({ action: 'transaction', operations: [{ action: 'find', table: 't' }] }))).toBeNull();
    expect(problem(db({ action: 'upsert', table: 't' }))?.details).toMatchObject({ step: 'q', field: 'query.action' });
    expect(problem(db({ table: 't' }))?.message).toMatch(/find, findOne, insert/);
    expect(problem(db({ action: 'find' }))?.details).toMatchObject({ step: 'q', field: 'query.table' });
    expect(problem(db({ action: 'find', table: 7 }))?.details).toMatchObject({ step: 'q', field: 'query.table' });
    expect(problem(db({ action: 'insert', table: 't' }))?.details).toMatchObject({ step: 'q', field: 'query.values' });
    expect(problem(db({ action: 'find', table: 't', values: {} }))?.details).toMatchObject({
      step: 'q',
      field: 'query.values',
    });
    expect(problem(db({ action: 'find', table: 't', where: { id: '{{ steps.later.body }}' } }))?.details).toMatchObject(
      { step: 'q', field: 'query' },
    );
    expect(problem({ name: 'f', steps: [{ name: 'q', kind: 'Database' }] })?.details).toMatchObject({
      step: 'q',
      field: 'query',
    });
  });

  it('refuses templates that do not parse, naming the step and field', () => {
    expect(problem({ name: 'f', steps: [transform('verify', '{{ input.body. }}')] })?.details).toEqual({
      step: 'verify',
      field: 'expression',
      index: 0,
    });
    expect(problem({ name: 'f', steps: [transform('verify', { deep: ['{{ a = 1 }}'] })] })?.details).toMatchObject({
      step: 'verify',
      field: 'expression.deep[0]',
    });
    const http = {
      name: 'call',
      kind: 'HTTP',
      request: { method: 'POST', url: 'https://example.com', headers: { authorization: '{{ nope }}' } },
    };
    expect(problem({ name: 'f', steps: [http] })?.details).toMatchObject({
      step: 'call',
      field: 'request.headers.authorization',
    });
  });

  it('refuses steps.X that is not an earlier step', () => {
    const later = problem({ name: 'f', steps: [transform('a', '{{ steps.b.body }}'), transform('b', 1)] });
    expect(later?.details).toEqual({ step: 'a', field: 'expression', index: 0 });
    expect(later?.message).toMatch(/runs later/);
    expect(problem({ name: 'f', steps: [transform('a', '{{ steps.a.body }}')] })?.message).toMatch(/its own result/);
    expect(problem({ name: 'f', steps: [transform('a', '{{ steps.ghost.body }}')] })?.message).toMatch(
      /no earlier step/,
    );
    expect(
      problem({ name: 'f', steps: [transform('a', 1, { when: '{{ steps.b.body }}' }), transform('b', 1)] })?.details,
    ).toMatchObject({ step: 'a', field: 'when' });
  });

  it('checks the fields of each kind', () => {
    expect(problem({ name: 'f', steps: [{ name: 'a', kind: 'Transform' }] })?.details).toMatchObject({
      field: 'expression',
    });
    expect(
      problem({ name: 'f', steps: [{ name: 'a', kind: 'HTTP', request: { url: 'ftp://x' } }] })?.details,
    ).toMatchObject({ field: 'request.url' });
    expect(
      problem({ name: 'f', steps: [{ name: 'a', kind: 'HTTP', request: { url: 'https://x', method: 'BREW' } }] })
        ?.details,
    ).toMatchObject({ field: 'request.method' });
    expect(
      problem({ name: 'f', steps: [{ name: 'a', kind: 'HTTP', request: { url: 'https://x', timeout_ms: 0 } }] })
        ?.details,
    ).toMatchObject({ field: 'request.timeout_ms' });
    expect(problem({ name: 'f', steps: [{ name: 'a', kind: 'Email', to: 'a@example.com' }] })?.details).toMatchObject({
      field: 'template',
    });
    expect(
      problem({ name: 'f', steps: [{ name: 'a', kind: 'Invoke', function: 'g', async: 'yes' }] })?.details,
    ).toMatchObject({ field: 'async' });
    expect(problem({ name: 'f', steps: [transform('a', 1, { retries: 11 })] })?.details).toMatchObject({
      field: 'retries',
    });
    expect(problem({ name: 'f', steps: [transform('a', 1, { extra: 1 })] })?.details).toMatchObject({ field: 'extra' });
    expect(problem({ name: 'f', steps: [transform('1a', 1)] })?.details).toMatchObject({ field: 'name' });
  });

  it('checks the function fields', () => {
    expect(problem({ name: '', steps: [transform('a', 1)] })?.details).toEqual({ field: 'name' });
    expect(problem({ name: 'f', slug: 'Not A Slug', steps: [transform('a', 1)] })?.details).toEqual({ field: 'slug' });
    expect(problem({ name: 'f', steps: [] })?.details).toEqual({ field: 'steps' });
    expect(problem({ name: 'f', steps: 'nope' })?.details).toEqual({ field: 'steps' });
    expect(problem({ name: 'f', steps: [transform('a', 1)], timeoutMs: 0 })?.details).toEqual({ field: 'timeout_ms' });
  });
});
