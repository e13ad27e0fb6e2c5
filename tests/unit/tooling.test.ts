import { describe, expect, it } from '@jest/globals';
import type { Greeting } from '../support/sample-helper.ts';
import { ERROR_LINE, errorHere, greet, shout } from '../support/sample-helper.ts';

describe('test tooling', () => {
  it('runs TypeScript through the type-stripping transform', () => {
    const greeting = { name: 'Tessera' } satisfies Greeting;
    expect(greet(greeting)).toBe('Hello, Tessera!');
    expect(shout(greet({ ...greeting, punctuation: '.' }))).toBe('HELLO, TESSERA.');
  });

  it('keeps source line numbers in stack traces', () => {
    const stack = errorHere().stack ?? '';
    expect(stack).toMatch(new RegExp(`sample-helper\\.ts:${ERROR_LINE}:\\d+`));
  });

  it('runs on Node 24 or newer', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(24);
  });
});
