// `Database`: one data-API action on the project's own database, with the data API's isolation (it goes
// through the router as the function's project principal, like a call with the project API key).
// `query` is the data API's REST body plus its `action`, templates allowed in any value:
// `{"name": "save", "kind": "Database", "query": {"action": "insert", "table": "orders", "values": {"sku": "{{ input.body.sku }}"}}}`.
// The output is the data API's answer (`{rows}`, `{row}`, `{count, rows}`, ...). A data API error fails the
// step with the data error's code. Dry runs run the action inside a transaction that is rolled back.
import { DATA_ACTIONS, type DataAction } from '../../../../platform/data-actions.ts';
import {
  DATABASE_STEP_OPERATIONS,
  INTERNAL_OPERATIONS,
  callInternal,
  isAnswerError,
  type InternalOperation,
} from '../../../../platform/internal-operations.ts';
import { compileChecked, objectField } from './fields.ts';
import { StepFailure, StepFieldError, type StepKind, type StepRunContext } from './types.ts';

// The actions, their arguments and their operations come from the table of data actions (platform/data-actions.ts).
const ACTIONS: Readonly<Record<string, DataAction>> = DATA_ACTIONS;
export const DATABASE_ACTIONS = Object.keys(ACTIONS);

/** The data API's answer, or a StepFailure naming its error code. */
async function call(
  ctx: StepRunContext,
  operation: InternalOperation<Record<string, unknown>, { result: unknown }>,
  variables: Record<string, unknown>,
  what: string,
): Promise<unknown> {
  try {
    return (await callInternal(ctx.deps.router, operation, variables, ctx.requestContext))?.result ?? null;
  } catch (err) {
    // The data API's answer fails the step with its code (retried when the data API was unavailable).
    if (isAnswerError(err))
      throw new StepFailure(err.code, `${what}: ${err.message}`, err.code === 'SERVICE_UNAVAILABLE');
    throw new StepFailure(
      'SERVICE_UNAVAILABLE',
      `${what}: the data API could not be reached: ${(err as Error).message}`,
      true,
    );
  }
}

export const databaseStep: StepKind = {
  kind: 'Database',
  description: `\`query\`: a data-API body with its \`action\` (${DATABASE_ACTIONS.join(', ')}); the output is the data API's answer`,
  fields: ['query'],
  prepare(step) {
    const query = objectField(step, 'query');
    if (!query)
      throw new StepFieldError(
        'query',
        'is required: a data-API body with its action, e.g. {"action": "insert", "table": "orders", "values": {...}}',
      );
    const name = query.action;
    if (typeof name !== 'string' || !Object.hasOwn(ACTIONS, name)) {
      throw new StepFieldError(
        'query.action',
        `must be one of ${DATABASE_ACTIONS.join(', ')}${name === undefined ? '' : `, got ${JSON.stringify(name)}`}`,
      );
    }
    const action = ACTIONS[name]!;
    for (const key of Object.keys(query)) {
      if (key !== 'action' && !Object.hasOwn(action.args, key)) {
        throw new StepFieldError(`query.${key}`, `is not a field of ${name} (${Object.keys(action.args).join(', ')})`);
      }
    }
    for (const [arg, type] of Object.entries(action.args)) {
      if (type.endsWith('!') && query[arg] === undefined)
        throw new StepFieldError(`query.${arg}`, `is required for ${name}`);
    }
    for (const arg of ['table', 'sql', 'column']) {
      if (query[arg] !== undefined && (typeof query[arg] !== 'string' || query[arg] === '')) {
        throw new StepFieldError(`query.${arg}`, 'must be a non-empty string (a name, or a template)');
      }
    }
    const { action: _action, ...body } = query;
    const template = compileChecked(body, 'query');
    return {
      templates: { query: template },
      async run(resolved, ctx) {
        const values = (resolved.query ?? {}) as Record<string, unknown>;
        const variables = Object.fromEntries(
          Object.keys(action.args)
            .filter((arg) => values[arg] !== undefined)
            .map((arg) => [arg, values[arg]]),
        );
        const what = name === 'transaction' || name === 'rawSQL' ? name : `${name} on ${String(values.table)}`;
        if (!ctx.dryRun) return { body: await call(ctx, DATABASE_STEP_OPERATIONS[name]!, variables, what) };
        if (name === 'transaction') {
          const out = await call(
            ctx,
            INTERNAL_OPERATIONS.databaseStepDryRun,
            { operations: variables.operations },
            what,
          );
          return { body: out, dry_run: 'rolled back' };
        }
        const out = (await call(
          ctx,
          INTERNAL_OPERATIONS.databaseStepDryRun,
          { operations: [{ action: name, ...values }] },
          what,
        )) as { results?: unknown[] } | null;
        return { body: out?.results?.[0] ?? null, dry_run: 'rolled back' };
      },
    };
  },
};
