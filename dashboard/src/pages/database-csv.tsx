// CSV export and import of a table (loaded only when a table's page opens it: papaparse stays out of the first
// screen). Export pages through the data API's `find` and writes RFC 4180. Import parses the file as a stream
// (papaparse, a chunk at a time, paused while its rows are inserted), maps the header to the table's columns and
// inserts through the data API's `insert` in batches of at most 1000 rows, with a progress bar; refused rows are
// reported by their line in the file. Two modes:
//   - keep going (default): each batch is one insert; a refused batch is split until the refused rows are found, and
//     the others go in;
//   - all or nothing: the whole file goes in one `transaction` (so it must fit one request); one refused row and
//     nothing is kept, the refused lines found by dry runs (GraphQL transactions rolled back).
import { useRef, useState } from 'react';
import Papa from 'papaparse';
import type { Row } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import {
  batches,
  csvRecord,
  dryRunInsert,
  exportPages,
  guessMapping,
  insertSplitting,
  isRowError,
  linesOf,
  rowOf,
  type LineError,
  type LineRow,
} from '../lib/csv.ts';
import type { Column } from '../lib/tables.ts';
import { Button, Check, DataTable, ErrorBox, Form, Section, SelectField } from '../ui/index.tsx';
import { useAction } from '../ui/data.tsx';

/** Most JSON an all-or-nothing import sends: its one request stays under the server's default 1 MiB body limit. */
const ALL_OR_NOTHING_BYTES = 900 * 1024;
/** How much of the file papaparse reads at a time. */
const CHUNK_BYTES = 256 * 1024;
/** Most refused lines listed (the count says how many more). */
const SHOWN_ERRORS = 100;

export default function CsvSection({ table, cols }: { table: string; cols: Column[] }) {
  return (
    <Section title="CSV">
      <CsvExport table={table} cols={cols} />
      <CsvImport table={table} cols={cols} />
    </Section>
  );
}

function CsvExport({ table, cols }: { table: string; cols: Column[] }) {
  const { api } = useProjectCtx();
  const [exported, setExported] = useState<number>();
  const run = useAction({
    run: async () => {
      setExported(0);
      // Each page becomes a Blob part at once, so the rows read are not kept as objects.
      const parts: BlobPart[] = [csvRecord(cols.map((c) => c.name))];
      const total = await exportPages(api, table, cols, (rows) => {
        parts.push(new Blob([rows.map((r) => csvRecord(cols.map((c) => r[c.name]))).join('')]));
        setExported((n) => (n ?? 0) + rows.length);
      });
      const url = URL.createObjectURL(new Blob(parts, { type: 'text/csv;charset=utf-8' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `${table}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      return total;
    },
    done: (n) => `${n} rows exported`,
  });
  return (
    <div>
      <h3>Export</h3>
      <p className="muted">
        Every row as RFC 4180 CSV with a header line. NULL is an empty field, an empty text a quoted empty field; JSON
        and arrays are written as JSON.
      </p>
      <div className="actions">
        <Button busy={run.isPending} onClick={() => run.mutate()}>
          Export CSV
        </Button>
        {exported !== undefined && (
          <span className="muted" role="status">
            {run.isPending ? `${exported} rows read…` : `${exported} rows exported`}
          </span>
        )}
      </div>
      <ErrorBox error={run.error} title="The export failed" />
    </div>
  );
}

type Progress = { read: number; size: number; inserted: number; refused: number; done: boolean };

function CsvImport({ table, cols }: { table: string; cols: Column[] }) {
  const { api, project } = useProjectCtx();
  const [file, setFile] = useState<File | null>(null);
  const [header, setHeader] = useState<string[] | null>(null);
  const [mapping, setMapping] = useState<(string | null)[]>([]);
  const [allOrNothing, setAllOrNothing] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [errors, setErrors] = useState<LineError[]>([]);
  const [problem, setProblem] = useState<string>();
  const picker = useRef<HTMLInputElement>(null);
  const byName = new Map(cols.map((c) => [c.name, c]));

  const choose = (f: File | undefined) => {
    setFile(f ?? null);
    setHeader(null);
    setProgress(null);
    setErrors([]);
    setProblem(undefined);
    if (!f) return;
    Papa.parse<string[]>(f, {
      preview: 1,
      complete: (r) => {
        const h = r.data[0] ?? [];
        if (h.length === 0 || (h.length === 1 && h[0] === '')) return setProblem('The file has no header line.');
        setHeader(h);
        setMapping(guessMapping(h, cols));
      },
      error: (e) => setProblem(e.message),
    });
  };

  const run = useAction({
    run: async () => {
      if (!file || !header) throw new Error('Choose a CSV file first.');
      const refused: LineError[] = [];
      const report = (e: LineError) => {
        refused.push(e);
        setErrors([...refused].sort((a, b) => a.line - b.line));
      };
      const state: Progress = { read: 0, size: file.size, inserted: 0, refused: 0, done: false };
      const show = () => setProgress({ ...state, refused: refused.length });
      show();
      const insert = (rows: Row[]) => api.data.insert({ table, values: rows, returning: false });
      const pending: LineRow[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        for (const batch of batches(pending.splice(0))) {
          state.inserted += await insertSplitting(batch, insert, report);
          show();
        }
      };
      await parseStream(file, {
        header: header.length,
        onRecord: (line, fields) => {
          const row = rowOf(fields, mapping, byName);
          if (typeof row === 'string') return report({ line, message: row });
          pending.push({ line, row });
          pendingBytes += JSON.stringify(row).length;
          // One transaction call: at most 100 operations of 1000 rows, within the body limit.
          if (allOrNothing && (pendingBytes > ALL_OR_NOTHING_BYTES || pending.length > 100_000))
            throw new Error(
              `The file is too large to import all or nothing (one request of at most ${Math.round(ALL_OR_NOTHING_BYTES / 1024)} KB): import it row by row, or split it.`,
            );
        },
        onError: (line, message) => report({ line, message }),
        onChunk: async (read) => {
          state.read = read;
          if (!allOrNothing && pending.length >= 1000) await flush();
          show();
        },
      });
      if (allOrNothing) {
        // Dry runs (transactions rolled back) find the lines the database refuses.
        const dry = (rows: Row[]) => dryRunInsert(api, table, rows);
        const findRefused = async () => {
          for (const b of batches(pending)) await insertSplitting(b, dry, report);
        };
        if (refused.length > 0)
          await findRefused(); // nothing goes in: list every refused line at once
        else if (pending.length) {
          const ops = batches(pending, 1000, ALL_OR_NOTHING_BYTES).map((b) => ({
            action: 'insert',
            table,
            values: b.map((r) => r.row),
            returning: false,
          }));
          try {
            await api.data.transaction(ops);
            state.inserted = pending.length;
          } catch (err) {
            if (!isRowError(err)) throw err;
            await findRefused();
            // Rows refused only together (two lines with the same new key): the transaction's own answer.
            if (refused.length === 0) report({ line: pending[0]!.line, message: (err as Error).message });
          }
        }
      } else await flush();
      state.read = file.size;
      state.done = true;
      show();
      return { inserted: state.inserted, refused: refused.length };
    },
    done: (r) => `${r.inserted} rows imported${r.refused ? `, ${r.refused} refused` : ''}`,
    invalidate: [
      ['rows', project.id, table],
      ['schema', project.id],
    ],
  });

  const mapped = mapping.filter(Boolean).length;
  return (
    <div>
      <h3>Import</h3>
      <p className="muted">
        The first line names the columns. An empty field is NULL (a NOT NULL column with a default takes its default);
        JSON and array columns take JSON. Rows go in through the data API in batches of up to 1000.
      </p>
      <div className="field">
        <label htmlFor="csv-file">CSV file</label>
        <input
          id="csv-file"
          ref={picker}
          type="file"
          accept=".csv,text/csv"
          onChange={(e) => choose(e.target.files?.[0])}
        />
      </div>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      {file && header && (
        <Form aria-label="Import CSV" onSubmit={() => run.mutate()}>
          <DataTable label="Columns of the file" columns={['Field of the file', 'Goes into column']}>
            {header.map((h, i) => (
              <tr key={i}>
                <td>
                  <code>{h}</code>
                </td>
                <td>
                  <SelectField
                    label={`Column for field ${i + 1} (${h})`}
                    value={mapping[i] ?? ''}
                    options={[{ value: '', label: '(skip)' }, ...cols.map((c) => ({ value: c.name, label: c.name }))]}
                    onChange={(e) => setMapping(mapping.map((m, j) => (j === i ? e.target.value || null : m)))}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
          <Check
            label="All or nothing: insert no row unless every row is accepted (the file must fit one request)"
            checked={allOrNothing}
            onChange={(e) => setAllOrNothing(e.target.checked)}
          />
          <p className="muted">
            {allOrNothing
              ? 'One refused row and nothing is inserted; every refused line is listed.'
              : 'Refused rows are listed by line and skipped; the others are inserted.'}
          </p>
          <div className="actions">
            <Button type="submit" variant="primary" busy={run.isPending} disabled={mapped === 0}>
              Import {file.name}
            </Button>
          </div>
        </Form>
      )}
      {progress && (
        <div className="csv-progress">
          <label htmlFor="csv-import-progress">
            {progress.done ? 'Import finished' : 'Importing'}: {progress.inserted} rows inserted
            {progress.refused ? `, ${progress.refused} refused` : ''}
          </label>
          <progress id="csv-import-progress" max={Math.max(progress.size, 1)} value={progress.read} />
        </div>
      )}
      <ErrorBox error={run.error} title="The import stopped" />
      {errors.length > 0 && (
        <div className="error-box" role="alert" aria-label="Refused lines">
          <strong>
            {errors.length} line{errors.length === 1 ? ' was' : 's were'} refused
            {allOrNothing ? ', so nothing was inserted' : ''}
          </strong>
          <ul className="csv-errors">
            {errors.slice(0, SHOWN_ERRORS).map((e, i) => (
              <li key={i}>
                Line {e.line}: {e.message}
              </li>
            ))}
          </ul>
          {errors.length > SHOWN_ERRORS && <p>…and {errors.length - SHOWN_ERRORS} more.</p>}
        </div>
      )}
    </div>
  );
}

/**
 * Parses a CSV file a chunk at a time, pausing while `onChunk` works: each record (after the header) is handed to
 * `onRecord` with the line it starts on; a record papaparse could not read goes to `onError`. An exception thrown by
 * a callback stops the parse and is thrown.
 */
function parseStream(
  file: File,
  on: {
    header: number;
    onRecord: (line: number, fields: string[]) => void;
    onError: (line: number, message: string) => void;
    onChunk: (bytesRead: number) => Promise<void>;
  },
): Promise<void> {
  let line = 1;
  let seenHeader = false;
  return new Promise((resolve, reject) => {
    Papa.parse<string[]>(file, {
      chunkSize: CHUNK_BYTES,
      skipEmptyLines: false,
      chunk: (results, parser) => {
        parser.pause();
        void (async () => {
          try {
            const bad = new Map<number, string>();
            for (const e of results.errors) if (typeof e.row === 'number') bad.set(e.row, e.message);
            results.data.forEach((fields, i) => {
              const at = line;
              line += linesOf(fields);
              if (!seenHeader) {
                seenHeader = true;
                return;
              }
              if (fields.length === 1 && fields[0] === '') return; // an empty line
              const problem = bad.get(i);
              if (problem) on.onError(at, problem);
              else on.onRecord(at, fields);
            });
            // cursor: how far into the file the parser is (in characters; close enough to bytes for progress)
            await on.onChunk(Math.min(results.meta.cursor, file.size));
            parser.resume();
          } catch (err) {
            parser.abort();
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        })();
      },
      complete: () => resolve(),
      error: (e) => reject(e),
    });
  });
}
