// Opaque paging cursors: base64url of the JSON of the last item's sort values. A cursor comes back from the
// caller, so it is input like any other: decoding checks every value before it reaches a query (a forged cursor
// is a 400 VALIDATION_FAILED naming the field, never a SQL error), and a cursor from another list or sort is refused.
import { errors } from './errors.ts';
import { isUuid } from './ids.ts';
import { isStorableTime } from './input-guard.ts';

const NOT_A_CURSOR = 'is not a cursor returned by this API';
/** Longer than any cursor this API makes; a larger one is refused before it is decoded. */
const CURSOR_MAX = 4096;

/** The cursor of `value` (any JSON value: the sort keys of the last item shown). */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * The value inside a cursor the API made, checked by `accept` (which answers undefined for anything it does not
 * take). Undefined when no cursor was sent (absent, null or empty); VALIDATION_FAILED naming `field` otherwise.
 */
export function decodeCursor<T>(
  field: string,
  cursor: unknown,
  accept: (value: unknown) => T | undefined,
  message = NOT_A_CURSOR,
): T | undefined {
  if (cursor === undefined || cursor === null || cursor === '') return undefined;
  if (typeof cursor === 'string' && cursor.length <= CURSOR_MAX) {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      value = undefined;
    }
    const accepted = value === undefined ? undefined : accept(value);
    if (accepted !== undefined) return accepted;
  }
  throw errors.validation(field, message);
}

/** The common keyset: newest or oldest first by creation time, ties broken by id. */
export type TimeKey = { createdAt: Date; id: string };

/** The cursor after the item `createdAt`, `id` in a list sorted by (created_at, id). */
export function encodeTimeCursor(createdAt: Date, id: string): string {
  return encodeCursor([createdAt.toISOString(), id]);
}

/**
 * One page of a list by (created_at, id): the first `first` of `rows` (read with `limit first + 1`), each through
 * `map`, and the cursor after the last one, or null when no row is left after it.
 */
export function timePage<R, T extends TimeKey>(
  rows: readonly R[],
  first: number,
  map: (row: R) => T,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, first).map(map);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > first && last ? encodeTimeCursor(last.createdAt, last.id) : null };
}

/** The (createdAt, id) of a cursor from encodeTimeCursor; undefined without one, VALIDATION_FAILED for a bad one. */
export function decodeTimeCursor(field: string, cursor: unknown): TimeKey | undefined {
  return decodeCursor(field, cursor, (v) => {
    if (!Array.isArray(v) || v.length !== 2) return undefined;
    const [at, id] = v as unknown[];
    const createdAt = typeof at === 'string' ? new Date(at) : undefined;
    return createdAt && isStorableTime(createdAt) && isUuid(id) ? { createdAt, id } : undefined;
  });
}
