// The column editor of a table's page: add, rename, retype and drop columns, count the rows exactly, drop the table.
// Every change is SQL the form shows before it runs (one rawSQL script, so one transaction); names are quoted by
// lib/tables.ts, types are chosen from a list, defaults and USING expressions are SQL on purpose.
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import type { SchemaTable } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import {
  addColumnSql,
  COLUMN_TYPES,
  countRows,
  dropColumnSql,
  dropTableSql,
  renameColumnSql,
  retypeColumnSql,
  type Column,
  type NewTableColumn,
} from '../lib/tables.ts';
import {
  Badge,
  Button,
  Check,
  DataTable,
  DeleteButton,
  ErrorBox,
  Form,
  Section,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { useAction } from '../ui/data.tsx';

type Editing =
  | { kind: 'add'; column: NewTableColumn }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'retype'; column: string; type: string; using: string };

/** The statement of what is being edited, or why it cannot be made yet. */
function statementOf(table: string, e: Editing): { sql?: string; problem?: string } {
  try {
    if (e.kind === 'add') return { sql: addColumnSql(table, e.column) };
    if (e.kind === 'rename') return { sql: renameColumnSql(table, e.from, e.to) };
    return { sql: retypeColumnSql(table, e.column, e.type, e.using) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

/** The SQL a form will run, as the user reads it before running it. */
export function SqlPreview({ sql, label = 'SQL preview' }: { sql: string; label?: string }) {
  return (
    <>
      <h3>SQL that will run</h3>
      <pre aria-label={label}>{sql}</pre>
    </>
  );
}

/** A table's columns and the changes that can be made to them. */
export function ColumnEditor({ table, cols }: { table: string; cols: Column[] }) {
  const { api, project } = useProjectCtx();
  const [editing, setEditing] = useState<Editing | null>(null);
  const changed = [
    ['columns', project.id, table],
    ['rows', project.id, table],
    ['tables', project.id],
    ['schema', project.id],
  ];
  const run = useAction({
    run: (sql: string) => api.data.sql(sql),
    onSuccess: () => setEditing(null),
    done: 'Table changed',
    invalidate: changed,
  });
  const count = useAction({ run: () => countRows(api, table) });
  const statement = editing ? statementOf(table, editing) : undefined;
  const open = (e: Editing) => {
    run.reset();
    setEditing(e);
  };
  return (
    <Section
      title={`Columns of ${table}`}
      actions={
        <>
          <Button busy={count.isPending} onClick={() => count.mutate()}>
            Count rows
          </Button>
          <Button
            variant="primary"
            onClick={() => open({ kind: 'add', column: { name: '', type: 'text', nullable: true, default: '' } })}
          >
            Add column
          </Button>
        </>
      }
    >
      {count.data !== undefined && (
        <p role="status" data-testid="exact-count">
          {count.data} row{count.data === 1 ? '' : 's'} (exact count)
        </p>
      )}
      <ErrorBox error={count.error} title="Could not count the rows" />
      <DataTable label={`Columns of ${table}`} columns={['Column', 'Type', 'Nullable', 'Default']} actions>
        {cols.map((c) => (
          <tr key={c.name}>
            <td>
              <code>{c.name}</code> {c.pk && <Badge>primary key</Badge>}
            </td>
            <td>{c.type}</td>
            <td>{c.nullable ? 'yes' : 'no'}</td>
            <td>{c.default === null ? '—' : <code>{c.default}</code>}</td>
            <td>
              <div className="actions">
                <Button
                  className="btn-small"
                  aria-label={`Rename column ${c.name}`}
                  onClick={() => open({ kind: 'rename', from: c.name, to: c.name })}
                >
                  Rename
                </Button>
                <Button
                  className="btn-small"
                  aria-label={`Change type of column ${c.name}`}
                  onClick={() =>
                    open({
                      kind: 'retype',
                      column: c.name,
                      type: COLUMN_TYPES.includes(c.type) ? c.type : 'text',
                      using: '',
                    })
                  }
                >
                  Change type
                </Button>
                <DeleteButton
                  what={`column ${c.name}`}
                  title={`Drop column ${c.name}?`}
                  body={
                    <>
                      <p>
                        Its values in every row are lost. Views, indexes or policies that use it may be dropped too.
                      </p>
                      <SqlPreview sql={`${dropColumnSql(table, c.name)};`} label="SQL of the drop" />
                    </>
                  }
                  action="Drop column"
                  busy={run.isPending}
                  onConfirm={() => run.mutate(dropColumnSql(table, c.name))}
                />
              </div>
            </td>
          </tr>
        ))}
      </DataTable>
      {editing && (
        <Form
          className="card"
          aria-label={
            editing.kind === 'add'
              ? 'Add a column'
              : editing.kind === 'rename'
                ? `Rename column ${editing.from}`
                : `Change type of column ${editing.column}`
          }
          onSubmit={() => statement?.sql && run.mutate(statement.sql)}
        >
          {editing.kind === 'add' && (
            <>
              <h3>Add a column</h3>
              <div className="row">
                <TextField
                  label="New column name"
                  required
                  value={editing.column.name}
                  onChange={(e) => setEditing({ ...editing, column: { ...editing.column, name: e.target.value } })}
                />
                <SelectField
                  label="New column type"
                  value={editing.column.type}
                  options={COLUMN_TYPES}
                  onChange={(e) => setEditing({ ...editing, column: { ...editing.column, type: e.target.value } })}
                />
                <TextField
                  label="New column default"
                  placeholder="SQL, e.g. 0 or now()"
                  value={editing.column.default}
                  onChange={(e) => setEditing({ ...editing, column: { ...editing.column, default: e.target.value } })}
                />
                <Check
                  label="Nullable"
                  checked={editing.column.nullable}
                  onChange={(e) =>
                    setEditing({ ...editing, column: { ...editing.column, nullable: e.target.checked } })
                  }
                />
              </div>
              <p className="muted">A column that is not nullable needs a default when the table already has rows.</p>
            </>
          )}
          {editing.kind === 'rename' && (
            <>
              <h3>
                Rename column <code>{editing.from}</code>
              </h3>
              <TextField
                label="New name"
                required
                value={editing.to}
                onChange={(e) => setEditing({ ...editing, to: e.target.value })}
              />
            </>
          )}
          {editing.kind === 'retype' && (
            <>
              <h3>
                Change type of column <code>{editing.column}</code>
              </h3>
              <div className="row">
                <SelectField
                  label="New type"
                  value={editing.type}
                  options={COLUMN_TYPES}
                  onChange={(e) => setEditing({ ...editing, type: e.target.value })}
                />
                <TextField
                  label="USING expression (optional)"
                  placeholder={`e.g. ${editing.column.replace(/"/g, '')}::integer`}
                  hint="How each old value becomes the new type, when a plain cast cannot do it."
                  value={editing.using}
                  onChange={(e) => setEditing({ ...editing, using: e.target.value })}
                />
              </div>
            </>
          )}
          {statement?.sql !== undefined && <SqlPreview sql={`${statement.sql};`} />}
          {statement?.problem && (
            <p className="field-error" role="alert">
              {statement.problem}
            </p>
          )}
          <div className="actions">
            <Button type="submit" variant="primary" busy={run.isPending} disabled={!statement?.sql}>
              {editing.kind === 'add' ? 'Add column' : editing.kind === 'rename' ? 'Rename column' : 'Change type'}
            </Button>
            <Button onClick={() => setEditing(null)}>Cancel</Button>
          </div>
        </Form>
      )}
      <ErrorBox error={run.error} title="The change failed; nothing was changed" />
    </Section>
  );
}

/** Dropping the table, after its name is typed. */
export function DropTable({ table }: { table: string }) {
  const { api, project, base } = useProjectCtx();
  const [, navigate] = useLocation();
  const drop = useAction({
    run: () => api.data.sql(dropTableSql(table)),
    done: `Table ${table} dropped`,
    invalidate: [
      ['tables', project.id],
      ['schema', project.id],
    ],
    then: () => navigate(`${base}/database/tables`),
  });
  return (
    <Section title="Drop this table">
      <p>Dropping a table deletes it and every row in it. It cannot be undone.</p>
      <DeleteButton
        what={`table ${table}`}
        title={`Drop table ${table}?`}
        typed={table}
        busy={drop.isPending}
        body={
          <>
            <p>The table and all its rows are deleted for good.</p>
            <SqlPreview sql={`${dropTableSql(table)};`} label="SQL of the drop" />
          </>
        }
        action="Drop table"
        onConfirm={() => drop.mutate()}
      />
      <ErrorBox error={drop.error} title="Could not drop the table" />
    </Section>
  );
}

/** A table's row count in the list: the planner's estimate when known, the exact count on demand. */
export function RowCount({ table, estimate }: { table: string; estimate?: number | null }) {
  const { api } = useProjectCtx();
  const count = useAction({ run: () => countRows(api, table) });
  if (count.data !== undefined) return <span data-testid={`count-${table}`}>{count.data}</span>;
  return (
    <span className="row-count">
      {estimate !== undefined && estimate !== null && estimate >= 0 && (
        <span title="The planner's estimate">≈ {estimate} </span>
      )}
      <Button
        className="btn-small"
        variant="ghost"
        busy={count.isPending}
        aria-label={`Count the rows of ${table}`}
        title={count.error ? (count.error as Error).message : undefined}
        onClick={() => count.mutate()}
      >
        {count.error ? 'Count failed: retry' : 'Count'}
      </Button>
    </span>
  );
}

/** A table's row level security in the list: off, on with its policies, or on with none (nobody but the key gets rows). */
export function RlsState({ table, policies }: { table?: SchemaTable; policies: string }) {
  if (!table) return <span className="muted">—</span>;
  if (!table.rlsEnabled) return <Badge tone="warn">off</Badge>;
  if (table.policies.length === 0)
    return (
      <Link href={policies}>
        <Badge tone="warn">on, no policy</Badge>
      </Link>
    );
  return (
    <Link href={policies}>
      <Badge tone="good">
        on, {table.policies.length} polic{table.policies.length === 1 ? 'y' : 'ies'}
      </Badge>
    </Link>
  );
}
