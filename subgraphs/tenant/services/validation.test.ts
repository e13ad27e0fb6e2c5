import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../../platform/errors.ts';
import {
  checkName,
  checkPageSize,
  checkPassword,
  checkRedirectUris,
  checkTableName,
  normalizeEmail,
} from './validation.ts';

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError && err.code === 'VALIDATION_FAILED') return err.details?.field as string;
    throw err;
  }
  return undefined;
}

describe('validation', () => {
  it('trims names and bounds them to 1..100 characters', () => {
    expect(checkName('name', '  Shop ')).toBe('Shop');
    expect(fieldOf(() => checkName('name', ' '))).toBe('name');
    expect(fieldOf(() => checkName('name', 'x'.repeat(101)))).toBe('name');
    expect(fieldOf(() => checkName('name', 42))).toBe('name');
  });

  it('lower-cases e-mails and refuses malformed ones', () => {
    expect(normalizeEmail(' Ada@Example.COM ')).toBe('ada@example.com');
    for (const bad of [
      'ada',
      'ada@',
      '@example.com',
      'ada@example',
      'a da@example.com',
      'ada@@example.com',
      `${'a'.repeat(250)}@example.com`,
    ]) {
      expect(fieldOf(() => normalizeEmail(bad))).toBe('email');
    }
  });

  it('needs passwords of at least 8 characters', () => {
    expect(checkPassword('12345678')).toBe('12345678');
    expect(fieldOf(() => checkPassword('1234567'))).toBe('password');
  });

  it('accepts plain SQL identifiers up to 63 characters as table names', () => {
    expect(checkTableName('table', 'orders_2024')).toBe('orders_2024');
    expect(checkTableName('table', '_x')).toBe('_x');
    for (const bad of ['public.orders', '2024_orders', 'or-ders', 'x'.repeat(64), '', 'ordérs'])
      expect(fieldOf(() => checkTableName('table', bad))).toBe('table');
  });

  it('accepts absolute http(s) redirect URIs without fragments, dropping duplicates', () => {
    expect(
      checkRedirectUris('redirectUris', ['https://a.example/cb', 'http://localhost:3000/cb', 'https://a.example/cb']),
    ).toEqual(['https://a.example/cb', 'http://localhost:3000/cb']);
    expect(fieldOf(() => checkRedirectUris('redirectUris', ['https://a.example/cb', '/relative']))).toBe(
      'redirectUris[1]',
    );
    expect(fieldOf(() => checkRedirectUris('redirectUris', ['https://a.example/cb#x']))).toBe('redirectUris[0]');
    expect(fieldOf(() => checkRedirectUris('redirectUris', ['https://user:pw@a.example/cb']))).toBe('redirectUris[0]');
    expect(fieldOf(() => checkRedirectUris('redirectUris', ['custom:callback']))).toBe('redirectUris[0]');
    expect(fieldOf(() => checkRedirectUris('redirectUris', 'https://a.example/cb'))).toBe('redirectUris');
  });

  it('bounds page sizes', () => {
    expect(checkPageSize('first', undefined, 20, 100)).toBe(20);
    expect(checkPageSize('first', 100, 20, 100)).toBe(100);
    expect(fieldOf(() => checkPageSize('first', 0, 20, 100))).toBe('first');
    expect(fieldOf(() => checkPageSize('first', 1.5, 20, 100))).toBe('first');
  });
});
