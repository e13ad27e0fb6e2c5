// Edge functions: the list, the editor (JSON with schema validation, errors on their lines), invoking with input
// (sync, async, dry run), executions with filters and one execution as a timeline of its steps. Hooks, webhook
// receivers, cron jobs, e-mail and stats are in ./edge.tsx.
import { lazy, Suspense, useMemo, useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { isTesseraError, type EdgeFunction, type ExecutionEvent, type InvokeResult } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { json, when } from '../lib/format.ts';
import { checkDefinitionText, lineOfPath, NEW_FUNCTION, type Issue } from '../lib/function-schema.ts';
import { useJsonText } from '../lib/json-text.ts';
import { JsonEditor } from '../ui/json-editor.tsx';
import {
  Area,
  BackLink,
  Badge,
  Button,
  CodeArea,
  ConfirmButton,
  DataTable,
  Empty,
  ErrorBox,
  Form,
  Loading,
  Section,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { CursorPager, ListSection, QueryView, useAction, useCursors } from '../ui/data.tsx';

const Edge = lazy(() => import('./edge.tsx'));
const Secrets = lazy(() => import('./functions-secrets.tsx'));
const Events = lazy(() => import('./functions-events.tsx'));
const ReplayAndCompare = lazy(() => import('./functions-diff.tsx'));
const ExecutionDiffView = lazy(() => import('./functions-diff.tsx').then((m) => ({ default: m.ExecutionDiffView })));

export default function Functions() {
  const { base, project } = useProjectCtx();
  return (
    <Area
      title={`${project.name}: edge functions`}
      description="Multi-step functions run by invokes, database hooks, webhooks and cron."
      label="Edge functions"
      base={`${base}/functions`}
      routes={[
        { path: 'new', page: () => <FunctionEditor /> },
        { path: 'f/:id', page: (p) => <FunctionPage id={decodeURIComponent(p.id ?? '')} /> },
        {
          path: 'executions/:id/diff/:other',
          page: (p) => (
            <ExecutionDiffView id={decodeURIComponent(p.id ?? '')} other={decodeURIComponent(p.other ?? '')} />
          ),
        },
        { path: 'executions/:id', page: (p) => <ExecutionDetail id={decodeURIComponent(p.id ?? '')} /> },
        { path: 'events/:id', page: (p) => <Events id={decodeURIComponent(p.id ?? '')} /> },
      ]}
      tabs={[
        { path: 'list', label: 'Functions', also: ['f', 'new'], page: <FunctionList /> },
        { path: 'executions', label: 'Executions', page: <Executions /> },
        // Hooks, webhooks, cron jobs, e-mail and stats are in ./edge.tsx (loaded when one of them is opened).
        { path: 'hooks', label: 'Hooks', page: <Edge tab="hooks" /> },
        { path: 'webhooks', label: 'Webhooks', page: <Edge tab="webhooks" /> },
        { path: 'cron', label: 'Cron jobs', page: <Edge tab="cron" /> },
        { path: 'email', label: 'E-mail', page: <Edge tab="email" /> },
        { path: 'secrets', label: 'Secrets', page: <Secrets /> },
        { path: 'events', label: 'Events', page: <Events /> },
        { path: 'stats', label: 'Stats', page: <Edge tab="stats" /> },
      ]}
    />
  );
}

/** Every function of the project (all pages). */
export function useFunctions() {
  const { api, project } = useProjectCtx();
  return useQuery({
    queryKey: ['functions', project.id],
    queryFn: async () => {
      const out: EdgeFunction[] = [];
      let after: string | undefined;
      do {
        const page = await api.functions.list({ first: 100, after });
        out.push(...page.functions);
        after = page.next_cursor ?? undefined;
      } while (after);
      return out;
    },
  });
}

function FunctionList() {
  const { base } = useProjectCtx();
  const list = useFunctions();
  return (
    <ListSection
      title="Functions"
      actions={
        <Link className="btn btn-primary" href={`${base}/functions/new`}>
          New function
        </Link>
      }
      query={list}
      loading="Loading functions"
      empty={
        <Empty title="No functions yet">
          <Link href={`${base}/functions/new`}>Create a function</Link>: a list of steps (Transform, Database, HTTP,
          Email, Invoke) run in order.
        </Empty>
      }
    >
      {(fns) => (
        <DataTable columns={['Name', 'Description', 'Steps', 'Version', 'Access', 'Updated']}>
          {fns.map((f) => (
            <tr key={f.id}>
              <td>
                <Link href={`${base}/functions/f/${encodeURIComponent(f.id)}`}>{f.name}</Link>
              </td>
              <td>{f.description || '—'}</td>
              <td className="num">{Array.isArray(f.steps) ? f.steps.length : '—'}</td>
              <td className="num">{f.version}</td>
              <td>{f.public ? <Badge tone="warn">public</Badge> : <Badge>secret key</Badge>}</td>
              <td>{when(f.updated_at)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </ListSection>
  );
}

/** The editable part of a function, as the editor shows it. */
function definitionText(f: EdgeFunction): string {
  return `${JSON.stringify({ name: f.name, slug: f.slug, description: f.description, public: f.public, timeout_ms: f.timeout_ms, retries: f.retries, steps: f.steps }, null, 2)}\n`;
}

/** Where the service's VALIDATION_FAILED points: {index, field} of a step, or a top-level field. */
function serverIssue(err: unknown, text: string): Issue | undefined {
  if (!isTesseraError(err, 'VALIDATION_FAILED')) return undefined;
  const d = err.details ?? {};
  const path: (string | number)[] =
    typeof d.index === 'number'
      ? ['steps', d.index, ...(typeof d.field === 'string' ? [d.field] : [])]
      : typeof d.field === 'string'
        ? [d.field]
        : [];
  return { line: lineOfPath(text, path), path: path.join('.'), message: err.message };
}

function FunctionEditor({ fn }: { fn?: EdgeFunction }) {
  const { api, project, base } = useProjectCtx();
  const queries = useQueryClient();
  const [, navigate] = useLocation();
  const [text, setText] = useState(() => (fn ? definitionText(fn) : NEW_FUNCTION));
  const checked = useMemo(() => checkDefinitionText(text), [text]);
  const save = useAction({
    run: (def: unknown) => (fn ? api.functions.update(fn.id, def as never) : api.functions.create(def as never)),
    done: (saved) => `Function ${saved.name} saved (version ${saved.version})`,
    invalidate: [['functions', project.id]],
    then: (saved) => {
      queries.setQueryData(['function', project.id, saved.id], saved);
      if (!fn) navigate(`${base}/functions/f/${encodeURIComponent(saved.id)}`);
    },
  });
  const fromServer = serverIssue(save.error, text);
  const issues = [...checked.issues, ...(fromServer ? [fromServer] : [])];
  return (
    <Section title={fn ? `Definition of ${fn.name}` : 'New function'}>
      <Form
        onSubmit={() => {
          if (checked.issues.length === 0) save.mutate(checked.value);
        }}
      >
        <JsonEditor
          label="Function definition (JSON)"
          value={text}
          onChange={(v) => {
            setText(v);
            if (save.error) save.reset();
          }}
          issues={issues}
        />
        <p className="muted">
          Steps: <code>{'{name, kind, ...}'}</code> with kind Transform (<code>expression</code>), Database (
          <code>query</code>), HTTP (<code>request</code>), Email (<code>template</code>, <code>to</code>) or Invoke (
          <code>function</code>); <code>when</code> and <code>return</code> on any step. Templates use{' '}
          <code>{'{{ input.body.x }}'}</code>, <code>{'{{ steps.name.body }}'}</code>,{' '}
          <code>{'{{ secrets.NAME }}'}</code>.
        </p>
        <Button type="submit" variant="primary" busy={save.isPending} disabled={checked.issues.length > 0}>
          {fn ? 'Save function' : 'Create function'}
        </Button>
      </Form>
      {save.error && !fromServer ? <ErrorBox error={save.error} title="Could not save the function" /> : null}
      {fromServer && <ErrorBox error={save.error} title="The service refused the definition" />}
    </Section>
  );
}

function FunctionPage({ id }: { id: string }) {
  const { api, project, base } = useProjectCtx();
  const [, navigate] = useLocation();
  const fn = useQuery({ queryKey: ['function', project.id, id], queryFn: () => api.functions.get(id) });
  const remove = useAction({
    run: () => api.functions.remove(id),
    done: 'Function deleted',
    invalidate: [['functions', project.id]],
    then: () => navigate(`${base}/functions`),
  });
  return (
    <QueryView
      query={fn}
      loading="Loading the function"
      failed="Could not load the function"
      back={<BackLink href={`${base}/functions`}>← Functions</BackLink>}
    >
      {(f) => (
        <>
          <div className="page-header">
            <h2>
              {f.name} <Badge>v{f.version}</Badge>
            </h2>
            <div className="actions">
              <Link href={`${base}/functions/executions?function=${encodeURIComponent(f.name)}`}>Executions</Link>
              <ConfirmButton
                variant="danger"
                busy={remove.isPending}
                ask={{
                  title: `Delete ${f.name}?`,
                  body: <p>Hooks, webhooks and cron jobs that run it will fail. Its executions stay readable.</p>,
                  action: 'Delete function',
                  typed: f.name,
                }}
                onConfirm={() => remove.mutate()}
              >
                Delete function
              </ConfirmButton>
            </div>
          </div>
          <ErrorBox error={remove.error} />
          <div className="grid-2">
            <FunctionEditor key={f.version} fn={f} />
            <Invoke fn={f} />
          </div>
        </>
      )}
    </QueryView>
  );
}

function Invoke({ fn }: { fn: EdgeFunction }) {
  const { api, base } = useProjectCtx();
  const input = useJsonText('{\n  "name": "world"\n}', { empty: null });
  const [mode, setMode] = useState<'sync' | 'async' | 'dry'>('sync');
  const run = useMutation({
    mutationFn: (body: unknown) =>
      api.functions.invoke(fn.name, body, { async: mode === 'async', dryRun: mode === 'dry' }),
  });
  const result = run.data as InvokeResult | undefined;
  const failedId = isTesseraError(run.error) ? (run.error.details?.execution_id as string | undefined) : undefined;
  return (
    <Section title="Invoke">
      <Form onSubmit={() => input.withValue((body) => run.mutate(body))}>
        <CodeArea label="Input (JSON, the run's input.body)" rows={6} {...input.field} />
        <SelectField
          label="Mode"
          value={mode}
          onChange={(e) => setMode(e.target.value as typeof mode)}
          options={[
            { value: 'sync', label: 'Synchronous: wait for the result' },
            { value: 'async', label: 'Asynchronous: queue it (202 with an execution id)' },
            { value: 'dry', label: 'Dry run: no side effects, show the trace' },
          ]}
        />
        <Button type="submit" variant="primary" busy={run.isPending}>
          Run {fn.name}
        </Button>
      </Form>
      <ErrorBox error={run.error} title="The run failed" />
      {failedId && (
        <p>
          <Link href={`${base}/functions/executions/${encodeURIComponent(failedId)}`}>Open the execution timeline</Link>
        </p>
      )}
      {result && mode === 'dry' && isDryRun(result.data) ? (
        <DryRun run={result.data} />
      ) : result ? (
        <div className="stack" aria-live="polite">
          <p>
            Status <Badge tone={result.status < 300 ? 'good' : 'bad'}>{result.status}</Badge>
            {result.executionId && (
              <>
                {' '}
                ·{' '}
                <Link href={`${base}/functions/executions/${encodeURIComponent(result.executionId)}`}>
                  Open the execution timeline
                </Link>
              </>
            )}
          </p>
          <h3>Output</h3>
          <pre data-testid="invoke-output">{json(result.data)}</pre>
        </div>
      ) : null}
    </Section>
  );
}

/** What `?dry_run=true` answers: the run's outcome and its step trace (nothing was sent, written or recorded). */
type DryRunResult = {
  dry_run: true;
  status: string;
  output: unknown;
  response_status?: number | null;
  error: unknown;
  trace: ExecutionEvent[];
};
const isDryRun = (v: unknown): v is DryRunResult =>
  typeof v === 'object' &&
  v !== null &&
  (v as DryRunResult).dry_run === true &&
  Array.isArray((v as DryRunResult).trace);

/** A dry run as the execution view shows a run: its outcome, its output, then the timeline of its steps. */
function DryRun({ run }: { run: DryRunResult }) {
  return (
    <div className="stack" aria-live="polite" data-testid="dry-run">
      <p>
        Dry run <StatusBadge status={run.status} responseStatus={run.response_status} />{' '}
        <span className="muted">nothing was sent, written or recorded</span>
      </p>
      {run.error ? <pre className="field-error">{json(run.error)}</pre> : null}
      <h3>Output</h3>
      <pre data-testid="invoke-output">{json(run.output)}</pre>
      <h3>Timeline</h3>
      <StepTimeline steps={run.trace} label="Steps of the dry run" />
    </div>
  );
}

const STATUSES = ['', 'queued', 'running', 'succeeded', 'failed'];
const TRIGGERS = ['', 'invoke', 'webhook', 'cron', 'hook', 'function', 'replay'];

function Executions() {
  const { api, project, base } = useProjectCtx();
  const fns = useFunctions();
  const initial = new URLSearchParams(window.location.search);
  const [filters, setFilters] = useState({
    function: initial.get('function') ?? '',
    status: '',
    trigger: '',
    since: '',
  });
  const pages = useCursors();
  const after = pages.after;
  const list = useQuery({
    queryKey: ['executions', project.id, filters, after],
    queryFn: () =>
      api.functions.executions.list({
        function: filters.function || undefined,
        status: filters.status || undefined,
        trigger: filters.trigger || undefined,
        since: filters.since ? new Date(filters.since).toISOString() : undefined,
        first: 25,
        after,
      }),
    placeholderData: keepPreviousData,
    refetchInterval: 5000,
  });
  const set = (change: Partial<typeof filters>) => {
    setFilters({ ...filters, ...change });
    pages.reset();
  };
  return (
    <ListSection
      title="Executions"
      intro={
        <Form className="row" aria-label="Filter executions" onSubmit={() => undefined}>
          <SelectField
            label="Function"
            value={filters.function}
            onChange={(e) => set({ function: e.target.value })}
            options={[{ value: '', label: 'All functions' }, ...(fns.data ?? []).map((f) => f.name)]}
          />
          <SelectField
            label="Status"
            value={filters.status}
            onChange={(e) => set({ status: e.target.value })}
            options={STATUSES.map((s) => ({ value: s, label: s || 'Any status' }))}
          />
          <SelectField
            label="Trigger"
            value={filters.trigger}
            onChange={(e) => set({ trigger: e.target.value })}
            options={TRIGGERS.map((s) => ({ value: s, label: s || 'Any trigger' }))}
          />
          <TextField
            label="Since"
            type="datetime-local"
            value={filters.since}
            onChange={(e) => set({ since: e.target.value })}
          />
        </Form>
      }
      query={list}
      loading="Loading executions"
      isEmpty={(d) => d.executions.length === 0}
      empty={
        <Empty title="No executions">
          Runs appear here when a function is invoked, or runs for a hook, a webhook or a cron job.
        </Empty>
      }
    >
      {(d) => (
        <>
          <DataTable columns={['Started', 'Function', 'Trigger', 'Status', 'Duration']}>
            {d.executions.map((x) => (
              <tr key={x.id}>
                <td>
                  <Link href={`${base}/functions/executions/${encodeURIComponent(x.id)}`}>{when(x.created_at)}</Link>
                </td>
                <td>
                  {x.function} <span className="muted">v{x.function_version}</span>
                </td>
                <td>{x.trigger}</td>
                <td>
                  <StatusBadge status={x.status} responseStatus={x.response_status} />
                </td>
                <td className="num">
                  {x.duration_ms === null || x.duration_ms === undefined ? '—' : `${x.duration_ms} ms`}
                </td>
              </tr>
            ))}
          </DataTable>
          <CursorPager
            pages={pages}
            next={d.next_cursor}
            label="Pages of executions"
            previousLabel="Newer"
            nextLabel="Older"
          />
        </>
      )}
    </ListSection>
  );
}

/**
 * A run's or a step's status. A run that ended normally but answered an error status (a function's own
 * `{"error", "status": 400}`) is shown by that status, not as succeeded: "client error 400", "server error 502".
 */
export function StatusBadge({ status, responseStatus }: { status: string; responseStatus?: number | null }) {
  if (status === 'succeeded' && typeof responseStatus === 'number' && responseStatus >= 400)
    return <Badge tone="bad">{`${responseStatus >= 500 ? 'server error' : 'client error'} ${responseStatus}`}</Badge>;
  const tone = status === 'succeeded' ? 'good' : status === 'failed' ? 'bad' : 'warn';
  return <Badge tone={tone}>{status}</Badge>;
}

function ExecutionDetail({ id }: { id: string }) {
  const { api, project, base } = useProjectCtx();
  const exec = useQuery({
    queryKey: ['execution', project.id, id],
    queryFn: () => api.functions.executions.get(id),
    refetchInterval: (q) => (q.state.data && ['queued', 'running'].includes(q.state.data.status) ? 1000 : false),
  });
  const events = useQuery({
    queryKey: ['execution-events', project.id, id, exec.data?.status],
    queryFn: () => api.functions.executions.events(id),
    enabled: exec.isSuccess,
  });
  return (
    <QueryView
      query={exec}
      loading="Loading the execution"
      failed="Could not load the execution"
      back={<BackLink href={`${base}/functions/executions`}>← Executions</BackLink>}
    >
      {(x) => (
        <>
          <Section
            title={`Execution of ${x.function}`}
            actions={<StatusBadge status={x.status} responseStatus={x.response_status} />}
          >
            <dl className="props">
              <dt>Execution id</dt>
              <dd>
                <code>{x.id}</code>
              </dd>
              <dt>Function</dt>
              <dd>
                {x.function} (version {x.function_version})
              </dd>
              <dt>Trigger</dt>
              <dd>
                {x.trigger}
                {x.trigger_ref ? ` (${x.trigger_ref})` : ''}
              </dd>
              <dt>Created</dt>
              <dd>{when(x.created_at)}</dd>
              <dt>Finished</dt>
              <dd>{when(x.finished_at)}</dd>
              <dt>Duration</dt>
              <dd>{x.duration_ms ?? '—'} ms</dd>
              {x.response_status ? (
                <>
                  <dt>Response status</dt>
                  <dd>{x.response_status}</dd>
                </>
              ) : null}
            </dl>
            {x.error ? (
              <>
                <h3>Error</h3>
                <pre>{json(x.error)}</pre>
              </>
            ) : null}
            <div className="grid-2">
              <div>
                <h3>Input</h3>
                <pre>{json(x.input)}</pre>
              </div>
              <div>
                <h3>Output</h3>
                <pre>{json(x.output)}</pre>
              </div>
            </div>
          </Section>
          <ListSection
            title="Timeline"
            intro={
              <p className="muted">
                Each step in order, with what it was given and what it gave. Secrets show as {'{{secrets.NAME}}'}.
              </p>
            }
            query={events}
            loading="Loading the steps"
            empty={<Empty title="No steps recorded yet">A queued execution records its steps when it runs.</Empty>}
          >
            {(steps) => <StepTimeline steps={steps} label="Steps" />}
          </ListSection>
          <Suspense fallback={<Loading what="Loading replay" />}>
            <ReplayAndCompare execution={x} steps={[...new Set((events.data ?? []).map((e) => e.step))]} />
          </Suspense>
        </>
      )}
    </QueryView>
  );
}

/** The steps of a run in order (an execution's step log, or a dry run's trace): what each was given and gave. */
export function StepTimeline({ steps, label }: { steps: ExecutionEvent[]; label: string }) {
  return (
    <ol className="timeline" aria-label={label}>
      {steps.map((e) => (
        <li key={e.seq} className={e.type === 'failed' ? 'failed' : undefined}>
          <strong>{e.step}</strong> <Badge>{e.kind}</Badge> <StatusBadge status={e.type} />
          {e.attempt > 1 && <Badge tone="warn">attempt {e.attempt}</Badge>}
          <span className="muted">
            {' '}
            {when(e.at)}
            {e.duration_ms !== null && e.duration_ms !== undefined ? ` · ${e.duration_ms} ms` : ''}
          </span>
          {e.input !== undefined && e.input !== null && (
            <details>
              <summary>Input</summary>
              <pre>{json(e.input)}</pre>
            </details>
          )}
          {e.output !== undefined && e.output !== null && (
            <details open>
              <summary>Output</summary>
              <pre>{json(e.output)}</pre>
            </details>
          )}
          {e.error ? <pre className="field-error">{json(e.error)}</pre> : null}
        </li>
      ))}
    </ol>
  );
}
