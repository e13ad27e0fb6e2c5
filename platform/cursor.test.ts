import { describe, expect, it } from '@jest/globals';
import { decodeCursor, decodeTimeCursor, encodeCursor, encodeTimeCursor, timePage } from './cursor.ts';
import { AppError } from './errors.ts';

const ID = '0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e00';
const b64 = (text: string) => Buffer.from(text).toString('base64url');

/** The error a call throws (or fails the test when it throws none). */
function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('time cursors', () => {
  it('give back the creation time and id they were made from', () => {
    const at = new Date('2026-11-24T10:00:00.123Z');
    expect(decodeTimeCursor('after', encodeTimeCursor(at, ID))).toEqual({ createdAt: at, id: ID });
  });

  it('are opaque URL-safe text', () => {
    expect(encodeTimeCursor(new Date(), ID)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('mean "from the start" when absent, null or empty', () => {
    for (const none of [undefined, null, '']) expect(decodeTimeCursor('after', none)).toBeUndefined();
  });

  it('refuse a forged or foreign cursor with VALIDATION_FAILED naming the field', () => {
    const forged: unknown[] = [
      'not base64 at all!',
      b64('not json'),
      b64('{}'),
      b64('[]'),
      b64('null'),
      b64('"x"'),
      b64(JSON.stringify(['2026-11-24T10:00:00Z'])),
      b64(JSON.stringify(['2026-11-24T10:00:00Z', 'x'])),
      b64(JSON.stringify(['2026-11-24T10:00:00Z', ID, 'extra'])),
      b64(JSON.stringify(['yesterday', ID])),
      b64(JSON.stringify(['+275760-09-13T00:00:00Z', ID])),
      b64(JSON.stringify(['-000001-01-01T00:00:00Z', ID])),
      b64(JSON.stringify([1700000000000, ID])),
      b64(JSON.stringify(['2026-11-24T10:00:00Z', `${ID}' or 1=1 --`])),
      'A'.repeat(100_000),
      42,
      {},
      ['x'],
    ];
    for (const cursor of forged) {
      const err = refusal(() => decodeTimeCursor('after', cursor));
      expect(err).toBeInstanceOf(AppError);
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.status).toBe(400);
      expect(JSON.stringify(err.details)).toContain('after');
    }
  });

  it('name the field the caller used', () => {
    expect(JSON.stringify(refusal(() => decodeTimeCursor('page.after', 'x')).details)).toContain('page.after');
  });
});

describe('cursors of other keys', () => {
  it('carry any JSON value through, checked by the caller', () => {
    const accept = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
    expect(decodeCursor('after', encodeCursor('orders/2026'), accept)).toBe('orders/2026');
    expect(decodeCursor('after', encodeCursor(['name', 'a.txt', ID]), (v) => v)).toEqual(['name', 'a.txt', ID]);
    expect(refusal(() => decodeCursor('after', encodeCursor(''), accept)).code).toBe('VALIDATION_FAILED');
    expect(refusal(() => decodeCursor('after', encodeCursor(5), accept)).code).toBe('VALIDATION_FAILED');
  });

  it('refuse with the message given', () => {
    const err = refusal(() =>
      decodeCursor(
        'after',
        encodeCursor(['size', 1, ID]),
        () => undefined,
        'is not a cursor returned by this API for this sort',
      ),
    );
    expect(err.message + JSON.stringify(err.details)).toContain('for this sort');
  });
});

describe('timePage', () => {
  const rows = [1, 2, 3].map((n) => ({
    n,
    created_at: new Date(Date.UTC(2026, 0, n)),
    uuid: `0b6f8a52-4a4e-4c38-9d1e-2f9a3c7b1e0${n}`,
  }));
  const map = (r: (typeof rows)[number]) => ({ createdAt: r.created_at, id: r.uuid, n: r.n });

  it('keeps the first rows and gives the cursor after the last one kept when a row is left', () => {
    const page = timePage(rows, 2, map);
    expect(page.items.map((i) => i.n)).toEqual([1, 2]);
    expect(decodeTimeCursor('after', page.nextCursor)).toEqual({ createdAt: rows[1]!.created_at, id: rows[1]!.uuid });
  });

  it('has no cursor on the last page, full or not', () => {
    expect(timePage(rows, 3, map).nextCursor).toBeNull();
    expect(timePage(rows, 5, map).items).toHaveLength(3);
    expect(timePage([], 5, map)).toEqual({ items: [], nextCursor: null });
  });
});
