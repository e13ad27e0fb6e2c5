// Splitting per-project figures into broadcast messages that each fit a NOTIFY payload.
import crypto from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { configureBroadcasts, sealBroadcast } from './broadcast.ts';
import { inMessages, PROJECTS_PER_MESSAGE } from './broadcast-sharing.ts';

describe('inMessages', () => {
  it('answers no message for no entries', () => {
    expect(inMessages([])).toEqual([]);
  });

  it('keeps every entry, at most `perMessage` a message, in order', () => {
    const entries: [string, number][] = [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ];
    expect(inMessages(entries, 2)).toEqual([{ a: 1, b: 2 }, { c: 3 }]);
    expect(inMessages(new Map(entries))).toEqual([{ a: 1, b: 2, c: 3 }]);
  });

  it("fits a full message of project ids with large figures under NOTIFY's 8,000 bytes, signed", () => {
    configureBroadcasts('a test secret of some length, 32+ chars');
    const entries: [string, number][] = Array.from({ length: PROJECTS_PER_MESSAGE * 2 + 1 }, () => [
      crypto.randomUUID(),
      123_456_789.123,
    ]);
    const parts = inMessages(entries);
    expect(parts.map((p) => Object.keys(p).length)).toEqual([PROJECTS_PER_MESSAGE, PROJECTS_PER_MESSAGE, 1]);
    for (const ms of parts) {
      const sealed = sealBroadcast('data.statement-time', { origin: crypto.randomUUID(), at: Date.now(), ms });
      expect(Buffer.byteLength(sealed)).toBeLessThan(8_000);
    }
  });
});
