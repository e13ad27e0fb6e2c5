// The project database: tables (with realtime switches, offered for the project's tables only, and a way to turn off
// one left on for a dropped table), the table browser (paging, sort, filter, inline edit,
// insert, delete), the create-table form, the SQL editor (rawSQL with parameters) and the RLS policies.
import { lazy, Suspense, useState, type KeyboardEvent } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { platform } from '../lib/session.ts';
import { useProjectCtx } from '../lib/project-context.ts';
import { cell } from '../lib/format.ts';
import {
  COLUMN_TYPES,
  createTableSql,
  listColumns,
  listTables,
  parseCell,
  type Column,
  type NewColumn,
} from '../lib/tables.ts';
import {
  Area,
  BackLink,
  Button,
  Check,
  DataTable,
  DeleteButton,
  Empty,
  ErrorBox,
  Form,
  Loading,
  Pager,
  Section,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { ListSection, useAction } from '../ui/data.tsx';
import { ColumnEditor, DropTable, RlsState, RowCount } from './database-columns.tsx';
import { Policies } from './database-policies.tsx';
import { DatabaseUsageLine } from './database-usage.tsx';

/** CSV export and import, loaded when a table's page first shows them (papaparse stays out of this chunk). */
const CsvSection = lazy(() => import('./database-csv.tsx'));

// The migrations tab is its own chunk, loaded when opened.
const Migrations = lazy(() => import('./migrations.tsx'));

// The SQL editor (CodeMirror) loads when its tab is first opened.
const SqlEditor = lazy(async () => ({ default: (await import('./database-sql.tsx')).SqlEditor }));

export default function Database() {
  const { base, project } = useProjectCtx();
  return (
    <Area
      title={`${project.name}: database`}
      description="Your project's own PostgreSQL database."
      label="Database"
      base={`${base}/database`}
      routes={[
        { path: 'new', page: () => <CreateTable /> },
        { path: 'tables/:table', page: (p) => <TableBrowser table={tableOfAddress(p.table ?? '')} /> },
      ]}
      tabs={[
        { path: 'tables', label: 'Tables', page: <Tables /> },
        { path: 'sql', label: 'SQL editor', page: <SqlEditor /> },
        { path: 'policies', label: 'RLS policies', page: <Policies /> },
        {
          path: 'migrations',
          label: 'Migrations',
          page: (
            <Suspense fallback={<Loading what="Loading migrations" />}>
              <Migrations />
            </Suspense>
          ),
        },
      ]}
    />
  );
}

/**
 * The table named by the address, decoded once from the address as the browser has it: the router's parameter has
 * been through decodeURI already, so decoding it again would turn a name holding `%25` or `%41` into another name
 * (or throw on a lone `%`).
 */
function tableOfAddress(param: string): string {
  const raw = /\/database\/tables\/([^/]+)$/.exec(window.location.pathname)?.[1];
  try {
    return decodeURIComponent(raw ?? param);
  } catch {
    return param;
  }
}

function Tables() {
  const { api, project, base } = useProjectCtx();
  const tables = useQuery({ queryKey: ['tables', project.id], queryFn: () => listTables(api) });
  // Row estimates and RLS state (the schema endpoint); the list shows without them while they load or if refused.
  const schema = useQuery({ queryKey: ['schema', project.id], queryFn: () => api.data.schema() });
  const described = new Map((schema.data?.tables ?? []).map((t) => [t.name, t]));
  const pubs = useQuery({
    queryKey: ['publications', project.id],
    queryFn: () => platform.tenant.projects.publications(project.id),
  });
  const toggle = useAction({
    run: ({ table, enabled }: { table: string; enabled: boolean }) =>
      platform.tenant.projects.setPublication(project.id, table, enabled),
    done: (p) => `Realtime ${p.enabled ? 'on' : 'off'} for ${p.table}`,
    invalidate: [['publications', project.id]],
  });
  const enabled = new Set((pubs.data ?? []).filter((p) => p.enabled).map((p) => p.table));
  return (
    <ListSection
      title="Tables"
      actions={
        <Link className="btn btn-primary" href={`${base}/database/new`}>
          New table
        </Link>
      }
      intro={<DatabaseUsageLine />}
      error={toggle.error ?? pubs.error}
      query={tables}
      loading="Loading tables"
      empty={
        <Empty title="No tables yet">
          Create one with <Link href={`${base}/database/new`}>the table form</Link> or in the{' '}
          <Link href={`${base}/database/sql`}>SQL editor</Link>.
        </Empty>
      }
    >
      {(list) => (
        <>
          <DataTable columns={['Table', 'Columns', 'Rows', 'Row level security', 'Realtime']}>
            {list.map((t) => (
              <tr key={t.name}>
                <td>
                  <Link href={`${base}/database/tables/${encodeURIComponent(t.name)}`}>{t.name}</Link>
                </td>
                <td className="num">{t.columns}</td>
                <td className="num">
                  <RowCount table={t.name} estimate={described.get(t.name)?.rowEstimate} />
                </td>
                <td>
                  <RlsState table={described.get(t.name)} policies={`${base}/database/policies`} />
                </td>
                <td>
                  <Check
                    label={
                      <span>
                        Stream changes<span className="sr-only-label"> of {t.name}</span>
                      </span>
                    }
                    checked={enabled.has(t.name)}
                    disabled={toggle.isPending || pubs.isPending}
                    onChange={(e) => toggle.mutate({ table: t.name, enabled: e.target.checked })}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
          <StaleSwitches
            names={[...enabled].filter((n) => !list.some((t) => t.name === n))}
            busy={toggle.isPending}
            turnOff={(table) => toggle.mutate({ table, enabled: false })}
          />
        </>
      )}
    </ListSection>
  );
}

/** Realtime switches left on for tables that no longer exist (dropped by SQL): each can be turned off. */
function StaleSwitches({ names, busy, turnOff }: { names: string[]; busy: boolean; turnOff: (t: string) => void }) {
  if (names.length === 0) return null;
  return (
    <div className="notice">
      <p>
        Realtime is still on for tables that no longer exist. It is turned on again only for a table the database has.
      </p>
      <ul>
        {names.map((n) => (
          <li key={n}>
            <code>{n}</code>{' '}
            <Button
              className="btn-small"
              busy={busy}
              aria-label={`Turn off realtime for ${n}`}
              onClick={() => turnOff(n)}
            >
              Turn off
            </Button>
          </li>
        ))}
      </ul>
    </div>
  );
}

const blankColumn = (): NewColumn => ({
  name: '',
  type: 'text',
  nullable: true,
  default: '',
  pk: false,
  unique: false,
});

function CreateTable() {
  const { api, project, base } = useProjectCtx();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [rls, setRls] = useState(true);
  const [columns, setColumns] = useState<NewColumn[]>([
    { name: 'id', type: 'bigserial', nullable: false, default: '', pk: true, unique: false },
    { ...blankColumn(), name: 'created_at', type: 'timestamptz', default: 'now()' },
    blankColumn(),
  ]);
  const statements = createTableSql(name || 'new_table', columns, rls);
  const create = useAction({
    run: async () => {
      for (const sql of createTableSql(name, columns, rls)) await api.data.sql(sql);
    },
    done: `Table ${name} created`,
    invalidate: [['tables', project.id]],
    then: () => navigate(`${base}/database/tables/${encodeURIComponent(name.trim())}`),
  });
  const set = (i: number, change: Partial<NewColumn>) =>
    setColumns(columns.map((c, j) => (j === i ? { ...c, ...change } : c)));
  return (
    <Section title="New table">
      <Form onSubmit={() => create.mutate()}>
        <TextField
          label="Table name"
          required
          pattern="[A-Za-z_][A-Za-z0-9_]*"
          hint="Letters, digits and _, not starting with a digit."
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <fieldset className="card">
          <legend>Columns</legend>
          {columns.map((c, i) => (
            <div className="row" key={i} role="group" aria-label={`Column ${i + 1}`}>
              <TextField
                label={`Column ${i + 1} name`}
                value={c.name}
                onChange={(e) => set(i, { name: e.target.value })}
              />
              <SelectField
                label={`Column ${i + 1} type`}
                value={c.type}
                options={COLUMN_TYPES}
                onChange={(e) => set(i, { type: e.target.value })}
              />
              <TextField
                label={`Column ${i + 1} default`}
                placeholder="SQL, e.g. now()"
                value={c.default}
                onChange={(e) => set(i, { default: e.target.value })}
              />
              <Check label="Nullable" checked={c.nullable} onChange={(e) => set(i, { nullable: e.target.checked })} />
              <Check label="Primary key" checked={c.pk} onChange={(e) => set(i, { pk: e.target.checked })} />
              <Check label="Unique" checked={c.unique} onChange={(e) => set(i, { unique: e.target.checked })} />
              <Button
                variant="ghost"
                aria-label={`Remove column ${i + 1}`}
                onClick={() => setColumns(columns.filter((_, j) => j !== i))}
              >
                Remove
              </Button>
            </div>
          ))}
          <Button onClick={() => setColumns([...columns, blankColumn()])}>Add column</Button>
        </fieldset>
        <Check
          label="Enable row level security (recommended: only the policies you write let end-users in)"
          checked={rls}
          onChange={(e) => setRls(e.target.checked)}
        />
        <h3>SQL that will run</h3>
        <pre aria-label="SQL preview">{statements.join(';\n')};</pre>
        <div className="actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create table
          </Button>
          <Link href={`${base}/database`}>Cancel</Link>
        </div>
      </Form>
      <ErrorBox error={create.error} title="Could not create the table" />
    </Section>
  );
}

const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'isNull'] as const;
const PAGE_SIZE = 25;

function TableBrowser({ table }: { table: string }) {
  const { api, project, base } = useProjectCtx();
  const [page, setPage] = useState(0);
  const [sort, setSort] = useState<{ column: string; dir: 'asc' | 'desc' } | null>(null);
  const [filter, setFilter] = useState<{ column: string; op: string; value: string }>({
    column: '',
    op: 'eq',
    value: '',
  });
  const [applied, setApplied] = useState<typeof filter | null>(null);
  const [editing, setEditing] = useState<{ index: number; values: Record<string, string> } | null>(null);
  const [inserting, setInserting] = useState<Record<string, string> | null>(null);
  const [formError, setFormError] = useState<string>();
  const columns = useQuery({ queryKey: ['columns', project.id, table], queryFn: () => listColumns(api, table) });
  const cols = columns.data ?? [];
  const pk = cols.filter((c) => c.pk);
  const where = (() => {
    if (!applied || !applied.column) return undefined;
    const col = cols.find((c) => c.name === applied.column);
    if (applied.op === 'isNull') return { [applied.column]: { isNull: applied.value !== 'false' } };
    const value =
      applied.op === 'like' || applied.op === 'ilike' || !col ? applied.value : parseCell(applied.value, col.type);
    return { [applied.column]: { [applied.op]: value } };
  })();
  const rowsKey = ['rows', project.id, table, page, sort, applied];
  const rows = useQuery({
    queryKey: rowsKey,
    enabled: columns.isSuccess,
    placeholderData: keepPreviousData,
    queryFn: () =>
      api.data.find({
        table,
        where,
        orderBy: sort ? [{ [sort.column]: sort.dir }] : pk.map((c) => c.name),
        limit: PAGE_SIZE + 1,
        offset: page * PAGE_SIZE,
      }),
  });
  const changed = [
    ['rows', project.id, table],
    ['tables', project.id],
    ['schema', project.id],
  ];
  const keyOf = (row: Record<string, unknown>) => Object.fromEntries(pk.map((c) => [c.name, row[c.name]]));
  const typed = (values: Record<string, string>, columnsOf: Column[], skipEmpty: boolean) => {
    const out: Record<string, unknown> = {};
    for (const c of columnsOf) {
      const v = values[c.name];
      if (v === undefined || (skipEmpty && v === '')) continue;
      out[c.name] = parseCell(v, c.type);
    }
    return out;
  };
  const update = useAction({
    run: ({ row, values }: { row: Record<string, unknown>; values: Record<string, string> }) => {
      const edited = cols.filter((c) => values[c.name] !== cell(row[c.name]));
      return api.data.update({ table, where: keyOf(row), set: typed(values, edited, false) });
    },
    onSuccess: () => setEditing(null),
    done: 'Row saved',
    invalidate: changed,
  });
  const insert = useAction({
    run: (values: Record<string, string>) =>
      api.data.insert({ table, values: typed(values, cols, true), returning: true }),
    onSuccess: () => setInserting(null),
    done: 'Row inserted',
    invalidate: changed,
  });
  const remove = useAction({
    run: (row: Record<string, unknown>) => api.data.delete({ table, where: keyOf(row) }),
    done: 'Row deleted',
    invalidate: changed,
  });
  const guard = (run: () => void) => {
    try {
      setFormError(undefined);
      run();
    } catch (err) {
      setFormError((err as Error).message);
    }
  };
  if (columns.isPending) return <Loading what={`Loading ${table}`} />;
  if (columns.error) return <ErrorBox error={columns.error} />;
  if (cols.length === 0)
    return (
      <>
        <BackLink href={`${base}/database`}>← Tables</BackLink>
        <ErrorBox error={new Error(`There is no table named ${table}.`)} />
      </>
    );
  const data = (rows.data?.rows ?? []) as Record<string, unknown>[];
  const shown = data.slice(0, PAGE_SIZE);
  const onSort = (column: string) =>
    setSort(sort?.column === column ? (sort.dir === 'asc' ? { column, dir: 'desc' } : null) : { column, dir: 'asc' });
  const escape = (e: KeyboardEvent) => {
    if (e.key === 'Escape') setEditing(null);
  };
  return (
    <>
      <BackLink href={`${base}/database`}>← Tables</BackLink>
      <Section
        title={`Table ${table}`}
        actions={
          <Button variant="primary" onClick={() => setInserting(Object.fromEntries(cols.map((c) => [c.name, ''])))}>
            Insert row
          </Button>
        }
      >
        <Form
          className="row"
          role="search"
          aria-label="Filter rows"
          onSubmit={() =>
            guard(() => {
              setApplied(filter.column ? filter : null);
              setPage(0);
            })
          }
        >
          <SelectField
            label="Filter column"
            value={filter.column}
            options={[{ value: '', label: '(no filter)' }, ...cols.map((c) => c.name)]}
            onChange={(e) => setFilter({ ...filter, column: e.target.value })}
          />
          <SelectField
            label="Operator"
            value={filter.op}
            options={OPERATORS}
            onChange={(e) => setFilter({ ...filter, op: e.target.value })}
          />
          <TextField
            label="Value"
            value={filter.value}
            onChange={(e) => setFilter({ ...filter, value: e.target.value })}
          />
          <Button type="submit">Apply filter</Button>
        </Form>
        {pk.length === 0 && (
          <p className="muted">This table has no primary key: rows can be inserted, but not edited or deleted here.</p>
        )}
        {inserting && (
          <Form className="card" aria-label="New row" onSubmit={() => guard(() => insert.mutate(inserting))}>
            <h3>New row</h3>
            <p className="muted">Leave a field empty for its default; type NULL for null.</p>
            <div className="row">
              {cols.map((c) => (
                <TextField
                  key={c.name}
                  label={`${c.name} (${c.type})`}
                  placeholder={c.default ?? ''}
                  value={inserting[c.name] ?? ''}
                  onChange={(e) => setInserting({ ...inserting, [c.name]: e.target.value })}
                />
              ))}
            </div>
            <div className="actions">
              <Button type="submit" variant="primary" busy={insert.isPending}>
                Save row
              </Button>
              <Button onClick={() => setInserting(null)}>Cancel</Button>
            </div>
          </Form>
        )}
        {formError && (
          <p className="field-error" role="alert">
            {formError}
          </p>
        )}
        <ErrorBox error={rows.error ?? update.error ?? insert.error ?? remove.error} />
        {rows.isPending ? (
          <Loading what="Loading rows" />
        ) : shown.length === 0 ? (
          <Empty title={applied ? 'No row matches the filter' : 'This table is empty'}>
            {applied ? 'Change or clear the filter.' : 'Insert a row with the button above, or through the data API.'}
          </Empty>
        ) : (
          <DataTable
            label={`Rows of ${table}`}
            actions
            columns={cols.map((c) => ({
              key: c.name,
              sort: sort?.column === c.name ? (sort.dir === 'asc' ? 'ascending' : 'descending') : undefined,
              label: (
                <>
                  <button type="button" className="sort" onClick={() => onSort(c.name)}>
                    {c.name}
                    {c.pk ? ' (key)' : ''} {sort?.column === c.name ? (sort.dir === 'asc' ? '▲' : '▼') : ''}
                  </button>
                  <div className="muted" style={{ fontWeight: 400, fontSize: 12 }}>
                    {c.type}
                  </div>
                </>
              ),
            }))}
          >
            {shown.map((row, i) =>
              editing?.index === i ? (
                <tr key={i} onKeyDown={escape}>
                  {cols.map((c) => (
                    <td key={c.name}>
                      <input
                        className="cell-input"
                        aria-label={`${c.name}`}
                        value={editing.values[c.name] ?? ''}
                        onChange={(e) =>
                          setEditing({ index: i, values: { ...editing.values, [c.name]: e.target.value } })
                        }
                      />
                    </td>
                  ))}
                  <td>
                    <div className="actions">
                      <Button
                        className="btn-small"
                        variant="primary"
                        busy={update.isPending}
                        onClick={() => guard(() => update.mutate({ row, values: editing.values }))}
                      >
                        Save
                      </Button>
                      <Button className="btn-small" onClick={() => setEditing(null)}>
                        Cancel
                      </Button>
                    </div>
                  </td>
                </tr>
              ) : (
                <tr key={i}>
                  {cols.map((c) => (
                    <td key={c.name} className={row[c.name] === null ? 'null' : undefined}>
                      {cell(row[c.name])}
                    </td>
                  ))}
                  <td>
                    {pk.length > 0 && (
                      <div className="actions">
                        <Button
                          className="btn-small"
                          aria-label={`Edit row ${i + 1}`}
                          onClick={() =>
                            setEditing({
                              index: i,
                              values: Object.fromEntries(cols.map((c) => [c.name, cell(row[c.name])])),
                            })
                          }
                        >
                          Edit
                        </Button>
                        <DeleteButton
                          what={`row ${i + 1}`}
                          title="Delete this row?"
                          body={<pre>{JSON.stringify(keyOf(row))}</pre>}
                          action="Delete row"
                          onConfirm={() => remove.mutate(row)}
                        />
                      </div>
                    )}
                  </td>
                </tr>
              ),
            )}
          </DataTable>
        )}
        <Pager
          label="Pages of rows"
          page={page + 1}
          hasPrevious={page > 0}
          hasNext={data.length > PAGE_SIZE}
          onPrevious={() => setPage(page - 1)}
          onNext={() => setPage(page + 1)}
        />
      </Section>
      <ColumnEditor table={table} cols={cols} />
      <Suspense fallback={<Loading what="Loading CSV import and export" />}>
        <CsvSection table={table} cols={cols} />
      </Suspense>
      <DropTable table={table} />
    </>
  );
}
