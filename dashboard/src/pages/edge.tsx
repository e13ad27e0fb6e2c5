// The edge function collections beside the functions themselves: database hooks, webhook receivers (URL to copy
// and a test send), cron jobs (next five runs in the job's time zone), e-mail templates (with preview) and SMTP
// settings (with a test send), and stats charts.
import { lazy, Suspense, useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'wouter';
import type { CronJob, EmailTemplate, WebhookReceiver } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { json, when } from '../lib/format.ts';
import { useFunctions } from './functions.tsx';
import {
  Badge,
  Button,
  Check,
  CopyField,
  Empty,
  ErrorBox,
  Loading,
  Section,
  SelectField,
  TextArea,
  TextField,
  useConfirm,
  useToast,
} from '../ui/index.tsx';

const Chart = lazy(() => import('../ui/chart.tsx').then((m) => ({ default: m.Chart })));

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

/** The delete button of a row, asking first. */
function DeleteButton({ what, onConfirm, busy }: { what: string; onConfirm: () => void; busy?: boolean }) {
  const confirm = useConfirm();
  return (
    <Button
      className="btn-small"
      variant="danger"
      busy={busy}
      aria-label={`Delete ${what}`}
      onClick={async () => {
        if (
          await confirm({
            title: `Delete ${what}?`,
            body: <p>It stops at once; this cannot be undone.</p>,
            action: 'Delete',
          })
        )
          onConfirm();
      }}
    >
      Delete
    </Button>
  );
}

function Hooks() {
  const { api, project } = useProjectCtx();
  const queries = useQueryClient();
  const toast = useToast();
  const [table, setTable] = useState('');
  const [timing, setTiming] = useState('after');
  const [events, setEvents] = useState<string[]>(['insert']);
  const [fn, setFn] = useState('');
  const list = useQuery({ queryKey: ['hooks', project.id], queryFn: () => api.functions.hooks.list() });
  const refresh = () => queries.invalidateQueries({ queryKey: ['hooks', project.id] });
  const create = useMutation({
    mutationFn: () => api.functions.hooks.create({ table: table.trim(), timing, events, function: fn }),
    onSuccess: async () => {
      toast('Hook created');
      setTable('');
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.functions.hooks.remove(id),
    onSuccess: async () => {
      toast('Hook deleted');
      await refresh();
    },
  });
  return (
    <>
      <Section title="Database hooks">
        <p className="muted">
          Before-hooks run inside a write and may change or refuse it; after-hooks run after commit, at least once.
        </p>
        {list.isPending ? (
          <Loading />
        ) : list.error ? (
          <ErrorBox error={list.error} />
        ) : list.data.length === 0 ? (
          <Empty title="No hooks">Add one below to run a function when rows of a table change.</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Table</th>
                  <th scope="col">When</th>
                  <th scope="col">Events</th>
                  <th scope="col">Function</th>
                  <th scope="col">
                    <span className="sr-only-label">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((h) => (
                  <tr key={h.id}>
                    <td>{h.table}</td>
                    <td>{h.timing}</td>
                    <td>{h.events.join(', ')}</td>
                    <td>{h.function}</td>
                    <td>
                      <DeleteButton what={`the ${h.timing} hook on ${h.table}`} onConfirm={() => remove.mutate(h.id)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ErrorBox error={remove.error} />
      </Section>
      <Section title="New hook">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <div className="row">
            <TextField label="Table" required value={table} onChange={(e) => setTable(e.target.value)} />
            <SelectField
              label="Timing"
              value={timing}
              onChange={(e) => setTiming(e.target.value)}
              options={['before', 'after']}
            />
            <FunctionSelect value={fn} onChange={setFn} />
          </div>
          <fieldset className="card">
            <legend>Events</legend>
            {['insert', 'update', 'delete'].map((ev) => (
              <Check
                key={ev}
                label={ev}
                checked={events.includes(ev)}
                onChange={(e) => setEvents(e.target.checked ? [...events, ev] : events.filter((x) => x !== ev))}
              />
            ))}
          </fieldset>
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create hook
          </Button>
        </form>
        <ErrorBox error={create.error} title="Could not create the hook" />
      </Section>
    </>
  );
}

function Webhooks() {
  const { api, project } = useProjectCtx();
  const queries = useQueryClient();
  const toast = useToast();
  const [slug, setSlug] = useState('');
  const [fn, setFn] = useState('');
  const [description, setDescription] = useState('');
  const list = useQuery({ queryKey: ['webhooks', project.id], queryFn: () => api.functions.webhooks.list() });
  const refresh = () => queries.invalidateQueries({ queryKey: ['webhooks', project.id] });
  const create = useMutation({
    mutationFn: () =>
      api.functions.webhooks.create({
        function: fn,
        ...(slug.trim() ? { slug: slug.trim() } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
      }),
    onSuccess: async () => {
      toast('Webhook receiver created');
      setSlug('');
      setDescription('');
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.functions.webhooks.remove(id),
    onSuccess: async () => {
      toast('Receiver deleted');
      await refresh();
    },
  });
  return (
    <>
      <Section title="Webhook receivers">
        <p className="muted">
          Public URLs that other services call; each runs its function with the request as <code>input</code>.
        </p>
        {list.isPending ? (
          <Loading />
        ) : list.error ? (
          <ErrorBox error={list.error} />
        ) : list.data.length === 0 ? (
          <Empty title="No webhook receivers">Add one below; give its URL to the service that should call you.</Empty>
        ) : (
          list.data.map((w) => <WebhookCard key={w.id} hook={w} onDelete={() => remove.mutate(w.id)} />)
        )}
        <ErrorBox error={remove.error} />
      </Section>
      <Section title="New receiver">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
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
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create receiver
          </Button>
        </form>
        <ErrorBox error={create.error} title="Could not create the receiver" />
      </Section>
    </>
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
          <DeleteButton what={`receiver ${hook.slug}`} onConfirm={onDelete} />
        </div>
      </div>
      {hook.description && <p>{hook.description}</p>}
      <CopyField label={`URL of ${hook.slug}`} value={hook.url} />
      <details>
        <summary>Send a test request</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            send.mutate();
          }}
        >
          <TextArea
            label="Body (JSON)"
            className="code"
            rows={4}
            spellCheck={false}
            value={body}
            onChange={(e) => setBody(e.target.value)}
          />
          <Button type="submit" busy={send.isPending}>
            Send test
          </Button>
        </form>
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
  const queries = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState('');
  const [schedule, setSchedule] = useState('*/5 * * * *');
  const [timezone, setTimezone] = useState(TIME_ZONE);
  const [fn, setFn] = useState('');
  const [input, setInput] = useState('');
  const [inputError, setInputError] = useState<string>();
  const list = useQuery({ queryKey: ['cron', project.id], queryFn: () => api.functions.cron.list() });
  const refresh = () => queries.invalidateQueries({ queryKey: ['cron', project.id] });
  const create = useMutation({
    mutationFn: (payload: unknown) =>
      api.functions.cron.create({
        name: name.trim(),
        schedule: schedule.trim(),
        timezone: timezone.trim(),
        function: fn,
        ...(payload !== undefined ? { input: payload } : {}),
      }),
    onSuccess: async () => {
      toast('Cron job created');
      setName('');
      await refresh();
    },
  });
  const toggle = useMutation({
    mutationFn: (j: CronJob) => api.functions.cron.update(j.id, { enabled: !j.enabled }),
    onSuccess: async (j) => {
      toast(`${j.name} ${j.enabled ? 'enabled' : 'paused'}`);
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.functions.cron.remove(id),
    onSuccess: async () => {
      toast('Cron job deleted');
      await refresh();
    },
  });
  return (
    <>
      <Section title="Cron jobs">
        {list.isPending ? (
          <Loading />
        ) : list.error ? (
          <ErrorBox error={list.error} />
        ) : list.data.length === 0 ? (
          <Empty title="No cron jobs">Add one below to run a function on a schedule.</Empty>
        ) : (
          list.data.map((j) => (
            <div className="card" key={j.id}>
              <div className="card-head">
                <h3>{j.name}</h3>
                <div className="actions">
                  {j.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="warn">paused</Badge>}
                  <Button className="btn-small" onClick={() => toggle.mutate(j)}>
                    {j.enabled ? 'Pause' : 'Enable'}
                  </Button>
                  <DeleteButton what={`cron job ${j.name}`} onConfirm={() => remove.mutate(j.id)} />
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
        )}
        <ErrorBox error={toggle.error ?? remove.error} />
      </Section>
      <Section title="New cron job">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            try {
              const payload: unknown = input.trim() ? JSON.parse(input) : undefined;
              setInputError(undefined);
              create.mutate(payload);
            } catch (err) {
              setInputError(`Not valid JSON: ${(err as Error).message}`);
            }
          }}
        >
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
          <TextArea
            label="Input (JSON, optional)"
            className="code"
            rows={3}
            spellCheck={false}
            error={inputError}
            value={input}
            onChange={(e) => setInput(e.target.value)}
          />
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create cron job
          </Button>
        </form>
        <ErrorBox error={create.error} title="Could not create the cron job" />
      </Section>
    </>
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
      <Section
        title="E-mail templates"
        actions={
          <Button variant="primary" onClick={() => setEditing('new')}>
            New template
          </Button>
        }
      >
        {templates.isPending ? (
          <Loading />
        ) : templates.error ? (
          <ErrorBox error={templates.error} />
        ) : templates.data.length === 0 ? (
          <Empty title="No templates">Email steps send a template by name: create one with “New template”.</Empty>
        ) : (
          <ul>
            {templates.data.map((t) => (
              <li key={t.id}>
                <button type="button" className="btn btn-ghost" onClick={() => setEditing(t)}>
                  {t.name}
                </button>{' '}
                — {t.subject}
              </li>
            ))}
          </ul>
        )}
      </Section>
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
  const queries = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState(template?.name ?? '');
  const [subject, setSubject] = useState(template?.subject ?? 'Hello {{ name }}');
  const [html, setHtml] = useState(template?.html ?? '<p>Hello {{ name }}!</p>');
  const [text, setText] = useState(template?.text ?? 'Hello {{ name }}!');
  const [vars, setVars] = useState('{\n  "name": "Ada"\n}');
  const refresh = () => queries.invalidateQueries({ queryKey: ['email-templates', project.id] });
  const save = useMutation({
    mutationFn: () =>
      template
        ? api.functions.emailTemplates.update(template.id, { name, subject, html, text })
        : api.functions.emailTemplates.create({ name, subject, html, text }),
    onSuccess: async () => {
      toast('Template saved');
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: () => api.functions.emailTemplates.remove(template!.id),
    onSuccess: async () => {
      toast('Template deleted');
      await refresh();
      onDone();
    },
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
          {template && <DeleteButton what={`template ${template.name}`} onConfirm={() => remove.mutate()} />}
        </>
      }
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <div className="row">
          <TextField label="Template name" required value={name} onChange={(e) => setName(e.target.value)} />
          <TextField label="Subject" required value={subject} onChange={(e) => setSubject(e.target.value)} />
        </div>
        <TextArea
          label="HTML body"
          className="code"
          rows={6}
          spellCheck={false}
          value={html}
          onChange={(e) => setHtml(e.target.value)}
        />
        <TextArea label="Text body" rows={4} value={text} onChange={(e) => setText(e.target.value)} />
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save template
        </Button>
      </form>
      <ErrorBox error={save.error ?? remove.error} />
      {template && (
        <>
          <h3>Preview</h3>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              preview.mutate();
            }}
          >
            <TextArea
              label="Variables (JSON)"
              className="code"
              rows={3}
              spellCheck={false}
              value={vars}
              onChange={(e) => setVars(e.target.value)}
            />
            <Button type="submit" busy={preview.isPending}>
              Preview
            </Button>
          </form>
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
  if (config.isPending) return <Loading />;
  if (config.error) return <ErrorBox error={config.error} />;
  return <SmtpForm key={JSON.stringify(config.data)} initial={config.data} />;
}

function SmtpForm({
  initial,
}: {
  initial: { host: string; port: number; secure: boolean; user?: string | null; from: string } | null;
}) {
  const { api, project } = useProjectCtx();
  const queries = useQueryClient();
  const toast = useToast();
  const [host, setHost] = useState(initial?.host ?? '');
  const [port, setPort] = useState(String(initial?.port ?? 587));
  const [secure, setSecure] = useState(initial?.secure ?? false);
  const [user, setUser] = useState(initial?.user ?? '');
  const [password, setPassword] = useState('');
  const [from, setFrom] = useState(initial?.from ?? '');
  const [to, setTo] = useState('');
  const save = useMutation({
    mutationFn: () =>
      api.functions.emailConfig.set({
        host: host.trim(),
        port: Number(port),
        secure,
        from: from.trim(),
        ...(user.trim() ? { user: user.trim() } : {}),
        ...(password ? { password } : {}),
      }),
    onSuccess: async () => {
      toast('SMTP settings saved');
      setPassword('');
      await queries.invalidateQueries({ queryKey: ['email-config', project.id] });
    },
  });
  const test = useMutation({
    mutationFn: () => api.functions.emailConfig.test(to.trim()),
    onSuccess: (r) =>
      toast(r.sent ? 'Test e-mail accepted by the SMTP server' : 'The SMTP server did not accept the mail'),
  });
  return (
    <Section title="SMTP settings">
      <p className="muted">
        Email steps send through your own SMTP server. The password is stored encrypted and never shown again.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
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
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save SMTP settings
        </Button>
      </form>
      <ErrorBox error={save.error} title="Could not save the SMTP settings" />
      {initial && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            test.mutate();
          }}
        >
          <TextField
            label="Send a test e-mail to"
            type="email"
            required
            value={to}
            onChange={(e) => setTo(e.target.value)}
          />
          <Button type="submit" busy={test.isPending}>
            Send test
          </Button>
        </form>
      )}
      <ErrorBox error={test.error} title="The test e-mail was not sent" />
    </Section>
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
  const idx = useMemo(() => fns.map((_, i) => i), [fns]);
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
      <Section title="Last 24 hours">
        {stats.error ? (
          <ErrorBox error={stats.error} />
        ) : !stats.data ? (
          <Loading />
        ) : fns.length === 0 ? (
          <Empty title="No runs in the last 24 hours">Invoke a function to see its figures here.</Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Function</th>
                  <th scope="col">Runs</th>
                  <th scope="col">Succeeded</th>
                  <th scope="col">Failed</th>
                  <th scope="col">p50</th>
                  <th scope="col">p95</th>
                </tr>
              </thead>
              <tbody>
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
              </tbody>
            </table>
          </div>
        )}
      </Section>
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
              <Chart title="Runs by outcome, per function" x={idx} xLabels={names} series={outcome} bars />
            </Section>
            <Section title="Duration">
              <Chart title="Duration p50 and p95, per function" x={idx} xLabels={names} series={latency} bars />
            </Section>
          </div>
        )}
      </Suspense>
    </>
  );
}
