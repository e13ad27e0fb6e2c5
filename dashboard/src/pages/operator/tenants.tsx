// The operator's tenants (search, plan, project count, the usage of all their projects together, suspend with a
// reason / resume) and projects (search, tenant, plan, storage, database and functions used, suspend / resume). A
// suspended tenant or project keeps its data; every call for it answers 403.
import { useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import {
  databaseUsageOf,
  functionUsageOf,
  storageUsageOf,
  type OperatorProject,
  type OperatorTenant,
} from '@tessera/client';
import { operatorApi } from '../../lib/operator-session.ts';
import { bytes, when } from '../../lib/format.ts';
import { Badge, Button, DataTable, ErrorBox, RowForm, Section, TextField } from '../../ui/index.tsx';
import { CursorPager, QueryView, useAction, useCursors } from '../../ui/data.tsx';
import { PLANS_KEY, usePlans } from './plans.tsx';

const TENANTS_KEY = ['operator', 'tenants'];
const PROJECTS_KEY = ['operator', 'projects'];

/** A search box whose value is applied when submitted. */
function SearchForm({
  label,
  onSearch,
  children,
}: {
  label: string;
  onSearch: (q: string) => void;
  children?: ReactNode;
}) {
  const [text, setText] = useState('');
  return (
    <RowForm submit="Search" onSubmit={() => onSearch(text.trim())}>
      <TextField label={label} type="search" value={text} onChange={(e) => setText(e.target.value)} />
      {children}
    </RowForm>
  );
}

/** Whether something is suspended, since when and why. */
function Status({ at, reason }: { at: string | null; reason: string | null }) {
  if (!at) return <Badge tone="good">active</Badge>;
  return (
    <>
      <Badge tone="bad">suspended</Badge>{' '}
      <span className="muted">
        since {when(at)}
        {reason ? `: ${reason}` : ''}
      </span>
    </>
  );
}

/** Suspend (asking for a reason, in the row) or resume. */
function SuspendControl({
  what,
  suspended,
  busy,
  onSuspend,
  onResume,
}: {
  what: string;
  suspended: boolean;
  busy: boolean;
  onSuspend: (reason: string) => void;
  onResume: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  if (suspended)
    return (
      <Button className="btn-small" busy={busy} onClick={onResume} aria-label={`Resume ${what}`}>
        Resume
      </Button>
    );
  if (!asking)
    return (
      <Button className="btn-small" variant="danger" onClick={() => setAsking(true)} aria-label={`Suspend ${what}`}>
        Suspend
      </Button>
    );
  return (
    <RowForm
      submit="Suspend"
      variant="danger"
      busy={busy}
      aria-label={`Suspend ${what}`}
      onSubmit={() => {
        onSuspend(reason.trim());
        setAsking(false);
      }}
      also={<Button onClick={() => setAsking(false)}>Cancel</Button>}
    >
      <TextField label={`Reason for suspending ${what}`} value={reason} onChange={(e) => setReason(e.target.value)} />
    </RowForm>
  );
}

export function Tenants() {
  const [search, setSearch] = useState('');
  const pages = useCursors();
  const plans = usePlans();
  const tenants = useQuery({
    queryKey: [...TENANTS_KEY, search, pages.after],
    queryFn: () => operatorApi().tenants.list({ search: search || undefined, after: pages.after, first: 50 }),
  });
  const changed = { invalidate: [TENANTS_KEY, PROJECTS_KEY, PLANS_KEY] };
  const setPlan = useAction({
    run: ({ id, plan }: { id: string; plan: string }) => operatorApi().tenants.setPlan(id, plan),
    done: (t) => `${t.email} is now on ${t.plan.name}`,
    ...changed,
  });
  const suspend = useAction({
    run: ({ id, reason }: { id: string; reason: string }) => operatorApi().tenants.suspend(id, reason || undefined),
    done: (t) => `Suspended ${t.email}`,
    ...changed,
  });
  const resume = useAction({
    run: (id: string) => operatorApi().tenants.resume(id),
    done: (t) => `Resumed ${t.email}`,
    ...changed,
  });
  return (
    <Section title="Tenants">
      <SearchForm
        label="Search tenants by e-mail or name"
        onSearch={(q) => {
          setSearch(q);
          pages.reset();
        }}
      />
      <QueryView query={tenants} loading="Loading tenants" failed="Could not list the tenants">
        {(page) => (
          <>
            <DataTable
              wide
              label="Tenants"
              actions
              columns={['Tenant', 'Plan', 'Projects', 'Storage', 'Database', 'Functions', 'Status', 'Signed up']}
            >
              {page.tenants.map((t: OperatorTenant) => (
                <tr key={t.id}>
                  <td>
                    {t.email}
                    {t.name ? <div className="muted">{t.name}</div> : null}
                  </td>
                  <td>
                    <label className="sr-only-label" htmlFor={`plan-${t.id}`}>
                      Plan of {t.email}
                    </label>
                    <select
                      id={`plan-${t.id}`}
                      value={t.plan.id}
                      disabled={setPlan.isPending}
                      onChange={(e) => setPlan.mutate({ id: t.id, plan: e.target.value })}
                    >
                      {(plans.data ?? [{ id: t.plan.id, name: t.plan.name }]).map((p) => (
                        <option key={p.id} value={p.id}>
                          {p.name}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td className="num">{t.project_count}</td>
                  <td>{storageOf(t)}</td>
                  <td>{tenantDatabaseOf(t)}</td>
                  <td>{functionsOf(t)}</td>
                  <td>
                    <Status at={t.suspended_at ?? null} reason={t.suspended_reason ?? null} />
                  </td>
                  <td>{when(t.created_at)}</td>
                  <td>
                    <SuspendControl
                      what={t.email}
                      suspended={!!t.suspended_at}
                      busy={suspend.isPending || resume.isPending}
                      onSuspend={(reason) => suspend.mutate({ id: t.id, reason })}
                      onResume={() => resume.mutate(t.id)}
                    />
                  </td>
                </tr>
              ))}
            </DataTable>
            <CursorPager pages={pages} next={page.next_cursor} label="Tenant pages" />
          </>
        )}
      </QueryView>
      <ErrorBox error={setPlan.error ?? suspend.error ?? resume.error} title="The change was refused" />
    </Section>
  );
}

/** The storage a project (or a tenant, all its projects together) uses (when the install reports it). */
function storageOf(p: OperatorProject | OperatorTenant): string {
  const s = storageUsageOf(p);
  if (!s) return 'unknown';
  const pending = s.pending_objects ? ` (+${s.pending_objects.toLocaleString()} pending)` : '';
  return `${bytes(s.bytes)} in ${s.objects.toLocaleString()} files${pending}`;
}

/** A tenant's databases, all its projects together; those that could not be measured now are left out, and said. */
function tenantDatabaseOf(t: OperatorTenant): string {
  const d = databaseUsageOf(t);
  if (!d) return 'unknown';
  const left = d.unmeasured ? ` · ${d.unmeasured} not measured` : '';
  return `${d.rows.toLocaleString()} rows · ${bytes(d.bytes)}${left}`;
}

/** The project's database against its plan (when the install reports it). */
function databaseOf(p: OperatorProject): string {
  const d = databaseUsageOf(p);
  if (!d) return 'unknown';
  const rows = `${d.rows.toLocaleString()}${d.max_rows === null || d.max_rows === undefined ? '' : ` of ${d.max_rows.toLocaleString()}`} rows`;
  const size = `${bytes(d.bytes)}${d.max_bytes === null || d.max_bytes === undefined ? '' : ` of ${bytes(d.max_bytes)}`}`;
  return `${rows} · ${size}`;
}

/** The functions of a project (or a tenant, all its projects together) this month (when the install reports it). */
function functionsOf(p: OperatorProject | OperatorTenant): string {
  const f = functionUsageOf(p);
  return f
    ? `${f.runs_this_month.toLocaleString()} runs this month · ${f.running_now} running · ${f.cron_jobs} cron jobs`
    : 'unknown';
}

export function Projects() {
  const [search, setSearch] = useState('');
  const [tenant, setTenant] = useState('');
  const [tenantText, setTenantText] = useState('');
  const pages = useCursors();
  const projects = useQuery({
    queryKey: [...PROJECTS_KEY, search, tenant, pages.after],
    queryFn: () =>
      operatorApi().projects.list({
        search: search || undefined,
        tenant_id: tenant || undefined,
        after: pages.after,
        first: 50,
      }),
  });
  const suspend = useAction({
    run: ({ id, reason }: { id: string; reason: string }) => operatorApi().projects.suspend(id, reason || undefined),
    done: (p) => `Suspended ${p.name}`,
    invalidate: [PROJECTS_KEY],
  });
  const resume = useAction({
    run: (id: string) => operatorApi().projects.resume(id),
    done: (p) => `Resumed ${p.name}`,
    invalidate: [PROJECTS_KEY],
  });
  return (
    <Section title="Projects">
      <SearchForm
        label="Search projects by name or id"
        onSearch={(q) => {
          setSearch(q);
          setTenant(tenantText.trim());
          pages.reset();
        }}
      >
        <TextField label="Tenant id" value={tenantText} onChange={(e) => setTenantText(e.target.value)} />
      </SearchForm>
      <QueryView query={projects} loading="Loading projects" failed="Could not list the projects">
        {(page) => (
          <>
            <DataTable
              wide
              label="Projects"
              actions
              columns={['Project', 'Tenant', 'Plan', 'Server', 'Storage', 'Database', 'Functions', 'Status', 'Created']}
            >
              {page.projects.map((p: OperatorProject) => (
                <tr key={p.id}>
                  <td>
                    {p.name}
                    <div className="muted">
                      <code>{p.id}</code>
                    </div>
                  </td>
                  <td>{p.tenant?.email}</td>
                  <td>{p.plan?.name}</td>
                  <td>{p.server ? <code>{p.server}</code> : <span className="muted">not yet made</span>}</td>
                  <td>{storageOf(p)}</td>
                  <td>{databaseOf(p)}</td>
                  <td>{functionsOf(p)}</td>
                  <td>
                    <Status at={p.suspended_at ?? null} reason={p.suspended_reason ?? null} />
                  </td>
                  <td>{when(p.created_at)}</td>
                  <td>
                    <SuspendControl
                      what={`project ${p.name}`}
                      suspended={!!p.suspended_at}
                      busy={suspend.isPending || resume.isPending}
                      onSuspend={(reason) => suspend.mutate({ id: p.id, reason })}
                      onResume={() => resume.mutate(p.id)}
                    />
                  </td>
                </tr>
              ))}
            </DataTable>
            <CursorPager pages={pages} next={page.next_cursor} label="Project pages" />
          </>
        )}
      </QueryView>
      <ErrorBox error={suspend.error ?? resume.error} title="The change was refused" />
    </Section>
  );
}
