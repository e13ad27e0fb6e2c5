// Row level security in the console: every table with its RLS state and its policies (read from the schema endpoint,
// GET /v1/schema), a warning on each table whose RLS is on with no policy (the publishable key and end-users get no
// rows), and a form that creates, edits and drops policies, showing the CREATE / ALTER / DROP POLICY statements it
// runs (one rawSQL script: one transaction).
import { useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { SchemaPolicy, SchemaTable } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import {
  createPolicySql,
  dropPolicySql,
  editPolicySql,
  enableRlsSql,
  POLICY_COMMANDS,
  POLICY_ROLES,
  policyClauses,
  type PolicyCommand,
  type PolicyDraft,
} from '../lib/tables.ts';
import {
  Badge,
  Button,
  CheckGroup,
  CodeArea,
  DataTable,
  DeleteButton,
  ErrorBox,
  Form,
  Section,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { QueryView, useAction } from '../ui/data.tsx';
import { SqlPreview } from './database-columns.tsx';

type Editing = { table: string; was?: PolicyDraft; now: PolicyDraft };

/** A policy as the form edits it; roles the form cannot write are kept as they are (null). */
function draftOf(p: SchemaPolicy): PolicyDraft {
  const offered = p.roles.every((r) =>
    (POLICY_ROLES as readonly string[]).includes(r === 'owner' ? 'current_user' : r),
  );
  return {
    name: p.name,
    command: p.command,
    roles: offered ? p.roles.map((r) => (r === 'owner' ? 'current_user' : r)) : null,
    permissive: p.permissive,
    using: p.using ?? '',
    withCheck: p.withCheck ?? '',
  };
}

const NEW_POLICY: PolicyDraft = {
  name: '',
  command: 'SELECT',
  roles: ['public'],
  permissive: true,
  using: "owner = current_setting('request.user_id', true)",
  withCheck: '',
};

/** The statements of the form, or why they cannot be made yet. */
function statementsOf(e: Editing): { sql?: string[]; problem?: string } {
  try {
    return { sql: e.was ? editPolicySql(e.table, e.was, e.now) : [createPolicySql(e.table, e.now)] };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

export function Policies() {
  const { api, project } = useProjectCtx();
  const schema = useQuery({ queryKey: ['schema', project.id], queryFn: () => api.data.schema() });
  const [editing, setEditing] = useState<Editing | null>(null);
  const changed = [['schema', project.id]];
  const run = useAction({
    run: ({ sql }: { sql: string[]; done: string }) => api.data.sql(sql.join(';\n')),
    onSuccess: () => setEditing(null),
    done: (_r, v) => v.done,
    invalidate: changed,
  });
  const open = (e: Editing | null) => {
    run.reset();
    setEditing(e);
  };
  return (
    <Section title="Row level security policies">
      <p>
        Policies decide which rows end-users and the publishable key read and write. The data API serves them only
        tables with row level security on, and then only the rows a policy lets through: a table with RLS on and no
        policy shows them nothing. The secret key is not bound by policies. In an expression,{' '}
        <code>current_setting('request.role', true)</code> is <code>authenticated</code> for an end-user and{' '}
        <code>anon</code> for the publishable key; <code>current_setting('request.user_id', true)</code> is the
        end-user's id.
      </p>
      <ErrorBox error={run.error} title="The change failed; nothing was changed" />
      <QueryView
        query={schema}
        loading="Loading the tables and their policies"
        failed="Could not read the schema"
        empty={<p className="muted">No tables yet.</p>}
        isEmpty={(s) => s.tables.length === 0}
      >
        {(s) => (
          <>
            {s.tables.map((t) => (
              <TablePolicies
                key={t.name}
                table={t}
                busy={run.isPending}
                onNew={() => open({ table: t.name, now: { ...NEW_POLICY } })}
                onEdit={(p) => open({ table: t.name, was: draftOf(p), now: draftOf(p) })}
                onRun={(sql, done) => run.mutate({ sql, done })}
                editor={
                  editing?.table === t.name && (
                    <PolicyForm
                      editing={editing}
                      busy={run.isPending}
                      onChange={(now) => setEditing({ ...editing, now })}
                      onCancel={() => open(null)}
                      onRun={(sql) =>
                        run.mutate({
                          sql,
                          done: editing.was ? `Policy ${editing.now.name} saved` : `Policy ${editing.now.name} created`,
                        })
                      }
                    />
                  )
                }
              />
            ))}
          </>
        )}
      </QueryView>
    </Section>
  );
}

function TablePolicies({
  table: t,
  busy,
  onNew,
  onEdit,
  onRun,
  editor,
}: {
  table: SchemaTable;
  busy: boolean;
  onNew: () => void;
  onEdit: (p: SchemaPolicy) => void;
  onRun: (sql: string[], done: string) => void;
  editor: ReactNode;
}) {
  return (
    <section className="card policy-table" aria-label={`Policies of ${t.name}`}>
      <div className="card-head">
        <h3>
          <code>{t.name}</code> {t.rlsEnabled ? <Badge tone="good">RLS on</Badge> : <Badge tone="warn">RLS off</Badge>}
        </h3>
        <div className="actions">
          <Button className="btn-small" aria-label={`New policy on ${t.name}`} onClick={onNew}>
            New policy
          </Button>
        </div>
      </div>
      {t.rlsEnabled && t.policies.length === 0 && (
        <p className="warning" data-testid={`no-policy-${t.name}`}>
          <strong>No policy:</strong> row level security is on and {t.name} has no policy, so the publishable key and
          end-users get no rows. Add a policy to let them in.
        </p>
      )}
      {!t.rlsEnabled && (
        <div className="warning">
          <p>
            Row level security is off: the data API does not serve {t.name} to end-users and the publishable key at all.
            Turn it on, then add policies.
          </p>
          <Button
            className="btn-small"
            busy={busy}
            aria-label={`Turn on RLS for ${t.name}`}
            title={`Runs: ${enableRlsSql(t.name)};`}
            onClick={() => onRun([enableRlsSql(t.name)], `Row level security on for ${t.name}`)}
          >
            Turn on RLS
          </Button>
        </div>
      )}
      {t.policies.length > 0 && (
        <DataTable
          label={`Policies of ${t.name}`}
          columns={['Policy', 'Command', 'Roles', 'Kind', 'USING', 'WITH CHECK']}
          actions
        >
          {t.policies.map((p) => (
            <tr key={p.name}>
              <td>
                <code>{p.name}</code>
              </td>
              <td>{p.command}</td>
              <td>{p.roles.join(', ')}</td>
              <td>{p.permissive ? 'permissive' : 'restrictive'}</td>
              <td>{p.using === null ? '—' : <code>{p.using}</code>}</td>
              <td>{p.withCheck === null ? '—' : <code>{p.withCheck}</code>}</td>
              <td>
                <div className="actions">
                  <Button className="btn-small" aria-label={`Edit policy ${p.name}`} onClick={() => onEdit(p)}>
                    Edit
                  </Button>
                  <DeleteButton
                    what={`policy ${p.name}`}
                    title={`Drop policy ${p.name}?`}
                    busy={busy}
                    body={
                      <>
                        <p>
                          What it let end-users and the publishable key read or write is refused once it is gone
                          {t.policies.length === 1 ? ': it is the last policy of this table' : ''}.
                        </p>
                        <SqlPreview sql={`${dropPolicySql(t.name, p.name)};`} label="SQL of the drop" />
                      </>
                    }
                    action="Drop policy"
                    onConfirm={() => onRun([dropPolicySql(t.name, p.name)], `Policy ${p.name} dropped`)}
                  />
                </div>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {editor}
    </section>
  );
}

function PolicyForm({
  editing,
  busy,
  onChange,
  onCancel,
  onRun,
}: {
  editing: Editing;
  busy: boolean;
  onChange: (now: PolicyDraft) => void;
  onCancel: () => void;
  onRun: (sql: string[]) => void;
}) {
  const { now, was, table } = editing;
  const has = policyClauses(now.command);
  const statements = statementsOf(editing);
  const set = (change: Partial<PolicyDraft>) => onChange({ ...now, ...change });
  const title = was ? `Edit policy ${was.name} on ${table}` : `New policy on ${table}`;
  return (
    <Form className="card" aria-label={title} onSubmit={() => statements.sql && onRun(statements.sql)}>
      <h3>{title}</h3>
      <div className="row">
        <TextField label="Policy name" required value={now.name} onChange={(e) => set({ name: e.target.value })} />
        <SelectField
          label="Command"
          value={now.command}
          options={POLICY_COMMANDS}
          onChange={(e) => set({ command: e.target.value as PolicyCommand })}
        />
        <SelectField
          label="Kind"
          value={now.permissive ? 'permissive' : 'restrictive'}
          hint="Permissive: any one lets a row through. Restrictive: each must, too."
          options={['permissive', 'restrictive']}
          onChange={(e) => set({ permissive: e.target.value === 'permissive' })}
        />
      </div>
      {now.roles ? (
        <CheckGroup
          legend="Roles"
          options={POLICY_ROLES}
          value={now.roles}
          onChange={(roles) => set({ roles: POLICY_ROLES.filter((r) => roles.includes(r)) })}
        />
      ) : (
        <p className="muted">Roles: kept as they are (set in SQL).</p>
      )}
      <p className="muted">
        <code>public</code> is everyone: end-users and the publishable key (tell them apart with{' '}
        <code>current_setting('request.role', true)</code>); <code>current_user</code> is the project's own role.
      </p>
      {has.using && (
        <CodeArea
          label="USING (which existing rows it lets through)"
          rows={2}
          value={now.using}
          onChange={(e) => set({ using: e.target.value })}
        />
      )}
      {has.withCheck && (
        <CodeArea
          label="WITH CHECK (which new or changed rows it accepts)"
          rows={2}
          value={now.withCheck}
          hint={now.command === 'INSERT' ? undefined : 'Empty: the USING expression checks them too.'}
          onChange={(e) => set({ withCheck: e.target.value })}
        />
      )}
      {statements.sql && <SqlPreview sql={`${statements.sql.join(';\n')};`} />}
      {statements.problem && (
        <p className="field-error" role="alert">
          {statements.problem}
        </p>
      )}
      <div className="actions">
        <Button type="submit" variant="primary" busy={busy} disabled={!statements.sql}>
          {was ? 'Save policy' : 'Create policy'}
        </Button>
        <Button onClick={onCancel}>Cancel</Button>
      </div>
    </Form>
  );
}
