// Replay of an execution from a chosen step, and the step-by-step difference between two executions.
//
// A replay runs the function again from one step (default: the step the execution failed at) with the results the
// execution recorded for the steps before it, so their side effects (a payment, a mail, a row) are not repeated. It
// runs the definition the execution ran (every version is kept), or the function's current one on request, with the
// recorded input or a changed `input.body`. Its execution is new (trigger `replay`, `replay_of` naming the original).
// Secrets are never recorded: the run reads the project's secrets as they are now; a recorded result that held one
// holds `{{secrets.NAME}}` (the step log is redacted), and so does the replay's view of it. Replay answers and diffs
// are redacted with the project's current secrets, like every other answer of the engine.
import { AppError, errors } from '../../../platform/errors.ts';
import type { Engine } from './engine.ts';
import { makeInput } from './engine.ts';
import type { Execution, ExecutionEvent, ExecutionService } from './executions.ts';
import type { FunctionService } from './functions.ts';
import { createRedactor } from './redaction.ts';
import type { SecretService } from './secrets.ts';

export type ReplayOptions = {
  /** The step to start from (its name); default: the step the execution failed at, else the first step. */
  fromStep?: string | null;
  /** A changed `input.body`; undefined keeps the recorded one (null is a body too). */
  input?: unknown;
  /** Run the function's current definition instead of the version the execution ran. */
  useCurrentDefinition?: boolean | null;
};

/** What one step did in one execution, from its step log. */
export type StepSummary = {
  kind: string;
  /** succeeded, failed, skipped, reused, or interrupted (started and never ended: a timeout or a lost worker). */
  status: string;
  attempts: number;
  input: unknown;
  output: unknown;
  error: unknown;
  /** Time spent in the step, all attempts together (ms). */
  durationMs: number | null;
};

export type ValueChange = { changed: boolean; from: unknown; to: unknown };
export type DurationChange = { from: number | null; to: number | null; deltaMs: number | null };
export type StepDiff = {
  step: string;
  from: StepSummary | null;
  to: StepSummary | null;
  input: ValueChange;
  output: ValueChange;
  status: ValueChange;
  durationMs: DurationChange;
};
export type ExecutionDiff = {
  from: Execution;
  to: Execution;
  input: ValueChange;
  output: ValueChange;
  status: ValueChange;
  error: ValueChange;
  durationMs: DurationChange;
  steps: StepDiff[];
};

/** JSON with object keys sorted: two values are equal when their canonical texts are. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

const change = (from: unknown, to: unknown): ValueChange => ({
  changed: canonical(from) !== canonical(to),
  from: from ?? null,
  to: to ?? null,
});
const round = (n: number) => Math.round(n * 1000) / 1000;
const duration = (from: number | null | undefined, to: number | null | undefined): DurationChange => ({
  from: from ?? null,
  to: to ?? null,
  deltaMs: from === null || from === undefined || to === null || to === undefined ? null : round(to - from),
});

/** Each step's summary from a step log, in the order the steps first appear. */
export function summarizeSteps(events: ExecutionEvent[]): Map<string, StepSummary> {
  const out = new Map<string, StepSummary>();
  for (const e of events) {
    let s = out.get(e.step);
    if (!s) {
      s = {
        kind: e.kind,
        status: 'interrupted',
        attempts: 0,
        input: null,
        output: null,
        error: null,
        durationMs: null,
      };
      out.set(e.step, s);
    }
    s.attempts = Math.max(s.attempts, e.attempt);
    if (e.durationMs !== null && e.durationMs !== undefined) s.durationMs = round((s.durationMs ?? 0) + e.durationMs);
    switch (e.type) {
      case 'started':
        s.status = 'interrupted';
        s.input = e.input ?? null;
        s.error = null;
        break;
      case 'succeeded':
      case 'reused':
        s.status = e.type;
        s.output = e.output ?? null;
        break;
      case 'skipped':
        s.status = 'skipped';
        break;
      case 'failed':
        s.status = 'failed';
        s.error = e.error ?? null;
        break;
    }
  }
  return out;
}

/** The step names of two logs in one order: the first's, with the second's own steps after their predecessor. */
function mergedOrder(a: string[], b: string[]): string[] {
  const out = [...a];
  let at = -1;
  for (const name of b) {
    const i = out.indexOf(name);
    if (i >= 0) at = i;
    else out.splice(++at, 0, name);
  }
  return out;
}

/** The result a step recorded, as a later step reads it (`steps.<name>`); undefined when it has none to give. */
function recordedResult(s: StepSummary | undefined): unknown {
  if (!s) return undefined;
  if (s.status === 'succeeded' || s.status === 'reused') return s.output ?? { body: null };
  if (s.status === 'skipped') return { body: null, skipped: true };
  return undefined;
}

export type ReplayService = ReturnType<typeof createReplayService>;

/** Creates the replay and diff service. */
export function createReplayService(deps: {
  functions: FunctionService;
  executions: ExecutionService;
  engine: Engine;
  secrets: SecretService;
}) {
  const { functions, executions, engine, secrets } = deps;

  /** Redacts with the project's secrets as they are now (a value may have become a secret after it was recorded). */
  const redacted = async <T>(projectId: string, value: T): Promise<T> =>
    createRedactor(await secrets.reveal(projectId)).value(value) as T;

  return {
    /** Replays an execution of the project; answers the new execution (succeeded or failed: the run's own outcome). */
    async replay(projectId: string, id: string, opts: ReplayOptions): Promise<Execution> {
      const original = await executions.get(projectId, id);
      if (original.status === 'queued' || original.status === 'running') {
        throw errors.conflict(`Execution ${id} is still ${original.status}: replay it once it has finished`, {
          execution_id: id,
          status: original.status,
        });
      }
      const current = original.functionId ? await functions.load(original.functionId) : null;
      if (!current || current.projectId !== projectId)
        throw new AppError(
          'NOT_FOUND',
          `The function ${original.functionName} of execution ${id} was deleted: it cannot be replayed`,
          { resource: 'function', execution_id: id },
        );
      const fn = opts.useCurrentDefinition ? current : await functions.atVersion(current, original.functionVersion);
      if (!fn) {
        throw errors.conflict(
          `Version ${original.functionVersion} of ${current.name} was not kept (it predates version history): replay with use_current_definition to run version ${current.version}`,
          { execution_id: id, function_version: original.functionVersion, current_version: current.version },
        );
      }
      const names = fn.steps.map((s) => s.name);
      const recorded = summarizeSteps(await executions.events(projectId, id));
      let fromStep: string;
      if (opts.fromStep !== undefined && opts.fromStep !== null) {
        if (typeof opts.fromStep !== 'string' || !names.includes(opts.fromStep)) {
          throw errors.validation(
            'from_step',
            `no step named ${JSON.stringify(String(opts.fromStep).slice(0, 64))} in version ${fn.version} of ${fn.name} (steps: ${names.join(', ')})`,
          );
        }
        fromStep = opts.fromStep;
      } else {
        const failedAt = (original.error as { step?: unknown } | null)?.step;
        const firstFailed = names.find((n) => recorded.get(n)?.status === 'failed');
        fromStep = typeof failedAt === 'string' && names.includes(failedAt) ? failedAt : (firstFailed ?? names[0]!);
      }
      const fromIndex = names.indexOf(fromStep);
      const results: Record<string, unknown> = {};
      for (const name of names.slice(0, fromIndex)) {
        const result = recordedResult(recorded.get(name));
        if (result === undefined) {
          throw errors.conflict(
            `Step "${name}" has no recorded result in execution ${id} (it did not complete there): replay from "${name}" or an earlier step`,
            {
              execution_id: id,
              step: name,
            },
          );
        }
        results[name] = result;
      }
      const stored = (original.input ?? {}) as {
        body?: unknown;
        headers?: Record<string, string>;
        method?: string;
        query?: Record<string, unknown>;
      };
      const body = opts.input !== undefined ? opts.input : (stored.body ?? null);
      // The exact bytes of a webhook are not kept: `input.rawBody` is the body's JSON text.
      const input = makeInput({ body, headers: stored.headers, method: stored.method, query: stored.query });
      const outcome = await engine.runSync({
        fn,
        input,
        trigger: 'replay',
        triggerRef: id,
        depth: 0,
        dryRun: false,
        replay: { of: id, fromStep, fromIndex, results },
      });
      return await redacted(projectId, await executions.get(projectId, outcome.executionId!));
    },

    /** What changed from one execution of the project to another, overall and step by step. */
    async diff(projectId: string, id: string, otherId: string): Promise<ExecutionDiff> {
      const [a, b] = await Promise.all([executions.get(projectId, id), executions.get(projectId, otherId)]);
      const [ea, eb] = await Promise.all([executions.events(projectId, id), executions.events(projectId, otherId)]);
      const sa = summarizeSteps(ea);
      const sb = summarizeSteps(eb);
      const steps = mergedOrder([...sa.keys()], [...sb.keys()]).map((step): StepDiff => {
        const from = sa.get(step) ?? null;
        const to = sb.get(step) ?? null;
        return {
          step,
          from,
          to,
          input: change(from?.input, to?.input),
          output: change(from?.output, to?.output),
          status: change(from?.status, to?.status),
          durationMs: duration(from?.durationMs, to?.durationMs),
        };
      });
      return await redacted(projectId, {
        from: a,
        to: b,
        input: change(a.input, b.input),
        output: change(a.output, b.output),
        status: change(a.status, b.status),
        error: change(a.error, b.error),
        durationMs: duration(a.durationMs, b.durationMs),
        steps,
      });
    },
  };
}
