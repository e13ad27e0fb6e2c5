import { describe, it, expect } from '@jest/globals';
import { GraphQLError } from 'graphql';
import { ERROR_TABLE, AppError, errors, shapeError, statusFor, statusOf, toGraphQLError } from './errors.ts';

describe('error table', () => {
  it('gives every code a 4xx or 5xx status and a default message', () => {
    for (const [code, row] of Object.entries(ERROR_TABLE)) {
      expect(code).toMatch(/^[A-Z][A-Z_]+$/);
      expect(row.status).toBeGreaterThanOrEqual(400);
      expect(row.status).toBeLessThan(600);
      expect(row.message.length).toBeGreaterThan(0);
    }
  });

  it('masks only internal errors', () => {
    const masked = Object.entries(ERROR_TABLE)
      .filter(([, r]) => !r.expose)
      .map(([c]) => c);
    expect(masked).toEqual(['INTERNAL']);
  });

  it('shapes an AppError with its own status, message and details', () => {
    const s = shapeError(errors.notFound('project', 'abc'));
    expect(s).toEqual({
      code: 'NOT_FOUND',
      message: 'project abc not found',
      details: { resource: 'project', id: 'abc' },
      status: 404,
      masked: false,
    });
  });

  it('masks an unknown error and says so', () => {
    const s = shapeError(new Error('connection string postgres://secret leaked'));
    expect(s.code).toBe('INTERNAL');
    expect(s.status).toBe(500);
    expect(s.message).not.toContain('secret');
    expect(s.masked).toBe(true);
  });

  it('keeps an AppError thrown inside a resolver (wrapped by graphql-js)', () => {
    const wrapped = new GraphQLError('x', { originalError: new AppError('CONFLICT', 'name taken') });
    expect(shapeError(wrapped)).toMatchObject({ code: 'CONFLICT', status: 409, message: 'name taken' });
  });

  it('classifies graphql-js document and variable errors as 400', () => {
    expect(shapeError(new GraphQLError('Syntax Error: Unexpected Name "x".')).code).toBe('GRAPHQL_PARSE_FAILED');
    expect(shapeError(new GraphQLError('Variable "$input" got invalid value 1.')).code).toBe('BAD_USER_INPUT');
    expect(shapeError(new GraphQLError('Cannot query field "x" on type "Query".')).status).toBe(400);
  });

  it('puts the code and HTTP status in GraphQL extensions', () => {
    let logged: unknown;
    const e = toGraphQLError(new TypeError('boom'), (c) => (logged = c));
    expect(e.extensions).toMatchObject({ code: 'INTERNAL', http: { status: 500 } });
    expect(e.message).toBe('Internal error');
    expect(logged).toBeInstanceOf(TypeError);
    expect(toGraphQLError(errors.rateLimited(3)).extensions).toMatchObject({
      code: 'RATE_LIMITED',
      details: { retry_after: 3 },
    });
  });

  it('takes the status of a HOOK_REJECTED error from its details (400-599 only), in AppErrors and GraphQL errors alike', () => {
    expect(new AppError('HOOK_REJECTED', 'no', { status: 422 }).status).toBe(422);
    expect(statusFor('HOOK_REJECTED', { status: 200 })).toBe(400);
    expect(statusFor('HOOK_REJECTED', { status: 422.5 })).toBe(400);
    expect(statusFor('HOOK_REJECTED')).toBe(400);
    expect(statusFor('CONFLICT', { status: 422 })).toBe(409);
    const e = toGraphQLError(new AppError('HOOK_REJECTED', 'no', { status: 451 }));
    expect(e.extensions).toMatchObject({ code: 'HOOK_REJECTED', http: { status: 451 } });
    expect(
      shapeError(new GraphQLError('no', { extensions: { code: 'HOOK_REJECTED', details: { status: 403 } } })).status,
    ).toBe(403);
  });

  it('maps unknown codes to 500', () => {
    expect(statusOf('NOPE')).toBe(500);
    expect(statusOf('MFA_REQUIRED')).toBe(401);
  });

  it('answers 503 with Retry-After when the database is away, however the error is wrapped', () => {
    const terminated = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    for (const err of [
      terminated,
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new GraphQLError('x', { originalError: terminated }),
    ]) {
      expect(shapeError(err)).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        status: 503,
        details: { retry_after: 1 },
        masked: false,
      });
    }
    expect(shapeError(Object.assign(new Error('duplicate key'), { code: '23505' })).code).toBe('INTERNAL');
  });
});

describe('stack traces of AppErrors', () => {
  it("are left out of the caller's mistakes (4xx), kept for server errors, and the global limit is given back", () => {
    const limit = Error.stackTraceLimit;
    const refused = errors.rateLimited(3);
    expect(refused.stack).toBe(`AppError: ${refused.message}`);
    expect(new AppError('INTERNAL').stack).toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});
