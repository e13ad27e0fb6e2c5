import { describe, expect, it } from '@jest/globals';
import { createSecretBox, deriveKey, randomToken, safeEqual, sha256Hex } from './crypto.ts';

const SECRET = 's'.repeat(40);

describe('secret box', () => {
  it('opens what it sealed', () => {
    const box = createSecretBox(SECRET);
    for (const plain of ['tsk_abc', '', 'ünïcødé ✓', 'x'.repeat(10_000)])
      expect(box.decrypt(box.encrypt(plain))).toBe(plain);
  });

  it('seals the same value differently each time', () => {
    const box = createSecretBox(SECRET);
    const a = box.encrypt('same');
    expect(box.encrypt('same')).not.toBe(a);
    expect(a).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/);
    expect(a).not.toContain('same');
  });

  it('refuses a value sealed under another secret or for another purpose', () => {
    const sealed = createSecretBox(SECRET).encrypt('secret');
    expect(() => createSecretBox('t'.repeat(40)).decrypt(sealed)).toThrow();
    expect(() => createSecretBox(SECRET, 'other').decrypt(sealed)).toThrow();
  });

  it('refuses a tampered value', () => {
    const box = createSecretBox(SECRET);
    const [v, iv, tag, body] = box.encrypt('secret value').split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(() => box.decrypt([v, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => box.decrypt('garbage')).toThrow('not a sealed value');
    expect(() => box.decrypt(['v2', iv, tag, body].join('.'))).toThrow('not a sealed value');
  });

  it('needs an internal secret', () => {
    expect(() => deriveKey('', 'x')).toThrow('internal secret');
  });
});

describe('hashing and tokens', () => {
  it('computes the hex SHA-256 of a string', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('makes prefixed random base64url tokens of the requested size', () => {
    const t = randomToken('tsk_');
    expect(t).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
    expect(randomToken('tsk_')).not.toBe(t);
    expect(randomToken('x_', 18)).toMatch(/^x_[A-Za-z0-9_-]{24}$/);
  });

  it('compares strings in constant time, false on different lengths', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});
