// `POST /edge/api/v1/invoke/:name`: synchronous (the output, or the status of an `{error, status}`
// result), `async` (202 and an execution id; the scheduler runs it), or `dry_run` (no side effects:
// nothing sent or queued, nothing recorded; the answer is the step trace). An Idempotency-Key (sync and async)
// runs a request once: the same key and body within 24 hours answers the first answer (idempotency.ts, the
// webhook receiver's implementation); keys belong to the caller (the project's keys, or one end-user).
import { errors } from '../../../platform/errors.ts';
import { publishableRefusal } from '../../../platform/admin-scopes.ts';
import { checkFunctionName } from './definitions.ts';
import { failureError, makeInput, type Engine } from './engine.ts';
import type { ExecutionEvent } from './executions.ts';
import { createBatcher } from './batching.ts';
import { toFunction } from './functions.ts';
import { fingerprintOf, type HttpAnswer, type Idempotency } from './idempotency.ts';
import type { ReceiverCache, ReceiverEntry } from './receiver-cache.ts';
import { sealedSecretsOf } from './secrets.ts';
import type { Sql } from './sql.ts';

/** A step log line in the REST shape (the trace of a dry run). */
export function eventJson(e: ExecutionEvent) {
  return {
    seq: e.seq,
    step: e.step,
    kind: e.kind,
    type: e.type,
    attempt: e.attempt,
    input: e.input ?? null,
    output: e.output ?? null,
    error: e.error ?? null,
    duration_ms: e.durationMs === undefined || e.durationMs === null ? null : Math.round(e.durationMs * 1000) / 1000,
    at: e.at.toISOString(),
  };
}

export type InvokeService = ReturnType<typeof createInvokeService>;

function visitorRefusal(visitor: 'publishable' | 'user', what: string) {
  return visitor === 'publishable' ? publishableRefusal(what) : errors.forbidden(`End-user tokens may not ${what}`);
}

/** Creates the invoke service. */
export function createInvokeService({
  sql,
  engine,
  idempotency,
  cache,
}: {
  sql: Sql;
  engine: Engine;
  idempotency: Idempotency;
  /** The webhook receivers' cache, which keeps invoked functions too (same invalidation: `functions.changed`). */
  cache: ReceiverCache;
}) {
  // Concurrent invokes that miss the cache look their functions up together: one query for a batch.
  const read = createBatcher<{ projectId: string; name: string }, ReceiverEntry | null>(
    async (keys) => {
      const rows = await sql.rows(
        `select to_jsonb(f) as function_row, ${sealedSecretsOf('f.project_id')} as sealed_secrets
         from edge_functions f join jsonb_to_recordset(?::jsonb) as k(project_id uuid, name text) on f.project_id = k.project_id and f.name = k.name`,
        [JSON.stringify(keys.map((k) => ({ project_id: k.projectId, name: k.name })))],
      );
      const found = new Map(
        rows.map((r) => {
          const fn = toFunction(r.function_row as Record<string, unknown>);
          return [`${fn.projectId}/${fn.name}`, { fn, sealedSecrets: r.sealed_secrets as Record<string, string> }];
        }),
      );
      return keys.map((k) => found.get(`${k.projectId}/${k.name}`) ?? null);
    },
    { max: 100, inFlight: 2, retryAlone: false },
  );
  /** The function and its project's sealed secrets: from the cache, or read (then cached); null when none has the name. */
  const lookup = async (projectId: string, name: string): Promise<ReceiverEntry | null> => {
    const key = cache.functionKeyOf(projectId, name);
    const cached = await cache.get(key);
    if (cached) return cached;
    const generation = cache.generation();
    const entry = await read({ projectId, name });
    if (entry) cache.remember(key, entry, generation);
    return entry;
  };

  return {
    /**
     * `visitor`: the caller is the publishable key or an end-user, who may run only functions marked public, and no
     * dry run (its trace shows the steps' inputs and outputs). Both refusals are 403s that do not say whether a
     * function of that name exists. `caller` keeps callers' Idempotency-Keys apart (`project`, `user:<id>`,
     * `publishable`): an end-user never gets another's stored answer.
     */
    async invoke(
      projectId: string,
      args: {
        name: string;
        input?: unknown;
        async?: boolean | null;
        dryRun?: boolean | null;
        idempotencyKey?: string | null;
      },
      visitor?: 'publishable' | 'user',
      caller = 'project',
    ): Promise<HttpAnswer> {
      const name = checkFunctionName(args.name, 'name');
      if (args.async && args.dryRun) throw errors.validation('async', 'cannot be combined with dry_run');
      if (visitor && args.dryRun) throw visitorRefusal(visitor, 'run dry runs (their trace is for the project itself)');
      const found = await lookup(projectId, name);
      if (visitor && !found?.fn.public) throw visitorRefusal(visitor, 'invoke functions that are not marked public');
      if (!found) throw errors.notFound('function', name);
      const { fn, sealedSecrets } = found;
      const body = args.input === undefined ? null : args.input;
      const rawBody = JSON.stringify(body);
      const input = makeInput({ body, method: 'POST', rawBody });
      // A dry run changes nothing: there is nothing for a key to protect, so it is not looked at.
      const key = args.dryRun ? null : args.idempotencyKey;
      const mode = args.async ? 'async' : 'sync';
      const request = {
        projectId,
        scope: `invoke/${name}/${caller}`,
        key,
        fingerprint: fingerprintOf('invoke', mode, rawBody),
        leaseMs: fn.timeoutMs + 60_000,
      };
      if (args.async) {
        return await idempotency.run(request, async () => {
          const id = await engine.enqueue({ fn, input, trigger: 'invoke', depth: 0 }, true);
          return { status: 202, body: { execution_id: id, status: 'queued' }, headers: { 'x-execution-id': id } };
        });
      }
      if (args.dryRun) {
        const o = await engine.execute({ fn, input, trigger: 'invoke', depth: 0, dryRun: true, sealedSecrets }, null);
        return {
          status: 200,
          body: {
            dry_run: true,
            status: o.status,
            output: o.output,
            response_status: o.status === 'succeeded' ? o.responseStatus : null,
            error: o.error,
            trace: o.events.map(eventJson),
          },
          headers: {},
        };
      }
      return await idempotency.run(request, async () => {
        const o = await engine.runSync({
          fn,
          input,
          trigger: 'invoke',
          depth: 0,
          dryRun: false,
          sealedSecrets,
        });
        if (o.status === 'failed') throw failureError(o);
        return { status: o.responseStatus, body: o.output, headers: { 'x-execution-id': o.executionId ?? '' } };
      });
    },
  };
}
