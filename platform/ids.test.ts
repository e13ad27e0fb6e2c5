import { describe, expect, it } from '@jest/globals';
import { isUuid } from './ids.ts';

describe('isUuid', () => {
  it('takes UUIDs in their canonical text form, in either case', () => {
    for (const good of [
      '0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e00',
      '0B6F8A52-4A4E-4C38-9D1E-2F9A3C7B1E00',
      crypto.randomUUID(),
    ])
      expect(isUuid(good)).toBe(true);
  });

  it('refuses anything else: short, long, non-hex, braces, no dashes, padding, other types', () => {
    const bad: unknown[] = [
      '',
      'x',
      '0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e0',
      '0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e000',
      '0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e0g',
      '{0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e00}',
      '0b6f8a524a4e4c389d1e2f9a3c7b1e00',
      ' 0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e00',
      '0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e00\n',
      "0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e00' or 1=1",
      42,
      null,
      undefined,
      {},
      ['0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e00'],
    ];
    for (const value of bad) expect(isUuid(value)).toBe(false);
  });
});
