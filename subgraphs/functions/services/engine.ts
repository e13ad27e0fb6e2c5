// The step engine: runs a function's steps in order over `{input, steps, secrets, env}`, with `when`,
// `return`, per-step retries with backoff and the function's timeout; records the execution and its
// step log. Knows the step kinds only through their contract (steps/types.ts).
import crypto from 'node:crypto';
import { type ErrorCode, AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { RouterClient } from '../../../platform/subgraph.ts';
import type { Scheduler } from '../../../platform/scheduler.ts';
import type { CompiledStep } from './definitions.ts';
import { createBatcher } from './batching.ts';
import type { Claimed, ExecutionEvent, ExecutionService, Trigger } from './executions.ts';
import type { EdgeFunction, FunctionService } from './functions.ts';
import type { SecretService } from './secrets.ts';
import { StepFailure, type StepDeps, type StepRunContext } from './steps/index.ts';
import { TemplateError, templateScope, truthy } from './templates.ts';
import { createRedactor } from './redaction.ts';
import { functionRuns } from '../../../platform/metrics.ts';
import { backoffMs } from '../../../platform/backoff.ts';
import type { RunLimits, RunSlot } from './run-limits.ts';
import type { BackgroundLane } from './background-lane.ts';

export const EXECUTION_JOB = 'functions.execution.run';
/**
 * The data of an execution job: the executions it runs (`executionId`: one, as queued by earlier versions).
 * `deferrals`: how often they already waited for a free run slot of their project (the wait grows with it).
 */
export type QueuedJob = { executionIds?: string[]; executionId?: string; deferrals?: number };
/** A queued run that finds no free run slot waits 250 ms doubling to 15 s (±50%), then tries again. */
const DEFER_BASE_MS = 250;
const DEFER_MAX_MS = 15_000;
/**
 * How long a background run waits for its turn while the process is busy with requests before it is put back in line
 * (a queued execution is claimed meanwhile: the wait stays far below the lost-execution sweep's grace).
 */
const TURN_WAIT_MS = 1000;
/** A run slot outlives a process that died mid-run by this much past the function's timeout. */
const SLOT_LEASE_GRACE_MS = 60_000;
/** Most executions queued under one scheduler job, and most JSON of their inputs in one insert. */
const ENQUEUE_BATCH_MAX = 25;
const ENQUEUE_BATCH_MAX_BYTES = 4 * 1024 * 1024;
/** How deep functions may invoke functions (sync or async), so a chain cannot run forever. */
export const MAX_DEPTH = 8;
/** A step's retries wait 200 ms doubling to 5 s, ±25% (within the function's timeout). */
const BACKOFF_BASE_MS = 200;
const BACKOFF_MAX_MS = 5000;
/** A job that finds some of its executions not yet released claims them again after 10, 20, 40, ... ms, up to ~300 ms. */
const RELEASE_RETRY_MS = 10;
const RELEASE_WAIT_MS = 160;

/** What a function sees as `input`: always `{body, headers, method, query, rawBody}` (header names lower case). */
export type FunctionInputValue = {
  body: unknown;
  headers: Record<string, string>;
  method: string;
  query: Record<string, unknown>;
  rawBody: string;
};

/** Builds a function's input from a trigger's payload. */
const DEADLINE_SLACK_MS = 25;

export function makeInput(p: {
  body?: unknown;
  headers?: Record<string, string>;
  method?: string;
  query?: Record<string, unknown>;
  rawBody?: string;
}): FunctionInputValue {
  const body = p.body === undefined ? null : (JSON.parse(JSON.stringify(p.body)) as unknown);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.headers ?? {})) headers[k.toLowerCase()] = String(v);
  return {
    body,
    headers,
    method: p.method ?? 'POST',
    query: JSON.parse(JSON.stringify(p.query ?? {})) as Record<string, unknown>,
    rawBody: p.rawBody ?? JSON.stringify(body),
  };
}

/** `{"error": "...", "status": 4xx|5xx}` as a function's output chooses the HTTP status of the answer. */
export function responseStatusOf(output: unknown): number {
  if (output && typeof output === 'object' && !Array.isArray(output)) {
    const o = output as { error?: unknown; status?: unknown };
    if (
      typeof o.error === 'string' &&
      typeof o.status === 'number' &&
      Number.isInteger(o.status) &&
      o.status >= 400 &&
      o.status <= 599
    )
      return o.status;
  }
  return 200;
}

/**
 * The error an anonymous caller (a public webhook) gets for a failed run: nothing of what went wrong inside, only
 * the execution id the project can look up.
 */
export function publicFailureError(o: RunOutcome): AppError {
  const what = o.timedOut ? 'The function ran past its timeout' : 'The function failed';
  return new AppError(
    o.timedOut ? 'FUNCTION_TIMEOUT' : 'FUNCTION_FAILED',
    `${what}; its execution ${o.executionId ?? ''} says why`,
    { execution_id: o.executionId },
  );
}

/** The error a caller gets for a failed run: FUNCTION_TIMEOUT (504) or FUNCTION_FAILED (502), naming the execution and step. */
export function failureError(o: RunOutcome): AppError {
  const details = { execution_id: o.executionId, step: o.error?.step ?? null, reason: o.error?.code ?? null };
  // A run that failed because of how the project is set up (no SMTP settings for an Email step) answers that error, a 4xx.
  return new AppError(
    o.error?.answer ?? (o.timedOut ? 'FUNCTION_TIMEOUT' : 'FUNCTION_FAILED'),
    o.error?.message ?? 'The function failed',
    details,
  );
}

export type RunRequest = {
  fn: EdgeFunction;
  input: FunctionInputValue;
  trigger: Trigger;
  triggerRef?: string | null;
  parentId?: string | null;
  /** The run whose tree this one belongs to (its async invokes count there); null or absent: it is a root. */
  rootId?: string | null;
  depth: number;
  dryRun: boolean;
  /** A run slot the caller took for this run (and gives back); absent: the run takes its own. */
  slot?: RunSlot;
  /** Takes no run slot: a synchronous Invoke step (its parent's slot covers it), a before-hook (part of a data API write). */
  inRun?: boolean;
  /** Caps the timeout (a synchronous Invoke step inside another function's time). */
  maxTimeoutMs?: number;
  /** The project's sealed secrets, read along with the function (`sealedSecretsOf`); read here when absent. */
  sealedSecrets?: Record<string, string>;
  /** Already counted against the plan's runs (a queued run was counted when it was queued). */
  counted?: boolean;
  /**
   * A replay (services/replay.ts): the steps before `fromIndex` are not run; their recorded results (`results`, by
   * step name) are taken as they are, logged as `reused`. `of` is the execution replayed.
   */
  replay?: { of: string; fromStep: string; fromIndex: number; results: Record<string, unknown> };
};

export type RunOutcome = {
  executionId: string | null;
  status: 'succeeded' | 'failed';
  /** The output with every secret redacted (services/redaction.ts): what may leave the engine. */
  output: unknown;
  /** The output as the steps made it, for the platform's own use only (a before-hook's row); never answered or recorded. */
  rawOutput: unknown;
  /** The run's input as its record may show it (secrets redacted: a parent function may pass one in). */
  recordedInput: unknown;
  responseStatus: number;
  error: { code: string; message: string; step?: string; answer?: ErrorCode } | null;
  events: ExecutionEvent[];
  durationMs: number;
  timedOut: boolean;
};

export type Engine = ReturnType<typeof createEngine>;

/** A recorded execution that failed, as `onFailed` hears of it. */
export type FailedExecution = {
  id: string;
  projectId: string;
  functionName: string;
  functionVersion: number;
  trigger: Trigger;
  triggerRef: string | null;
  error: RunOutcome['error'];
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
};

class Timeout extends Error {}
/** The abort reason of a run that ended (cancels what its steps left running). */
const FINISHED = new Error('finished');

/**
 * Most JSON text one value of a run may take (a step's resolved field, a step's result), and all of a run's values
 * together. A definition could otherwise grow a value step after step (each doubling the last) until the process ran
 * out of memory, and its step log past what one row can hold; past either limit the step fails with VALUE_TOO_LARGE.
 */
export const MAX_VALUE_CHARS = 8 * 1024 * 1024;
export const MAX_RUN_VALUE_CHARS = 32 * 1024 * 1024;

/** What is left of a run's value budget (MAX_RUN_VALUE_CHARS). */
type ValueBudget = { left: number };
/** A run to queue: its execution row (JSON), its project, and whether the queue bound applies (async invokes). */
type QueueItem = { id: string; row: string; projectId: string; bounded: boolean };

/**
 * A JSON copy (a step cannot change what another sees; only JSON is recorded), charged to the run's budget. Strings,
 * booleans and finite numbers are their own copy.
 */
function clone(v: unknown, budget: ValueBudget, what: string): unknown {
  if (v === undefined) return null;
  if (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v;
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  if (text === undefined) return null;
  if (text.length > MAX_VALUE_CHARS)
    throw new StepFailure(
      'VALUE_TOO_LARGE',
      `${what} is ${text.length} characters of JSON; a value may have at most ${MAX_VALUE_CHARS}`,
    );
  budget.left -= text.length;
  if (budget.left < 0)
    throw new StepFailure(
      'VALUE_TOO_LARGE',
      `${what} takes the run past ${MAX_RUN_VALUE_CHARS} characters of JSON across its steps' inputs and results`,
    );
  return typeof v === 'string' ? v : (JSON.parse(text) as unknown);
}

/** Creates the engine. `http` and `email` are the outside effects; the engine supplies `invoke` and `router`. */
export function createEngine(deps: {
  functions: FunctionService;
  secrets: SecretService;
  executions: ExecutionService;
  scheduler: Scheduler;
  router: RouterClient;
  http: StepDeps['http'];
  email: StepDeps['email'];
  logger: Logger;
  /** The plan's function runs per month (services/run-quota.ts): every run counts, a dry run too; RATE_LIMITED past it. */
  runQuota?: {
    take: (projectId: string) => void | Promise<void>;
    suspension?: (projectId: string) => Promise<'project' | 'tenant' | null>;
  };
  /** Told of every recorded execution that failed, once it is recorded (outbound `execution.failed` events). */
  onFailed?: (e: FailedExecution) => Promise<unknown>;
  /** The plan's concurrent runs and async fan-out (services/run-limits.ts); absent: neither is limited. */
  runLimits?: Pick<RunLimits, 'takeSlot' | 'slotRefusal' | 'takeAsyncInvoke' | 'queueRefusals'>;
  /** Where background runs take their turn (services/background-lane.ts); absent: they go at once. */
  lane?: BackgroundLane;
}) {
  const { functions, secrets, executions, scheduler, logger } = deps;

  const leaseOf = (fn: EdgeFunction) => fn.timeoutMs + SLOT_LEASE_GRACE_MS;

  /** A background run's turn (null: none came in time; it waits in line); without a lane, at once. */
  const noTurn = () => {};
  const turn = async (projectId: string): Promise<(() => void) | null> =>
    deps.lane ? await deps.lane.turn(projectId, TURN_WAIT_MS) : noTurn;

  /** A run slot of the function's project, or null when all are taken (no limit: a slot that costs nothing). */
  const takeSlot = async (fn: EdgeFunction): Promise<RunSlot | null> =>
    deps.runLimits ? await deps.runLimits.takeSlot(fn.projectId, leaseOf(fn)) : { release: async () => {} };

  /**
   * Runs the steps; pure of persistence (the callers record). Takes a run slot first unless the caller holds one or
   * the run executes inside another: none free, a synchronous caller is answered 429 RATE_LIMITED (Retry-After).
   */
  async function execute(req: RunRequest, executionId: string | null): Promise<RunOutcome> {
    if (req.slot || req.inRun || !deps.runLimits) return await executeSteps(req, executionId);
    const slot = await takeSlot(req.fn);
    if (!slot) throw await deps.runLimits.slotRefusal(req.fn.projectId);
    try {
      return await executeSteps(req, executionId);
    } finally {
      await slot.release().catch((err: unknown) => {
        // Its lease ends it anyway.
        logger.warn({ err: (err as Error).message }, 'run slot not given back; it frees when its lease ends');
      });
    }
  }

  async function executeSteps(req: RunRequest, executionId: string | null): Promise<RunOutcome> {
    if (!req.counted) await deps.runQuota?.take(req.fn.projectId);
    const started = performance.now();
    const timeoutMs = Math.max(1, Math.min(req.fn.timeoutMs, req.maxTimeoutMs ?? Infinity));
    const deadline = Date.now() + timeoutMs;
    const abort = new AbortController();
    // Only a timeout rejects `expired` (an Error is made then, not on every run).
    let expire: (err: Timeout) => void = () => {};
    const expired = new Promise<never>((_, reject) => (expire = reject));
    expired.catch(() => {});
    const timer = setTimeout(() => {
      const err = new Timeout();
      expire(err);
      abort.abort(err);
    }, timeoutMs);
    const events: ExecutionEvent[] = [];
    let seq = 0;
    const secretValues = req.sealedSecrets ? secrets.open(req.sealedSecrets) : await secrets.reveal(req.fn.projectId);
    // Whatever leaves the run (step log, output, error) has its secrets replaced by `{{secrets.NAME}}`.
    const redactor = createRedactor(secretValues);
    const redact = redactor.value;
    const log = (e: Omit<ExecutionEvent, 'seq' | 'at'>) =>
      events.push({
        ...e,
        seq: ++seq,
        at: new Date(),
        input: redact(e.input),
        output: redact(e.output),
        error: redact(e.error),
        durationMs: e.durationMs == null ? null : Math.round(e.durationMs * 1000) / 1000,
      });
    const env = {
      project_id: req.fn.projectId,
      function: req.fn.name,
      function_version: req.fn.version,
      execution_id: executionId,
      trigger: req.trigger,
      dry_run: req.dryRun,
    };
    const steps: Record<string, unknown> = {};
    const budget: ValueBudget = { left: MAX_RUN_VALUE_CHARS };
    let stepLogger: Logger | undefined;
    const ctx: StepRunContext = {
      projectId: req.fn.projectId,
      executionId,
      dryRun: req.dryRun,
      signal: abort.signal,
      remainingMs: () => Math.max(0, deadline - Date.now()),
      // `depth` travels with the function's own calls: writes it makes fire database hooks one level deeper.
      requestContext: {
        requestId: `execution-${executionId ?? crypto.randomUUID()}`,
        principal: { kind: 'project', projectId: req.fn.projectId, tenantId: req.fn.tenantId },
        depth: req.depth,
      },
      // Made on first use: most runs never log.
      get logger() {
        return (stepLogger ??= logger.child({ function: req.fn.name, execution: executionId }));
      },
      deps: {
        router: deps.router,
        http: deps.http,
        email: deps.email,
        invoke: (c, call) => invokeFromStep(req, c, call),
      },
    };
    let output: unknown = null;
    let failure: RunOutcome['error'] = null;
    let timedOut = false;
    let compiled: CompiledStep[];
    try {
      compiled = functions.compiled(req.fn);
    } catch (err) {
      compiled = [];
      failure = { code: 'INVALID_DEFINITION', message: (err as Error).message };
    }
    // One scope for the whole run: `steps` fills in as steps finish, and templates cannot assign to anything.
    const scope = templateScope({ input: req.input, steps, secrets: secretValues, env });
    // A replay starts at its step, with the earlier steps' recorded results (their side effects are not repeated).
    const first = req.replay && !failure ? Math.min(req.replay.fromIndex, compiled.length) : 0;
    for (const step of compiled.slice(0, first)) {
      const result = req.replay!.results[step.def.name] as { body?: unknown; skipped?: boolean } | undefined;
      log({
        step: step.def.name,
        kind: step.def.kind,
        type: 'reused',
        attempt: 1,
        output: result ?? null,
        durationMs: 0,
      });
      steps[step.def.name] = result ?? { body: null };
      if (result && !result.skipped) output = result.body ?? null;
    }
    try {
      for (const step of compiled.slice(first)) {
        const { name, kind } = step.def;
        const resolved: Record<string, unknown> = {};
        try {
          if (step.when && !truthy(step.when.render(scope))) {
            log({ step: name, kind, type: 'skipped', attempt: 1, durationMs: 0 });
            steps[name] = { body: null, skipped: true };
            continue;
          }
          for (const [field, template] of Object.entries(step.prepared.templates))
            resolved[field] = clone(template.render(scope), budget, `the resolved "${field}"`);
        } catch (err) {
          const message = err instanceof TemplateError ? `${err.path}: ${err.message}` : (err as Error).message;
          // A value past its limit, or a string the runtime cannot make (RangeError), is the definition's doing too.
          const code = err instanceof StepFailure ? err.code : 'TEMPLATE_FAILED';
          log({
            step: name,
            kind,
            type: 'failed',
            attempt: 1,
            input: resolved,
            error: { code, message },
            durationMs: 0,
          });
          failure = { code, message: `step "${name}": ${message}`, step: name };
          break;
        }
        let attempt = 0;
        for (;;) {
          attempt++;
          const t0 = performance.now();
          log({ step: name, kind, type: 'started', attempt, input: resolved });
          try {
            const result = clone(
              await Promise.race([step.prepared.run(resolved, ctx), expired]),
              budget,
              'the result',
            ) as { body: unknown };
            const durationMs = performance.now() - t0;
            log({ step: name, kind, type: 'succeeded', attempt, output: result, durationMs });
            steps[name] = result;
            output = result.body ?? null;
            break;
          } catch (err) {
            const durationMs = performance.now() - t0;
            // Past the deadline the step's own abort error is the timeout too; so is a step whose own
            // timer (capped to the time left) fired a moment before the function's.
            if (
              err instanceof Timeout ||
              abort.signal.reason instanceof Timeout ||
              Date.now() >= deadline - DEADLINE_SLACK_MS
            )
              throw new Timeout();
            const f = err instanceof StepFailure ? err : new StepFailure('STEP_FAILED', (err as Error).message);
            log({
              step: name,
              kind,
              type: 'failed',
              attempt,
              error: { code: f.code, message: f.message, retryable: f.retryable },
              durationMs,
            });
            const wait = backoffMs(attempt, { baseMs: BACKOFF_BASE_MS, maxMs: BACKOFF_MAX_MS, jitter: 0.25 });
            if (f.retryable && attempt <= step.retries && Date.now() + wait < deadline) {
              await Promise.race([new Promise((r) => setTimeout(r, wait)), expired]);
              continue;
            }
            failure = {
              code: f.code,
              message: `step "${name}": ${f.message}`,
              step: name,
              ...(f.answer ? { answer: f.answer } : {}),
            };
            break;
          }
        }
        if (failure || step.returns) break;
      }
    } catch (err) {
      if (!(err instanceof Timeout)) throw new Error(redactor.text((err as Error).message ?? String(err)));
      timedOut = true;
      const running = events[events.length - 1];
      failure = {
        code: 'FUNCTION_TIMEOUT',
        message: `the function ran past its timeout of ${timeoutMs} ms`,
        ...(running ? { step: running.step } : {}),
      };
      if (running?.type === 'started')
        log({
          step: running.step,
          kind: running.kind,
          type: 'failed',
          attempt: running.attempt,
          error: { code: 'FUNCTION_TIMEOUT', message: failure.message },
          durationMs: null,
        });
    } finally {
      clearTimeout(timer);
      if (!abort.signal.aborted) abort.abort(FINISHED);
    }
    functionRuns.inc({ outcome: timedOut ? 'timeout' : failure ? 'failed' : 'succeeded' });
    const shown = failure ? null : redact(output);
    return {
      executionId,
      status: failure ? 'failed' : 'succeeded',
      output: shown,
      rawOutput: failure ? null : output,
      recordedInput: redact({ ...req.input, rawBody: undefined }),
      responseStatus: failure ? 0 : responseStatusOf(shown),
      error: failure && { ...failure, message: redactor.text(failure.message) },
      events,
      durationMs: performance.now() - started,
      timedOut,
    };
  }

  /** Tells `onFailed` of a recorded failed execution; its own failure is logged, never the run's. */
  const reportFailure = async (
    req: Pick<RunRequest, 'fn' | 'trigger' | 'triggerRef'>,
    id: string,
    o: RunOutcome,
    f: { startedAt: Date; finishedAt: Date; durationMs: number },
  ) => {
    if (o.status !== 'failed' || !deps.onFailed) return;
    try {
      await deps.onFailed({
        id,
        projectId: req.fn.projectId,
        functionName: req.fn.name,
        functionVersion: req.fn.version,
        trigger: req.trigger,
        triggerRef: req.triggerRef ?? null,
        error: o.error,
        startedAt: f.startedAt,
        finishedAt: f.finishedAt,
        durationMs: f.durationMs,
      });
    } catch (err) {
      logger.warn({ execution: id, err: (err as Error).message }, 'the execution.failed event could not be queued');
    }
  };

  const finished = (o: RunOutcome, startedAt: Date, version: number) => ({
    status: o.status,
    output: o.output,
    error: o.error,
    responseStatus: o.status === 'succeeded' ? o.responseStatus : null,
    startedAt,
    finishedAt: new Date(),
    durationMs: Math.round(o.durationMs * 1000) / 1000,
    functionVersion: version,
    events: o.events,
  });

  /** What an execution row says of the run it records: its function, trigger and place in a chain of invokes. */
  const executionOf = (id: string, req: Omit<RunRequest, 'dryRun'>) => ({
    id,
    projectId: req.fn.projectId,
    functionId: req.fn.id,
    functionName: req.fn.name,
    functionVersion: req.fn.version,
    trigger: req.trigger,
    triggerRef: req.triggerRef,
    parentId: req.parentId,
    rootId: req.rootId ?? null,
    depth: req.depth,
  });

  /** Runs now and records the execution (dry runs are not recorded: they return their trace). */
  async function runSync(req: RunRequest): Promise<RunOutcome> {
    if (req.dryRun) return await execute(req, null);
    const id = crypto.randomUUID();
    const startedAt = new Date();
    const outcome = await execute(req, id);
    const done = finished(outcome, startedAt, req.fn.version);
    await executions.record(
      {
        ...executionOf(id, req),
        input: outcome.recordedInput,
        replayOf: req.replay?.of ?? null,
        replayFromStep: req.replay?.fromStep ?? null,
      },
      done,
    );
    await reportFailure(req, id, outcome, done);
    return outcome;
  }

  /**
   * Queued runs: concurrent enqueues share one insert of their execution rows and one scheduler job naming
   * them all (a lone enqueue pays no wait). Each caller gets its answer once its row and job are saved.
   */
  // An invoke answered 503 has not run and will not run: the rows are written `held` (no job claims them), then
  // their job, then they are released. Queuing that fails at any step leaves them held (marked failed at once, or
  // by the sweep when the database is away), and a job that finds its executions still held waits for the release.
  // Async invokes (`bounded`) are refused past the plan's max_queued_function_runs first (one count for the batch),
  // then each queued run is counted against the month's runs: a refused one is neither counted nor saved. Answers
  // each item's refusal (undefined: queued).
  const enqueueBatch = createBatcher<QueueItem, AppError | undefined>(
    async (batch) => {
      const refusals: (AppError | undefined)[] = batch.map(() => undefined);
      const bounded = batch.flatMap((item, i) => (item.bounded && deps.runLimits ? [i] : []));
      if (bounded.length > 0) {
        const refused = await deps.runLimits!.queueRefusals(bounded.map((i) => batch[i]!.projectId));
        bounded.forEach((i, k) => (refusals[i] = refused[k]));
      }
      for (const [i, item] of batch.entries()) {
        if (refusals[i]) continue;
        try {
          await deps.runQuota?.take(item.projectId);
        } catch (err) {
          refusals[i] =
            err instanceof AppError
              ? err
              : errors.unavailable(`the run could not be counted: ${(err as Error).message}`);
        }
      }
      const items = batch.filter((_, i) => !refusals[i]);
      if (items.length === 0) return refusals;
      const executionIds = items.map((i) => i.id);
      const unavailable = (err: unknown) =>
        err instanceof AppError
          ? err
          : errors.unavailable(`the run could not be queued (it will not run): ${(err as Error).message}`);
      try {
        await executions.enqueueMany(items.map((i) => i.row));
      } catch (err) {
        throw unavailable(err);
      }
      try {
        await scheduler.enqueue(EXECUTION_JOB, { executionIds });
        await executions.release(executionIds);
      } catch (err) {
        await executions
          .fail(executionIds, { code: 'SERVICE_UNAVAILABLE', message: 'the run could not be queued; it was not run' })
          .catch(() => {});
        throw unavailable(err);
      }
      return refusals;
    },
    {
      max: ENQUEUE_BATCH_MAX,
      inFlight: 1,
      retryAlone: false,
      weigh: (i) => i.row.length,
      maxWeight: ENQUEUE_BATCH_MAX_BYTES,
    },
  );

  /**
   * Queues a run through the scheduler; answers its execution id at once. Counted against the month's runs (and
   * refused past the plan) when it is queued, not again when it runs. `bounded`: an async invoke, refused 429 past the
   * plan's max_queued_function_runs (a cron tick or an after-hook waiting for a run slot is not).
   */
  async function enqueue(req: Omit<RunRequest, 'dryRun'>, bounded = false): Promise<string> {
    const id = crypto.randomUUID();
    const row = executions.queuedRow({
      ...executionOf(id, req),
      input: { ...req.input, rawBody: undefined },
    });
    const refusal = await enqueueBatch({ id, row, projectId: req.fn.projectId, bounded });
    if (refusal) throw refusal;
    return id;
  }

  /** The job: runs the queued executions it names, side by side (an execution already taken is left alone). */
  async function runQueued(data: QueuedJob): Promise<void> {
    const ids = data.executionIds ?? (data.executionId ? [data.executionId] : []);
    const runs: Promise<true | string>[] = [];
    let left = ids;
    // A job may be picked up before its enqueue released its executions (still held: the release is the enqueue's
    // last statement, and the job's notification can beat it). They are claimed again shortly, a few times within
    // RELEASE_WAIT_MS, while the ones already claimed run; still unreleased after that, the job fails and Agenda
    // retries it later (its backoff starts at a second). Held for good (the enqueue failed after saving this job),
    // they are marked failed by the sweep and never run. A claimed execution is this job's to run: nobody else will.
    for (let wait = RELEASE_RETRY_MS; ; wait *= 2) {
      const claimed = await executions.claimMany(left);
      runs.push(...claimed.map((c) => runClaimed(c)));
      if (claimed.length === left.length) break;
      const taken = new Set(claimed.map((c) => c.execution.id));
      left = left.filter((id) => !taken.has(id));
      const unclaimed = await executions.countUnclaimed(left);
      if (unclaimed === 0) break;
      if (wait > RELEASE_WAIT_MS) {
        await Promise.allSettled(runs);
        throw new Error(`${unclaimed} execution(s) not released yet by their enqueue; retrying`);
      }
      await new Promise((r) => setTimeout(r, wait));
    }
    const results = await Promise.allSettled(runs);
    // Runs whose project had no free run slot wait in line: back to queued, and a job of their own a little later.
    const waiting = results.flatMap((r) => (r.status === 'fulfilled' && r.value !== true ? [r.value] : []));
    if (waiting.length > 0) await defer(waiting, (data.deferrals ?? 0) + 1);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Puts claimed executions back in line and queues their job after a wait that grows with `deferrals`. */
  async function defer(ids: string[], deferrals: number): Promise<void> {
    await executions.unclaim(ids);
    const wait = backoffMs(deferrals, { baseMs: DEFER_BASE_MS, maxMs: DEFER_MAX_MS, jitter: 0.5 });
    await scheduler.agenda.schedule(new Date(Date.now() + wait), EXECUTION_JOB, {
      executionIds: ids,
      deferrals,
    } satisfies QueuedJob);
  }

  /**
   * Runs one claimed execution and records its end: true; or, when its project has no free run slot, answers its
   * id without running it (the caller puts it back in line).
   */
  async function runClaimed({ execution: e, fn, sealedSecrets }: Claimed): Promise<true | string> {
    if (!fn) {
      await executions.fail([e.id], { code: 'NOT_FOUND', message: `function ${e.functionName} no longer exists` });
      return true;
    }
    // A run queued before the operator suspended its project is refused when it comes up, and recorded so (not retried).
    const suspended = await deps.runQuota?.suspension?.(fn.projectId);
    if (suspended) {
      const refusal = errors.projectSuspended(fn.projectId, suspended);
      await executions.fail([e.id], { code: refusal.code, message: refusal.message });
      return true;
    }
    const end = await turn(fn.projectId);
    if (!end) return e.id;
    try {
      const slot = await takeSlot(fn);
      if (!slot) return e.id;
      try {
        await runClaimedIn(slot, { execution: e, fn, sealedSecrets });
      } finally {
        await slot.release().catch(() => {});
      }
      return true;
    } finally {
      end();
    }
  }

  async function runClaimedIn(slot: RunSlot, { execution: e, fn, sealedSecrets }: Claimed & { fn: EdgeFunction }) {
    const stored = (e.input ?? {}) as Partial<FunctionInputValue>;
    const input = makeInput({ ...stored, rawBody: JSON.stringify(stored.body ?? null) });
    const startedAt = e.startedAt ?? new Date();
    const outcome = await execute(
      {
        fn,
        input,
        trigger: e.trigger,
        triggerRef: e.triggerRef,
        parentId: e.parentId,
        rootId: e.rootId,
        depth: e.depth,
        dryRun: false,
        sealedSecrets,
        counted: true,
        slot,
      },
      e.id,
    );
    const done = finished(outcome, startedAt, fn.version);
    await executions.finish(e.id, done);
    await reportFailure({ fn, trigger: e.trigger, triggerRef: e.triggerRef }, e.id, outcome, done);
  }

  /**
   * Queues a job again for executions still `queued` long after they were released: their job is gone (its retries
   * spent, or lost with a worker in a way its lock did not recover). A claim takes an execution once, so a job that
   * does turn up later finds nothing left to run. Answers how many were queued again.
   */
  async function requeueStale(olderThanMs: number): Promise<number> {
    const ids = await executions.staleQueued(olderThanMs, 500);
    for (let i = 0; i < ids.length; i += 100)
      await scheduler.enqueue(EXECUTION_JOB, { executionIds: ids.slice(i, i + 100) });
    return ids.length;
  }

  /** The Invoke step's way to another function of the same project. */
  async function invokeFromStep(
    parent: RunRequest,
    ctx: StepRunContext,
    call: { function: string; input: unknown; async: boolean },
  ): Promise<{ body: unknown } & Record<string, unknown>> {
    if (parent.depth + 1 > MAX_DEPTH)
      throw new StepFailure('INVOKE_TOO_DEEP', `functions may invoke functions at most ${MAX_DEPTH} levels deep`);
    const fn = await functions.findByName(parent.fn.projectId, call.function);
    if (!fn) throw new StepFailure('NOT_FOUND', `no function named "${call.function}" in this project`);
    const input = makeInput({ body: call.input, method: 'POST' });
    const common = {
      fn,
      input,
      trigger: 'function' as const,
      triggerRef: parent.fn.name,
      parentId: ctx.executionId,
      // The tree's root: a child's async invokes count against the run that started the tree.
      rootId: parent.rootId ?? ctx.executionId,
      depth: parent.depth + 1,
    };
    if (call.async) {
      if (ctx.dryRun) return { body: { execution_id: null, status: 'not queued (dry run)' } };
      if (common.rootId && deps.runLimits) {
        try {
          await deps.runLimits.takeAsyncInvoke(parent.fn.projectId, common.rootId);
        } catch (err) {
          if (err instanceof AppError && err.code === 'PLAN_LIMIT_REACHED')
            throw new StepFailure('PLAN_LIMIT_REACHED', err.message, false, 'PLAN_LIMIT_REACHED');
          throw err;
        }
      }
      let id: string;
      try {
        id = await enqueue(common, true);
      } catch (err) {
        // A full queue fails the step with the refusal's code (retryable: the queue drains as runs start).
        if (err instanceof AppError && err.details?.limit === 'max_queued_function_runs')
          throw new StepFailure('RATE_LIMITED', err.message, true, 'RATE_LIMITED');
        throw err;
      }
      return { body: { execution_id: id, status: 'queued' } };
    }
    // A synchronous child runs inside its parent's time and run slot.
    const outcome = await runSync({ ...common, dryRun: ctx.dryRun, maxTimeoutMs: ctx.remainingMs(), inRun: true });
    if (outcome.status === 'failed')
      throw new StepFailure(
        outcome.error?.code ?? 'INVOKE_FAILED',
        `${fn.name} failed: ${outcome.error?.message ?? 'unknown error'}`,
      );
    return { body: outcome.output, execution_id: outcome.executionId };
  }

  /**
   * Background work (a cron tick, an after-hook): runs now when the project has a free run slot, otherwise waits in
   * line as a queued execution (counted against the month's runs once, when queued). Answers the outcome, or the id
   * of the queued execution.
   */
  async function runOrQueue(req: Omit<RunRequest, 'dryRun' | 'slot'>): Promise<RunOutcome | { queued: string }> {
    const end = await turn(req.fn.projectId);
    if (!end) return { queued: await enqueue(req) };
    try {
      const slot = await takeSlot(req.fn);
      if (!slot) return { queued: await enqueue(req) };
      try {
        return await runSync({ ...req, dryRun: false, slot });
      } finally {
        await slot.release().catch(() => {});
      }
    } finally {
      end();
    }
  }

  return { execute, runSync, runOrQueue, enqueue, runQueued, requeueStale };
}
