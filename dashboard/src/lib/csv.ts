// CSV export and import of a table, without the page: RFC 4180 writing, paging a table through the data API's
// `find` (keyset on a one-column primary key, else offset in a fixed order), mapping a file's header to the table's
// columns, typing a field by its column, and inserting in batches where a refused batch is split until the refused
// rows are found (each reported by its line in the file). Parsing is papaparse's (in the page).
// A relative path (not the @tessera/client alias) so the unit tests, type-checked with the root tsconfig, resolve it too.
import type { Row, TesseraClient } from '../../../packages/client/src/index.ts';
import type { Column } from './tables.ts';

/** Most rows one `find` or `insert` call carries (the data API's own limits). */
export const PAGE_ROWS = 1000;
/** Most bytes (as JSON) one insert batch carries: well under the server's default 1 MiB body limit. */
export const BATCH_BYTES = 512 * 1024;

// --- export --------------------------------------------------------------------------------------------------------

/**
 * One field as RFC 4180 writes it: quoted when it holds a quote, a comma, CR or LF (quotes doubled). NULL is an empty
 * unquoted field and the empty string a quoted one (as PostgreSQL's COPY … CSV does), so the file keeps them apart.
 */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s === '' || /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One record, CRLF-terminated. */
export function csvRecord(fields: unknown[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

/** Types whose values cannot be ordered (so cannot order an export of a table without a primary key). */
const UNORDERABLE = /^(json|xml|point|line|lseg|box|path|polygon|circle)$/;

/**
 * Every row of a table, page by page (each page handed to `onPage` before the next is asked): keyset paging on a
 * one-column primary key (each page starts after the last key seen, so a large table costs the same per page), else
 * offset paging ordered by the primary key or, without one, by every orderable column.
 */
export async function exportPages(
  api: TesseraClient,
  table: string,
  cols: Column[],
  onPage: (rows: Row[]) => void | Promise<void>,
  signal?: AbortSignal,
): Promise<number> {
  const pk = cols.filter((c) => c.pk).map((c) => c.name);
  const select = cols.map((c) => c.name);
  let total = 0;
  if (pk.length === 1) {
    const key = pk[0]!;
    let last: unknown;
    for (;;) {
      signal?.throwIfAborted();
      const { rows } = await api.data.find({
        table,
        select,
        where: last === undefined ? undefined : { [key]: { gt: last } },
        orderBy: [{ [key]: 'asc' }],
        limit: PAGE_ROWS,
      });
      if (rows.length === 0) break;
      await onPage(rows);
      total += rows.length;
      if (rows.length < PAGE_ROWS) break;
      last = rows[rows.length - 1]![key];
    }
    return total;
  }
  const order = pk.length ? pk : cols.filter((c) => !UNORDERABLE.test(c.type)).map((c) => c.name);
  for (let offset = 0; ; offset += PAGE_ROWS) {
    signal?.throwIfAborted();
    const { rows } = await api.data.find({ table, select, orderBy: order, limit: PAGE_ROWS, offset });
    if (rows.length === 0) break;
    await onPage(rows);
    total += rows.length;
    if (rows.length < PAGE_ROWS) break;
  }
  return total;
}

// --- import --------------------------------------------------------------------------------------------------------

/** For each header field, the column it fills (null: skipped): the same name, else the same name ignoring case. */
export function guessMapping(header: string[], cols: Column[]): (string | null)[] {
  return header.map((h) => {
    const name = h.trim();
    return (
      cols.find((c) => c.name === name)?.name ??
      cols.find((c) => c.name.toLowerCase() === name.toLowerCase())?.name ??
      null
    );
  });
}

/** How many lines a record takes in the file: 1, plus the line breaks inside its (quoted) fields. */
export function linesOf(fields: string[]): number {
  let n = 1;
  for (const f of fields) n += (f.match(/\r\n|\r|\n/g) ?? []).length;
  return n;
}

/** A row to insert from a record: fields typed by their columns; an error message when a field cannot be. */
export function rowOf(fields: string[], mapping: (string | null)[], cols: Map<string, Column>): Row | string {
  if (fields.length !== mapping.length)
    return `expected ${mapping.length} field${mapping.length === 1 ? '' : 's'}, found ${fields.length}`;
  const row: Row = {};
  for (let i = 0; i < mapping.length; i++) {
    const name = mapping[i];
    if (!name) continue;
    const c = cols.get(name)!;
    const text = fields[i]!;
    if (text === '') {
      // An empty field is NULL; a NOT NULL column with a default takes its default instead.
      if (!c.nullable && c.default !== null) continue;
      row[name] = null;
      continue;
    }
    const t = c.type.toLowerCase();
    if (t === 'json' || t === 'jsonb' || t.endsWith('[]') || t === 'array') {
      try {
        row[name] = JSON.parse(text);
      } catch {
        return `column ${name}: not JSON (${t.endsWith('[]') || t === 'array' ? 'arrays are written as JSON arrays' : t})`;
      }
    } else row[name] = text; // PostgreSQL converts the text to the column's type, and says so when it cannot
  }
  return row;
}

/** A row of the file to insert, with the line it starts on. */
export type LineRow = { line: number; row: Row };
/** A refused line and why. */
export type LineError = { line: number; message: string };

/** Whether an error of an insert is about the rows sent (so splitting the batch finds them), not the call itself. */
export function isRowError(err: unknown): boolean {
  const status = (err as { status?: number }).status;
  return status === 400 || status === 409 || status === 422;
}

/**
 * Inserts `rows` with `insert`; when a batch is refused for its rows, splits it in halves until each refused row is
 * alone, reports it (`onError`), and inserts the rest. Any other failure (the network, the key, a limit) is thrown:
 * the import stops. Answers how many rows went in.
 */
export async function insertSplitting(
  rows: LineRow[],
  insert: (rows: Row[]) => Promise<unknown>,
  onError: (e: LineError) => void,
): Promise<number> {
  try {
    await insert(rows.map((r) => r.row));
    return rows.length;
  } catch (err) {
    if (!isRowError(err)) throw err;
    if (rows.length === 1) {
      onError({ line: rows[0]!.line, message: (err as Error).message });
      return 0;
    }
    const half = Math.ceil(rows.length / 2);
    return (
      (await insertSplitting(rows.slice(0, half), insert, onError)) +
      (await insertSplitting(rows.slice(half), insert, onError))
    );
  }
}

/** Cuts rows into batches of at most PAGE_ROWS rows and about BATCH_BYTES bytes of JSON. */
export function batches(rows: LineRow[], maxRows = PAGE_ROWS, maxBytes = BATCH_BYTES): LineRow[][] {
  const out: LineRow[][] = [];
  let cur: LineRow[] = [];
  let bytes = 0;
  for (const r of rows) {
    const size = JSON.stringify(r.row).length + 1;
    if (cur.length && (cur.length >= maxRows || bytes + size > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(r);
    bytes += size;
  }
  if (cur.length) out.push(cur);
  return out;
}

type GraphQLAnswer = { errors?: { message: string; extensions?: { code?: string; http?: { status?: number } } }[] };

/**
 * Inserts rows in a transaction that is rolled back whatever happens (a dry run): throws what a real insert would.
 * Through GraphQL's `dataTransaction(rollback: true)`: REST bodies have no dry run (docs/architecture.md).
 */
export async function dryRunInsert(api: TesseraClient, table: string, rows: Row[]): Promise<void> {
  const answer = await api.http.request<GraphQLAnswer>('POST', '/graphql', {
    body: {
      query:
        'mutation CsvImportDryRun($operations: JSON!) { dataTransaction(operations: $operations, rollback: true) { results } }',
      variables: { operations: [{ action: 'insert', table, values: rows, returning: false }] },
    },
  });
  const e = answer?.errors?.[0];
  if (e)
    throw Object.assign(new Error(e.message), { status: e.extensions?.http?.status ?? 400, code: e.extensions?.code });
}
