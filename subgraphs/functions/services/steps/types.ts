// What a step kind is. Each kind lives in its own file of this folder and is listed in ./index.ts;
// the engine knows nothing about any kind beyond this contract.
import type { RequestContext } from '../../../../platform/auth.ts';
import type { Logger } from '../../../../platform/logger.ts';
import type { ErrorCode } from '../../../../platform/errors.ts';
import type { RouterClient } from '../../../../platform/subgraph.ts';
import type { Template } from '../templates.ts';

/** A step as saved: `{name, kind, when?, return?, retries?, ...fields of the kind}`. */
export type StepDefinition = {
  name: string;
  kind: string;
  when?: unknown;
  return?: boolean;
  retries?: number;
} & Record<string, unknown>;

/** A problem with one field of a step; the definition check turns it into VALIDATION_FAILED {step, field}. */
export class StepFieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'StepFieldError';
    this.field = field;
  }
}

/**
 * A step that failed while running. `retryable` failures are tried again (the step's `retries`, with backoff).
 * `answer` names the error a caller of the run gets instead of FUNCTION_FAILED, when the run failed because of
 * how the project is set up (an Email step without the project's SMTP settings: 409 EMAIL_NOT_CONFIGURED).
 */
export class StepFailure extends Error {
  readonly retryable: boolean;
  readonly code: string;
  readonly answer: ErrorCode | undefined;
  constructor(code: string, message: string, retryable = false, answer?: ErrorCode) {
    super(message);
    this.name = 'StepFailure';
    this.code = code;
    this.retryable = retryable;
    this.answer = answer;
  }
}

/** What a running step may use: its project's identity, the other domains (through the router), and the platform. */
export type StepRunContext = {
  projectId: string;
  executionId: string | null;
  /** No side effects: nothing is sent, queued or written. */
  dryRun: boolean;
  /** Aborted when the function's timeout passes. */
  signal: AbortSignal;
  /** Milliseconds left before the function's timeout. */
  remainingMs: () => number;
  /** The function's own identity (a `project` principal), for calls to other domains. */
  requestContext: RequestContext;
  logger: Logger;
  deps: StepDeps;
};

/** Services the step kinds call; built by the functions subgraph. */
export type StepDeps = {
  /** Operations on other domains (e.g. the data API's GraphQL), as the function's project. */
  router: RouterClient;
  /** Outbound HTTP through the address check. */
  http: (req: {
    method: string;
    url: URL;
    headers: Record<string, string>;
    body: string | undefined;
    timeoutMs: number;
    signal: AbortSignal;
  }) => Promise<{ status: number; headers: Record<string, string>; body: unknown }>;
  /** Renders a project's e-mail template and queues it (unless dry run). */
  email: (
    projectId: string,
    mail: { template: string; to: string[]; variables: Record<string, unknown> },
    dryRun: boolean,
  ) => Promise<Record<string, unknown>>;
  /** Runs another function of the project: synchronously (its output) or asynchronously (its execution id). */
  invoke: (
    ctx: StepRunContext,
    call: { function: string; input: unknown; async: boolean },
  ) => Promise<{ body: unknown } & Record<string, unknown>>;
};

/** A step checked and compiled at save time, ready to run many times. */
export type PreparedStep = {
  /** The step's templates by field; the engine renders them (the "resolved input" of the trace). */
  templates: Record<string, Template>;
  /** Runs with the rendered fields; the result is `steps.<name>` (its `body` is the step's output). */
  run: (resolved: Record<string, unknown>, ctx: StepRunContext) => Promise<{ body: unknown } & Record<string, unknown>>;
};

export type StepKind = {
  kind: string;
  /** One line for the docs and error messages. */
  description: string;
  /** The kind's own fields (besides name, kind, when, return, retries); anything else is refused. */
  fields: readonly string[];
  /** Checks the step's fields and compiles its templates; throws StepFieldError. */
  prepare: (step: StepDefinition) => PreparedStep;
};
