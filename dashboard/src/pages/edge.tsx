// The edge function collections beside the functions themselves: database hooks, webhook receivers (URL to copy
// and a test send), cron jobs (next five runs in the job's time zone), e-mail templates (with preview) and SMTP
// settings (with a test send), and stats charts.
import { lazy, Suspense, useMemo, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import type { CronJob, EmailTemplate, WebhookReceiver } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { json, when } from '../lib/format.ts';
import { useFunctions } from './functions.tsx';
import { useJsonText } from '../lib/json-text.ts';
import { listTables } from '../lib/tables.ts';
import {
  Badge,
  Button,
  Check,
  CheckGroup,
  CodeArea,
  CopyField,
  DataTable,
  DeleteButton,
  Empty,
  ErrorBox,
  Form,
  FormSection,
  Loading,
  RowForm,
  Section,
  SelectField,
  TextArea,
  TextField,
} from '../ui/index.tsx';
import { ListResourceSections, ListSection, QueryView, useAction, useListResource } from '../ui/data.tsx';

const Chart = lazy(() => import('../ui/chart.tsx').then((m) => ({ default: m.Chart })));
const BarChart = lazy(() => import('../ui/chart.tsx').then((m) => ({ default: m.BarChart })));

export default function Edge({ tab }: { tab: string }) {
  switch (tab) {
    case 'hooks':
      return <Hooks />;
    case 'webhooks':
      return <Webhooks />;
    case 'cron':
      return <Cron />;
    case 'email':
      return <Email />;
    default:
      return <Stats />;
  }
}

/** A select of the project's functions (by name), with a link to create one when there is none. */
function FunctionSelect({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const { base } = useProjectCtx();
  const fns = useFunctions();
  if (fns.data && fns.data.length === 0)
    return (
      <p className="muted">
        No function yet: <Link href={`${base}/functions/new`}>create one</Link> first.
      </p>
    );
  return (
    <SelectField
      label="Function"
      required
      value={value}
      onChange={(e) => onChange(e.target.value)}
      options={[{ value: '', label: 'Choose a function…' }, ...(fns.data ?? []).map((f) => f.name)]}
    />
  );
}

/**
 * A select of the project's tables (read as the database page reads them, and cached under the same key), with a
 * link to create one when there is none: a hook on a table that does not exist would never fire (the API refuses it).
 */
export function TableSelect({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const { api, base, project } = useProjectCtx();
  const tables = useQuery({ queryKey: ['tables', project.id], queryFn: () => listTables(api) });
  if (tables.error) return <ErrorBox error={tables.error} title="Could not read the project's tables" />;
  if (tables.data && tables.data.length === 0)
    return (
      <p className="muted">
        No table yet: <Link href={`${base}/database/new`}>create one</Link> first.
      </p>
    );
  return (
    <SelectField
      label="Table"
      required
      value={value}
      onChange={(e) => onChange(e.target.value)}
      options={[
        { value: '', label: tables.isPending ? 'Loading tables…' : 'Choose a table…' },
        ...(tables.data ?? []).map((t) => t.name),
      ]}
    />
  );
}

/** The delete button of a hook, receiver, cron job or template, asking first. */
function Delete({ what, onConfirm }: { what: string; onConfirm: () => void }) {
  return <DeleteButton what={what} body={<p>It stops at once; this cannot be undone.</p>} onConfirm={onConfirm} />;
}

function Hooks() {
  const { api, project } = useProjectCtx();
  const [table, setTable] = useState('');
  const [timing, setTiming] = useState('after');
  const [events, setEvents] = useState<string[]>(['insert']);
  const [fn, setFn] = useState('');
  const hooks = useListResource({
    key: ['hooks', project.id],
    collection: api.functions.hooks,
    input: () => ({ table, timing, events, function: fn }),
    onCreated: () => setTable(''),
    created: 'Hook created',
    deleted: 'Hook deleted',
  });
  return (
    <ListResourceSections
      resource={hooks}
      title="Database hooks"
      intro={
        <p className="muted">
          Before-hooks run inside a write and may change or refuse it; after-hooks run after commit, at least once.
        </p>
      }
      empty={<Empty title="No hooks">Add one below to run a function when rows of a table change.</Empty>}
      form={{ title: 'New hook', submit: 'Create hook', failed: 'Could not create the hook' }}
      onCreate={() => hooks.create.mutate()}
      fields={
        <>
          <div className="row">
            <TableSelect value={table} onChange={setTable} />
            <SelectField
              label="Timing"
              value={timing}
              onChange={(e) => setTiming(e.target.value)}
              options={['before', 'after']}
            />
            <FunctionSelect value={fn} onChange={setFn} />
          </div>
          <CheckGroup legend="Events" options={['insert', 'update', 'delete']} value={events} onChange={setEvents} />
        </>
      }
    >
      {(list) => (
        <DataTable columns={['Table', 'When', 'Events', 'Function']} actions>
          {list.map((h) => (
            <tr key={h.id}>
              <td>{h.table}</td>
              <td>{h.timing}</td>
              <td>{h.events.join(', ')}</td>
              <td>{h.function}</td>
              <td>
                <Delete what={`the ${h.timing} hook on ${h.table}`} onConfirm={() => hooks.remove.mutate(h.id)} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </ListResourceSections>
  );
}

function Webhooks() {
  const { api, project } = useProjectCtx();
  const [slug, setSlug] = useState('');
  const [fn, setFn] = useState('');
  const [description, setDescription] = useState('');
  const receivers = useListResource({
    key: ['webhooks', project.id],
    collection: api.functions.webhooks,
    input: () => ({
      function: fn,
      ...(slug.trim() ? { slug: slug.trim() } : {}),
      ...(description.trim() ? { description: description.trim() } : {}),
    }),
    onCreated: () => {
      setSlug('');
      setDescription('');
    },
    created: 'Webhook receiver created',
    deleted: 'Receiver deleted',
  });
  return (
    <ListResourceSections
      resource={receivers}
      title="Webhook receivers"
      intro={
        <p className="muted">
          Public URLs that other services call; each runs its function with the request as <code>input</code>.
        </p>
      }
      empty={
        <Empty title="No webhook receivers">Add one below; give its URL to the service that should call you.</Empty>
      }
      form={{ title: 'New receiver', submit: 'Create receiver', failed: 'Could not create the receiver' }}
      onCreate={() => receivers.create.mutate()}
      fields={
        <div className="row">
          <FunctionSelect value={fn} onChange={setFn} />
          <TextField
            label="Slug"
            hint="In the URL; default: the function's slug."
            value={slug}
            onChange={(e) => setSlug(e.target.value)}
          />
          <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} />
        </div>
      }
    >
      {(list) => list.map((w) => <WebhookCard key={w.id} hook={w} onDelete={() => receivers.remove.mutate(w.id)} />)}
    </ListResourceSections>
  );
}

function WebhookCard({ hook, onDelete }: { hook: WebhookReceiver; onDelete: () => void }) {
  const { api } = useProjectCtx();
  const [body, setBody] = useState('{\n  "event": "test"\n}');
  const path = new URL(hook.url, window.location.origin).pathname;
  // The receiver is public: the test is sent the way any outside service sends it, with no credentials.
  const send = useMutation({
    mutationFn: () =>
      api.http.call<unknown>('POST', path, {
        raw: body,
        headers: { 'content-type': 'application/json' },
        anonymous: true,
      }),
  });
  return (
    <div className="card">
      <div className="card-head">
        <h3>{hook.slug}</h3>
        <div className="actions">
          <Badge>{hook.function}</Badge>
          <Delete what={`receiver ${hook.slug}`} onConfirm={onDelete} />
        </div>
      </div>
      {hook.description && <p>{hook.description}</p>}
      <CopyField label={`URL of ${hook.slug}`} value={hook.url} />
      <details>
        <summary>Send a test request</summary>
        <Form onSubmit={() => send.mutate()}>
          <CodeArea label="Body (JSON)" rows={4} value={body} onChange={(e) => setBody(e.target.value)} />
          <Button type="submit" busy={send.isPending}>
            Send test
          </Button>
        </Form>
        <ErrorBox error={send.error} title="The receiver answered with an error" />
        {send.data && (
          <>
            <p>
              Answered <Badge tone="good">{send.data.status}</Badge>
            </p>
            <pre>{json(send.data.data)}</pre>
          </>
        )}
      </details>
    </div>
  );
}

const TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

function Cron() {
  const { api, project } = useProjectCtx();
  const [name, setName] = useState('');
  const [schedule, setSchedule] = useState('*/5 * * * *');
  const [timezone, setTimezone] = useState(TIME_ZONE);
  const [fn, setFn] = useState('');
  const input = useJsonText('', { empty: undefined });
  const key = ['cron', project.id];
  const jobs = useListResource({
    key,
    collection: api.functions.cron,
    input: (payload: unknown) => ({
      name: name.trim(),
      schedule: schedule.trim(),
      timezone: timezone.trim(),
      function: fn,
      ...(payload !== undefined ? { input: payload } : {}),
    }),
    onCreated: () => setName(''),
    created: 'Cron job created',
    deleted: 'Cron job deleted',
  });
  const toggle = useAction({
    run: (j: CronJob) => api.functions.cron.update(j.id, { enabled: !j.enabled }),
    done: (j) => `${j.name} ${j.enabled ? 'enabled' : 'paused'}`,
    invalidate: [key],
  });
  return (
    <ListResourceSections
      resource={jobs}
      title="Cron jobs"
      error={toggle.error}
      empty={<Empty title="No cron jobs">Add one below to run a function on a schedule.</Empty>}
      form={{ title: 'New cron job', submit: 'Create cron job', failed: 'Could not create the cron job' }}
      onCreate={() => input.withValue((payload) => jobs.create.mutate(payload))}
      fields={
        <>
          <div className="row">
            <TextField label="Job name" required value={name} onChange={(e) => setName(e.target.value)} />
            <TextField
              label="Schedule"
              required
              hint="Cron: minute hour day month weekday (6 fields: seconds first)."
              value={schedule}
              onChange={(e) => setSchedule(e.target.value)}
            />
            <TextField
              label="Time zone"
              required
              hint="IANA, e.g. Europe/Paris."
              value={timezone}
              onChange={(e) => setTimezone(e.target.value)}
            />
            <FunctionSelect value={fn} onChange={setFn} />
          </div>
          <CodeArea label="Input (JSON, optional)" rows={3} {...input.field} />
        </>
      }
    >
      {(list) =>
        list.map((j) => (
          <div className="card" key={j.id}>
            <div className="card-head">
              <h3>{j.name}</h3>
              <div className="actions">
                {j.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="warn">paused</Badge>}
                <Button className="btn-small" onClick={() => toggle.mutate(j)}>
                  {j.enabled ? 'Pause' : 'Enable'}
                </Button>
                <Delete what={`cron job ${j.name}`} onConfirm={() => jobs.remove.mutate(j.id)} />
              </div>
            </div>
            <dl className="props">
              <dt>Schedule</dt>
              <dd>
                <code>{j.schedule}</code> in {j.timezone}
              </dd>
              <dt>Function</dt>
              <dd>{j.function}</dd>
              <dt>Last run</dt>
              <dd>{when(j.last_run_at as string | null)}</dd>
            </dl>
            <h4>Next runs ({j.timezone})</h4>
            <ol aria-label={`Next runs of ${j.name}`} data-testid="next-runs">
              {(j.next_runs as string[]).slice(0, 5).map((r) => (
                <li key={r}>{when(r, j.timezone)}</li>
              ))}
            </ol>
          </div>
        ))
      }
    </ListResourceSections>
  );
}

function Email() {
  const { api, project } = useProjectCtx();
  const templates = useQuery({
    queryKey: ['email-templates', project.id],
    queryFn: () => api.functions.emailTemplates.list(),
  });
  const [editing, setEditing] = useState<EmailTemplate | 'new' | null>(null);
  return (
    <>
      <ListSection
        title="E-mail templates"
        actions={
          <Button variant="primary" onClick={() => setEditing('new')}>
            New template
          </Button>
        }
        query={templates}
        empty={<Empty title="No templates">Email steps send a template by name: create one with “New template”.</Empty>}
      >
        {(list) => (
          <ul>
            {list.map((t) => (
              <li key={t.id}>
                <button type="button" className="btn btn-ghost" onClick={() => setEditing(t)}>
                  {t.name}
                </button>{' '}
                — {t.subject}
              </li>
            ))}
          </ul>
        )}
      </ListSection>
      {editing && (
        <TemplateEditor
          key={editing === 'new' ? 'new' : editing.id}
          template={editing === 'new' ? undefined : editing}
          onDone={() => setEditing(null)}
        />
      )}
      <SmtpSettings />
    </>
  );
}

function TemplateEditor({ template, onDone }: { template?: EmailTemplate; onDone: () => void }) {
  const { api, project } = useProjectCtx();
  const [name, setName] = useState(template?.name ?? '');
  // A new template starts empty (the examples are placeholders, so typing never appends to them).
  const [subject, setSubject] = useState(template?.subject ?? '');
  const [html, setHtml] = useState(template?.html ?? '');
  const [text, setText] = useState(template?.text ?? '');
  const [vars, setVars] = useState('{\n  "name": "Ada"\n}');
  const key = ['email-templates', project.id];
  const save = useAction({
    run: () =>
      template
        ? api.functions.emailTemplates.update(template.id, { name, subject, html, text })
        : api.functions.emailTemplates.create({ name, subject, html, text }),
    done: 'Template saved',
    invalidate: [key],
  });
  const remove = useAction({
    run: () => api.functions.emailTemplates.remove(template!.id),
    done: 'Template deleted',
    invalidate: [key],
    then: onDone,
  });
  const preview = useMutation({
    mutationFn: () => api.functions.emailTemplates.preview(template!.id, JSON.parse(vars || '{}')),
  });
  return (
    <Section
      title={template ? `Template ${template.name}` : 'New template'}
      actions={
        <>
          <Button onClick={onDone}>Close</Button>
          {template && <Delete what={`template ${template.name}`} onConfirm={() => remove.mutate()} />}
        </>
      }
    >
      <Form onSubmit={() => save.mutate()}>
        <div className="row">
          <TextField
            label="Template name"
            required
            placeholder="welcome"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <TextField
            label="Subject"
            required
            placeholder="Hello {{ name }}"
            value={subject}
            onChange={(e) => setSubject(e.target.value)}
          />
        </div>
        <CodeArea
          label="HTML body"
          rows={6}
          placeholder="<p>Hello {{ name }}!</p>"
          value={html}
          onChange={(e) => setHtml(e.target.value)}
        />
        <TextArea
          label="Text body"
          rows={4}
          placeholder="Hello {{ name }}!"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save template
        </Button>
      </Form>
      <ErrorBox error={save.error ?? remove.error} />
      {template && (
        <>
          <h3>Preview</h3>
          <Form onSubmit={() => preview.mutate()}>
            <CodeArea label="Variables (JSON)" rows={3} value={vars} onChange={(e) => setVars(e.target.value)} />
            <Button type="submit" busy={preview.isPending}>
              Preview
            </Button>
          </Form>
          <ErrorBox error={preview.error} />
          {preview.data && (
            <div className="stack">
              <p>
                <strong>Subject:</strong> {preview.data.subject}
              </p>
              {/* The HTML is the tenant's own, shown in a sandbox without scripts. */}
              <iframe className="preview" title="HTML preview" sandbox="" srcDoc={preview.data.html} />
              <pre>{preview.data.text}</pre>
            </div>
          )}
        </>
      )}
    </Section>
  );
}

function SmtpSettings() {
  const { api, project } = useProjectCtx();
  const config = useQuery({ queryKey: ['email-config', project.id], queryFn: () => api.functions.emailConfig.get() });
  return <QueryView query={config}>{(c) => <SmtpForm key={JSON.stringify(c)} initial={c} />}</QueryView>;
}

function SmtpForm({
  initial,
}: {
  initial: { host: string; port: number; secure: boolean; user?: string | null; from: string } | null;
}) {
  const { api, project } = useProjectCtx();
  const [host, setHost] = useState(initial?.host ?? '');
  const [port, setPort] = useState(String(initial?.port ?? 587));
  const [secure, setSecure] = useState(initial?.secure ?? false);
  const [user, setUser] = useState(initial?.user ?? '');
  const [password, setPassword] = useState('');
  const [from, setFrom] = useState(initial?.from ?? '');
  const [to, setTo] = useState('');
  const save = useAction({
    run: () =>
      api.functions.emailConfig.set({
        host: host.trim(),
        port: Number(port),
        secure,
        from: from.trim(),
        ...(user.trim() ? { user: user.trim() } : {}),
        ...(password ? { password } : {}),
      }),
    onSuccess: () => setPassword(''),
    done: 'SMTP settings saved',
    invalidate: [['email-config', project.id]],
  });
  const test = useAction({
    run: () => api.functions.emailConfig.test(to.trim()),
    done: (r) => (r.sent ? 'Test e-mail accepted by the SMTP server' : 'The SMTP server did not accept the mail'),
  });
  return (
    <FormSection
      title="SMTP settings"
      intro={
        <p className="muted">
          Email steps send through your own SMTP server. The password is stored encrypted and never shown again.
        </p>
      }
      submit="Save SMTP settings"
      action={save}
      failed="Could not save the SMTP settings"
      onSubmit={() => save.mutate()}
      after={
        <>
          {initial && (
            <RowForm submit="Send test" busy={test.isPending} onSubmit={() => test.mutate()}>
              <TextField
                label="Send a test e-mail to"
                type="email"
                required
                value={to}
                onChange={(e) => setTo(e.target.value)}
              />
            </RowForm>
          )}
          <ErrorBox error={test.error} title="The test e-mail was not sent" />
        </>
      }
    >
      <div className="row">
        <TextField label="SMTP host" required value={host} onChange={(e) => setHost(e.target.value)} />
        <TextField label="Port" type="number" required value={port} onChange={(e) => setPort(e.target.value)} />
        <TextField
          label="From"
          required
          placeholder="Shop <shop@example.com>"
          value={from}
          onChange={(e) => setFrom(e.target.value)}
        />
      </div>
      <div className="row">
        <TextField label="User" autoComplete="off" value={user} onChange={(e) => setUser(e.target.value)} />
        <TextField
          label="Password"
          type="password"
          autoComplete="new-password"
          hint={initial ? 'Empty: keep the stored one.' : undefined}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </div>
      <Check label="TLS from the start (port 465)" checked={secure} onChange={(e) => setSecure(e.target.checked)} />
    </FormSection>
  );
}

const HOURS = 24;

function Stats() {
  const { api, project } = useProjectCtx();
  const [since] = useState(() => new Date(Date.now() - HOURS * 3600_000));
  const stats = useQuery({
    queryKey: ['stats', project.id, since.toISOString()],
    queryFn: () => api.functions.executions.stats({ since: since.toISOString() }),
  });
  // Runs per hour: the window's executions (newest first, at most 2,000), counted by the hour they started.
  const runs = useQuery({
    queryKey: ['stats-runs', project.id, since.toISOString()],
    queryFn: async () => {
      const counts = new Array<number>(HOURS).fill(0);
      let after: string | undefined;
      for (let page = 0; page < 20; page++) {
        const r = await api.functions.executions.list({ since: since.toISOString(), first: 100, after });
        for (const x of r.executions) {
          const h = Math.floor((new Date(x.created_at).getTime() - since.getTime()) / 3600_000);
          if (h >= 0 && h < HOURS) counts[h]! += 1;
        }
        after = r.next_cursor ?? undefined;
        if (!after) break;
      }
      return counts;
    },
  });
  const hours = useMemo(() => Array.from({ length: HOURS }, (_, i) => i), []);
  const hourLabels = useMemo(
    () =>
      hours.map((i) =>
        new Date(since.getTime() + i * 3600_000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }),
      ),
    [hours, since],
  );
  const fns = stats.data?.functions ?? [];
  const names = useMemo(() => fns.map((f) => f.function), [fns]);
  const outcome = useMemo(
    () => [
      { label: 'Succeeded', values: fns.map((f) => f.succeeded), color: '#1d6b35' },
      { label: 'Failed', values: fns.map((f) => f.failed), color: '#b3261e' },
    ],
    [fns],
  );
  const latency = useMemo(
    () => [
      { label: 'p50 (ms)', values: fns.map((f) => f.p50_ms as number | null), color: '#1f5fbf' },
      { label: 'p95 (ms)', values: fns.map((f) => f.p95_ms as number | null), color: '#8a5a00' },
    ],
    [fns],
  );
  const perHour = useMemo(() => [{ label: 'Runs', values: runs.data ?? [], color: '#1f5fbf' }], [runs.data]);
  return (
    <>
      <ListSection
        title="Last 24 hours"
        query={stats}
        isEmpty={(s) => s.functions.length === 0}
        empty={<Empty title="No runs in the last 24 hours">Invoke a function to see its figures here.</Empty>}
      >
        {() => (
          <DataTable columns={['Function', 'Runs', 'Succeeded', 'Failed', 'p50', 'p95']}>
            {fns.map((f) => (
              <tr key={f.function}>
                <td>{f.function}</td>
                <td className="num">{f.total}</td>
                <td className="num">{f.succeeded}</td>
                <td className="num">{f.failed}</td>
                <td className="num">{f.p50_ms ?? '—'} ms</td>
                <td className="num">{f.p95_ms ?? '—'} ms</td>
              </tr>
            ))}
          </DataTable>
        )}
      </ListSection>
      <Suspense fallback={<Loading what="Loading charts" />}>
        <Section title="Runs per hour">
          {runs.error ? (
            <ErrorBox error={runs.error} />
          ) : runs.data ? (
            <Chart title="Runs per hour" x={hours} xLabels={hourLabels} series={perHour} />
          ) : (
            <Loading />
          )}
        </Section>
        {fns.length > 0 && (
          <div className="grid-2">
            <Section title="Success and failure">
              <BarChart title="Runs by outcome, per function" categories={names} series={outcome} />
            </Section>
            <Section title="Duration">
              <BarChart title="Duration p50 and p95, per function" categories={names} series={latency} unit=" ms" />
            </Section>
          </div>
        )}
      </Suspense>
    </>
  );
}
