import { describe, it, expect } from '@jest/globals';
import { createRedactor } from './redaction.ts';

const SECRET = 'Tok/3n+Sëcret&v=1 0123456789abcdef';
const r = createRedactor({ KEY: SECRET, SHORT: 'abc', OTHER: 'other-secret-value-42' });
const P = '{{secrets.KEY}}';

describe('the redactor of a run', () => {
  it('replaces the value itself, in strings, arrays, objects and object keys', () => {
    expect(r.value({ a: `x${SECRET}y`, b: [SECRET, 1, true, null], [SECRET]: 'k' })).toEqual({
      a: `x${P}y`,
      b: [P, 1, true, null],
      [P]: 'k',
    });
    expect(r.text('other-secret-value-42')).toBe('{{secrets.OTHER}}');
  });

  it('replaces its URL, JSON, hex and base64 forms', () => {
    const bytes = Buffer.from(SECRET, 'utf8');
    for (const form of [
      encodeURIComponent(SECRET),
      encodeURIComponent(SECRET).replace(/%20/g, '+'),
      encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      encodeURI(SECRET),
      JSON.stringify(SECRET).slice(1, -1),
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      bytes.toString('base64'),
      bytes.toString('base64url'),
    ]) {
      expect(r.text(`before ${form} after`)).not.toContain(form.slice(4, -4));
    }
  });

  it('finds the secret base64-encoded inside a longer text, at every byte alignment', () => {
    for (const prefix of ['', 'u', 'us', 'user:', 'a-much-longer-prefix:']) {
      for (const suffix of ['', 'x', 'xy', ':tail']) {
        const encoded = Buffer.from(`${prefix}${SECRET}${suffix}`, 'utf8').toString('base64');
        const out = r.text(`Basic ${encoded}`);
        expect(out).toContain(P);
        // At most a character or two of partial bits is left on either side.
        expect(out.replace(P, '').length).toBeLessThanOrEqual(`Basic ${encoded}`.length - 40);
      }
    }
  });

  it('leaves values too short to be secrets alone, and everything when the project has none', () => {
    expect(r.text('abc abc')).toBe('abc abc');
    const none = createRedactor({});
    const data = { a: SECRET };
    expect(none.value(data)).toBe(data);
  });
});
