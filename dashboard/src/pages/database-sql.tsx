// The SQL editor: CodeMirror 6 with PostgreSQL highlighting (and the project's tables and columns for completion),
// one statement with `$1` parameters or a whole script run as one transaction (each statement's command tag and row
// count, then the last statement's rows), a history of what ran, and saved snippets. History and snippets are kept in
// this browser, per project (localStorage): they hold SQL text, never results, and a project's are never shown in
// another's editor. Loaded with the Database page's SQL tab only (CodeMirror is not in the first screen).
import { useEffect, useRef, useState } from 'react';
import { EditorView, basicSetup } from 'codemirror';
import { keymap } from '@codemirror/view';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { PostgreSQL, sql as sqlLanguage } from '@codemirror/lang-sql';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import type { SqlResult } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { useJsonText } from '../lib/json-text.ts';
import { cell, when } from '../lib/format.ts';
import { Button, DataTable, ErrorBox, Form, Section, TextField } from '../ui/index.tsx';
import { useAction } from '../ui/data.tsx';

const HISTORY_MAX = 50;

/** Token colours that keep WCAG AA contrast (4.5:1) on the white editor (CodeMirror's defaults do not, for some). */
const READABLE = HighlightStyle.define([
  { tag: [tags.keyword, tags.operatorKeyword, tags.modifier], color: '#7b2a8c', fontWeight: '600' },
  { tag: [tags.string, tags.special(tags.string)], color: '#1d6b2a' },
  { tag: [tags.number, tags.bool, tags.null], color: '#0b5394' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: '#5f6368', fontStyle: 'italic' },
  { tag: [tags.typeName, tags.standard(tags.name)], color: '#8a4b08' },
  { tag: [tags.operator, tags.punctuation, tags.bracket], color: '#333333' },
  { tag: tags.invalid, color: '#b00020' },
]);
const SNIPPETS_MAX = 200;

type HistoryEntry = { sql: string; at: string; ok: boolean };
type Snippet = { name: string; sql: string };

/** A list kept in localStorage under `key` (empty when storage is refused or holds something else). */
function useStoredList<T>(key: string): [T[], (next: T[]) => void] {
  const read = (): T[] => {
    try {
      const v = JSON.parse(window.localStorage.getItem(key) ?? '[]') as unknown;
      return Array.isArray(v) ? (v as T[]) : [];
    } catch {
      return [];
    }
  };
  const [list, setList] = useState<T[]>(read);
  useEffect(() => setList(read()), [key]); // re-read per project
  const save = (next: T[]) => {
    setList(next);
    try {
      window.localStorage.setItem(key, JSON.stringify(next));
    } catch {
      // storage refused (private mode, full): the list lives as long as the page
    }
  };
  return [list, save];
}

/** CodeMirror on a div: `value` in, `onChange` out, Mod-Enter runs `onRun`; `schema` feeds completion. */
function SqlCode({
  value,
  onChange,
  onRun,
  schema,
}: {
  value: string;
  onChange: (v: string) => void;
  onRun: () => void;
  schema: Record<string, string[]>;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  const language = useRef(new Compartment());
  const latest = useRef({ onChange, onRun });
  latest.current = { onChange, onRun };
  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          Prec.highest(
            keymap.of([
              {
                key: 'Mod-Enter',
                run: () => {
                  latest.current.onRun();
                  return true;
                },
              },
            ]),
          ),
          basicSetup,
          syntaxHighlighting(READABLE),
          language.current.of(sqlLanguage({ dialect: PostgreSQL, schema })),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) latest.current.onChange(u.state.doc.toString());
          }),
          EditorView.contentAttributes.of({ 'aria-label': 'SQL', 'aria-describedby': 'sql-hint' }),
        ],
      }),
    });
    view.current = v;
    return () => v.destroy();
    // The view is made once; value and schema follow in the effects below.
  }, []);
  // A value set from outside (history, snippets) replaces the text.
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value)
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);
  useEffect(() => {
    view.current?.dispatch({
      effects: language.current.reconfigure(sqlLanguage({ dialect: PostgreSQL, schema })),
    });
  }, [schema]);
  return <div className="sql-code" ref={host} />;
}

export function SqlEditor() {
  const { api, project } = useProjectCtx();
  const [sql, setSql] = useState('select now()');
  const [history, setHistory] = useStoredList<HistoryEntry>(`tessera.sql.history.${project.id}`);
  const [snippets, setSnippets] = useStoredList<Snippet>(`tessera.sql.snippets.${project.id}`);
  const [snippetName, setSnippetName] = useState('');
  const [schema, setSchema] = useState<Record<string, string[]>>({});
  const params = useJsonText('[]', {
    empty: [],
    prefix: '',
    check: (p) => (Array.isArray(p) ? undefined : 'parameters must be a JSON array, e.g. [1, "a"]'),
  });
  // Table and column names for completion, from the project's own information_schema.
  useEffect(() => {
    let live = true;
    api.data
      .sql(
        'select table_name, column_name from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position',
      )
      .then((r) => {
        const out: Record<string, string[]> = {};
        for (const row of r.rows as { table_name: string; column_name: string }[])
          (out[row.table_name] ??= []).push(row.column_name);
        if (live) setSchema(out);
      })
      .catch(() => {});
    return () => {
      live = false;
    };
  }, [api, project.id]);
  const remember = (ok: boolean) =>
    setHistory(
      [{ sql, at: new Date().toISOString(), ok }, ...history.filter((h) => h.sql !== sql)].slice(0, HISTORY_MAX),
    );
  const run = useAction({
    run: (p: unknown[]) => api.data.sql(sql, p),
    onSuccess: () => remember(true),
    invalidate: [['tables', project.id]],
  });
  const submit = () => params.withValue((p) => run.mutate(p as unknown[], { onError: () => remember(false) }));
  const result = run.data as SqlResult | undefined;
  const fields =
    result?.fields?.map((f) => (typeof f === 'string' ? f : (f as { name: string }).name)) ??
    Object.keys(result?.rows[0] ?? {});
  return (
    <>
      <Section title="SQL editor">
        <Form onSubmit={submit} aria-label="Run SQL">
          <div className="field">
            <span className="label" id="sql-label">
              SQL
            </span>
            <SqlCode value={sql} onChange={setSql} onRun={submit} schema={schema} />
            <div className="hint" id="sql-hint">
              One statement (with $1, $2… parameters), or a script of several separated by ; run as one transaction: all
              or nothing. Ctrl+Enter (⌘+Enter) runs it, as the project's role.
            </div>
          </div>
          <TextField label="Parameters (JSON array, one statement only)" className="code" {...params.field} />
          <div className="row">
            <Button type="submit" variant="primary" busy={run.isPending}>
              Run
            </Button>
          </div>
        </Form>
      </Section>
      {run.error ? <ErrorBox error={run.error} title="The SQL failed; nothing of it was kept" /> : null}
      {result && (
        <Section title="Result">
          {result.statements?.length > 1 && (
            <ol className="statements" aria-label="Statements run">
              {result.statements.map((s) => (
                <li key={s.index}>
                  <code>{s.command ?? 'OK'}</code> {s.rowCount ?? ''} <span className="muted">(line {s.line})</span>
                </li>
              ))}
            </ol>
          )}
          <p className="muted" role="status">
            {result.rowCount ?? result.rows.length} row(s)
          </p>
          {result.rows.length > 0 && (
            <DataTable label="Result rows" columns={fields}>
              {result.rows.map((r, i) => (
                <tr key={i}>
                  {fields.map((f) => (
                    <td key={f} className={r[f] === null ? 'null' : undefined}>
                      {cell(r[f])}
                    </td>
                  ))}
                </tr>
              ))}
            </DataTable>
          )}
        </Section>
      )}
      <div className="grid-2">
        <Section title="Saved snippets">
          <Form
            className="row"
            aria-label="Save snippet"
            onSubmit={() => {
              const name = snippetName.trim();
              if (!name) return;
              setSnippets([{ name, sql }, ...snippets.filter((s) => s.name !== name)].slice(0, SNIPPETS_MAX));
              setSnippetName('');
            }}
          >
            <TextField
              label="Snippet name"
              required
              maxLength={100}
              value={snippetName}
              onChange={(e) => setSnippetName(e.target.value)}
            />
            <Button type="submit">Save the SQL above</Button>
          </Form>
          {snippets.length === 0 ? (
            <p className="muted">No snippets yet: name the SQL above to keep it (in this browser, for this project).</p>
          ) : (
            <ul className="plain" aria-label="Snippets">
              {snippets.map((s) => (
                <li key={s.name} className="row">
                  <Button className="btn-small" onClick={() => setSql(s.sql)} aria-label={`Open snippet ${s.name}`}>
                    {s.name}
                  </Button>
                  <Button
                    className="btn-small"
                    variant="danger"
                    aria-label={`Forget snippet ${s.name}`}
                    onClick={() => setSnippets(snippets.filter((x) => x.name !== s.name))}
                  >
                    Forget
                  </Button>
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section
          title="History"
          actions={
            history.length > 0 ? (
              <Button className="btn-small" onClick={() => setHistory([])}>
                Clear history
              </Button>
            ) : undefined
          }
        >
          {history.length === 0 ? (
            <p className="muted">What you run here is listed (the last {HISTORY_MAX}, in this browser).</p>
          ) : (
            <ul className="plain" aria-label="History">
              {history.map((h) => (
                <li key={`${h.at}-${h.sql}`}>
                  <Button
                    className="btn-small"
                    onClick={() => setSql(h.sql)}
                    aria-label={`Open from history: ${h.sql.slice(0, 60)}`}
                  >
                    Open
                  </Button>{' '}
                  <span className="muted">
                    {h.ok ? 'ran' : 'failed'} {when(h.at)}
                  </span>{' '}
                  <code className="history-sql">{h.sql.length > 120 ? `${h.sql.slice(0, 120)}…` : h.sql}</code>
                </li>
              ))}
            </ul>
          )}
        </Section>
      </div>
    </>
  );
}
