// Replaying an execution from a step, and comparing two executions (an execution and its replay, or any two): the
// run's status, duration, input, output and error side by side, then step by step each step's status, input, output
// and duration in both, with what changed marked (a "changed" label and <mark> on the values that differ).
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import type { Execution, ExecutionDiff } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { useJsonText } from '../lib/json-text.ts';
import { json, when } from '../lib/format.ts';
import {
  BackLink,
  Badge,
  Button,
  Check,
  CodeArea,
  ErrorBox,
  Form,
  RowForm,
  Section,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { QueryView, useAction } from '../ui/data.tsx';

/** Replay and compare, under an execution's timeline. */
export default function ReplayAndCompare({ execution, steps }: { execution: Execution; steps: string[] }) {
  return (
    <div className="grid-2">
      <Replay execution={execution} steps={steps} />
      <Compare execution={execution} />
    </div>
  );
}

function Replay({ execution, steps }: { execution: Execution; steps: string[] }) {
  const { api, base, project } = useProjectCtx();
  const [, navigate] = useLocation();
  const [from, setFrom] = useState('');
  const [changeInput, setChangeInput] = useState(false);
  const [current, setCurrent] = useState(false);
  const body = (execution.input as { body?: unknown } | null)?.body;
  const input = useJsonText(json(body ?? {}), { empty: null });
  const replay = useAction({
    run: (payload: unknown) =>
      api.functions.executions.replay(execution.id, {
        ...(from ? { from_step: from } : {}),
        ...(changeInput ? { input: payload } : {}),
        ...(current ? { use_current_definition: true } : {}),
      }),
    done: (x) => `Replayed: execution ${x.id} ${x.status}`,
    invalidate: [['executions', project.id]],
    then: (x) =>
      navigate(`${base}/functions/executions/${encodeURIComponent(execution.id)}/diff/${encodeURIComponent(x.id)}`),
  });
  const finished = execution.status === 'succeeded' || execution.status === 'failed';
  return (
    <Section title="Replay">
      <p className="muted">
        Runs the execution again from a step: the steps before it are not run again (their recorded results are reused),
        secrets are read as they are now. Then the two runs are compared.
      </p>
      <Form onSubmit={() => (changeInput ? input.withValue((v) => replay.mutate(v)) : replay.mutate(undefined))}>
        <SelectField
          label="From step"
          value={from}
          onChange={(e) => setFrom(e.target.value)}
          options={[
            { value: '', label: execution.status === 'failed' ? 'The step it failed at' : 'The first step' },
            ...steps,
          ]}
        />
        <Check label="Change the input" checked={changeInput} onChange={(e) => setChangeInput(e.target.checked)} />
        {changeInput && <CodeArea label="Input to replay with (JSON, input.body)" rows={5} {...input.field} />}
        <Check
          label="Run the current definition (not the version it ran)"
          checked={current}
          onChange={(e) => setCurrent(e.target.checked)}
        />
        <Button type="submit" variant="primary" busy={replay.isPending} disabled={!finished}>
          Replay
        </Button>
      </Form>
      {!finished && <p className="muted">An execution can be replayed once it has finished.</p>}
      <ErrorBox error={replay.error} title="Could not replay the execution" />
    </Section>
  );
}

function Compare({ execution }: { execution: Execution }) {
  const { base } = useProjectCtx();
  const [, navigate] = useLocation();
  const [other, setOther] = useState('');
  const diff = (a: string, b: string) =>
    `${base}/functions/executions/${encodeURIComponent(a)}/diff/${encodeURIComponent(b)}`;
  return (
    <Section title="Compare">
      {execution.replay_of ? (
        <p>
          <Link href={diff(execution.replay_of, execution.id)}>Compare with the execution it replays</Link>
        </p>
      ) : null}
      <RowForm submit="Compare" onSubmit={() => navigate(diff(execution.id, other.trim()))}>
        <TextField
          label="Another execution's id"
          required
          autoComplete="off"
          value={other}
          onChange={(e) => setOther(e.target.value)}
        />
      </RowForm>
    </Section>
  );
}

type Change = { changed: boolean; from?: unknown; to?: unknown };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One side of a changed value. Two objects are shown key by key, the keys whose values differ marked; anything
 * else is marked whole when it changed.
 */
function Side({ value, other, changed }: { value: unknown; other: unknown; changed: boolean }) {
  if (value === undefined || value === null) return <span className="muted">—</span>;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return <span>{changed ? <mark>{String(value)}</mark> : String(value)}</span>;
  if (changed && isObject(value) && isObject(other)) {
    const keys = Object.keys(value);
    return (
      <pre>
        {'{\n'}
        {keys.map((k, i) => {
          const line = `  ${JSON.stringify(k)}: ${JSON.stringify(value[k])}${i < keys.length - 1 ? ',' : ''}`;
          const differs = JSON.stringify(value[k]) !== JSON.stringify(other[k]);
          return (
            <span key={k}>
              {differs ? <mark>{line}</mark> : line}
              {'\n'}
            </span>
          );
        })}
        {'}'}
      </pre>
    );
  }
  return <pre>{changed ? <mark>{json(value)}</mark> : json(value)}</pre>;
}

/** A row of a comparison: what, both sides, and whether it changed (in words, not only in colour). */
function DiffRow({ what, change }: { what: string; change: Change }) {
  return (
    <tr className={change.changed ? 'changed' : undefined}>
      <th scope="row">{what}</th>
      <td>
        <Side value={change.from} other={change.to} changed={change.changed} />
      </td>
      <td>
        <Side value={change.to} other={change.from} changed={change.changed} />
      </td>
      <td>{change.changed ? <Badge tone="warn">changed</Badge> : <span className="muted">same</span>}</td>
    </tr>
  );
}

type RunSide = ExecutionDiff['from'];

function RunHead({ side, label }: { side: RunSide; label: string }) {
  const { base } = useProjectCtx();
  return (
    <div>
      <h3>{label}</h3>
      <p>
        <Link href={`${base}/functions/executions/${encodeURIComponent(side.id)}`}>
          <code>{side.id}</code>
        </Link>
      </p>
      <p className="muted">
        {side.function} v{side.function_version} · {side.trigger}
        {side.replay_from_step ? ` from ${side.replay_from_step}` : ''} · {when(side.created_at)}
      </p>
    </div>
  );
}

const ms = (v: number | null | undefined) => (v === null || v === undefined ? null : `${v} ms`);

/** The comparison of execution `id` (from) with `other` (to). */
export function ExecutionDiffView({ id, other }: { id: string; other: string }) {
  const { api, base, project } = useProjectCtx();
  const diff = useQuery({
    queryKey: ['execution-diff', project.id, id, other],
    queryFn: () => api.functions.executions.diff(id, other),
  });
  return (
    <QueryView
      query={diff}
      loading="Comparing the executions"
      failed="Could not compare the executions"
      back={<BackLink href={`${base}/functions/executions/${encodeURIComponent(id)}`}>← Execution</BackLink>}
    >
      {(d) => {
        const changedSteps = d.steps.filter(
          (s) => s.input.changed || s.output.changed || s.status.changed || !s.from || !s.to,
        ).length;
        return (
          <>
            <Section title="Compare executions">
              <div className="grid-2">
                <RunHead side={d.from} label="From" />
                <RunHead side={d.to} label="To" />
              </div>
              <p>{changedSteps === 0 ? 'No step changed.' : `${changedSteps} of ${d.steps.length} steps changed.`}</p>
              <div className="table-wrap">
                <table aria-label="The runs compared" className="diff">
                  <thead>
                    <tr>
                      <th scope="col">What</th>
                      <th scope="col">From</th>
                      <th scope="col">To</th>
                      <th scope="col">Changed</th>
                    </tr>
                  </thead>
                  <tbody>
                    <DiffRow what="Status" change={d.status} />
                    <DiffRow
                      what="Duration"
                      change={{
                        changed: false,
                        from: ms(d.duration_ms.from),
                        to:
                          d.duration_ms.delta_ms === null || d.duration_ms.delta_ms === undefined
                            ? ms(d.duration_ms.to)
                            : `${ms(d.duration_ms.to)} (${d.duration_ms.delta_ms >= 0 ? '+' : ''}${d.duration_ms.delta_ms} ms)`,
                      }}
                    />
                    <DiffRow what="Input" change={d.input} />
                    <DiffRow what="Output" change={d.output} />
                    <DiffRow what="Error" change={d.error} />
                  </tbody>
                </table>
              </div>
            </Section>
            <Section title="Step by step">
              {d.steps.map((s) => {
                const changed = s.input.changed || s.output.changed || s.status.changed || !s.from || !s.to;
                return (
                  <div className="card" key={s.step}>
                    <div className="card-head">
                      <h3>{s.step}</h3>
                      {changed ? <Badge tone="warn">changed</Badge> : <Badge>same</Badge>}
                    </div>
                    <div className="table-wrap">
                      <table aria-label={`Step ${s.step} compared`} className="diff">
                        <thead>
                          <tr>
                            <th scope="col">What</th>
                            <th scope="col">From</th>
                            <th scope="col">To</th>
                            <th scope="col">Changed</th>
                          </tr>
                        </thead>
                        <tbody>
                          <DiffRow what="Status" change={s.status} />
                          <DiffRow what="Input" change={s.input} />
                          <DiffRow what="Output" change={s.output} />
                          <DiffRow
                            what="Duration"
                            change={{
                              changed: false,
                              from: ms(s.duration_ms.from),
                              to: ms(s.duration_ms.to),
                            }}
                          />
                        </tbody>
                      </table>
                    </div>
                  </div>
                );
              })}
            </Section>
          </>
        );
      }}
    </QueryView>
  );
}
