// `Database`: one data-API action on the project's own database, with the data API's isolation (it goes
// through the router as the function's project principal, like a call with the project API key).
// `query` is the data API's REST body plus its `action`, templates allowed in any value:
// `{"name": "save", "kind": "Database", "query": {"action": "insert", "table": "orders", "values": {"sku": "{{ input.body.sku }}"}}}`.
// The output is the data API's answer (`{rows}`, `{row}`, `{count, rows}`, ...). A data API error fails the
// step with the data error's code. Dry runs run the action inside a transaction that is rolled back.
import type { ExecutionResultJson } from '../../../../platform/subgraph.ts';
import { compileChecked, objectField } from './fields.ts';
import { StepFailure, StepFieldError, type StepKind, type StepRunContext } from './types.ts';

type Action = { field: string; mutation: boolean; args: Record<string, string> };

const TABLE = { table: 'String!' };
/** Each action: its GraphQL root field, whether it writes, and its arguments with their GraphQL types. */
const ACTIONS: Record<string, Action> = {
  find: { field: 'dataFind', mutation: false, args: { ...TABLE, select: '[String!]', where: 'JSON', orderBy: 'JSON', limit: 'Int', offset: 'Int' } },
  findOne: { field: 'dataFindOne', mutation: false, args: { ...TABLE, select: '[String!]', where: 'JSON', orderBy: 'JSON' } },
  insert: { field: 'dataInsert', mutation: true, args: { ...TABLE, values: 'JSON!', returning: 'JSON' } },
  update: { field: 'dataUpdate', mutation: true, args: { ...TABLE, where: 'JSON', set: 'JSON!', all: 'Boolean', returning: 'JSON' } },
  delete: { field: 'dataDelete', mutation: true, args: { ...TABLE, where: 'JSON', all: 'Boolean', returning: 'JSON' } },
  aggregate: {
    field: 'dataAggregate',
    mutation: false,
    args: { ...TABLE, aggregates: 'JSON!', groupBy: '[String!]', where: 'JSON', having: 'JSON', orderBy: 'JSON', limit: 'Int' },
  },
  vectorSearch: {
    field: 'dataVectorSearch',
    mutation: false,
    args: { ...TABLE, column: 'String!', vector: '[Float!]!', k: 'Int', metric: 'String', where: 'JSON', select: '[String!]' },
  },
  rawSQL: { field: 'dataRawSql', mutation: true, args: { sql: 'String!', params: 'JSON' } },
  transaction: { field: 'dataTransaction', mutation: true, args: { operations: 'JSON!' } },
};
const SELECTIONS: Record<string, string> = {
  dataFind: 'rows',
  dataFindOne: 'row',
  dataInsert: 'count rows',
  dataUpdate: 'count rows',
  dataDelete: 'count rows',
  dataAggregate: 'rows',
  dataVectorSearch: 'rows method',
  dataRawSql: 'rows rowCount fields',
  dataTransaction: 'results',
};
export const DATABASE_ACTIONS = Object.keys(ACTIONS);

function operationOf(action: Action): string {
  const names = Object.keys(action.args);
  const vars = names.map((n) => `$${n}: ${action.args[n]}`).join(', ');
  const args = names.map((n) => `${n}: $${n}`).join(', ');
  return `${action.mutation ? 'mutation' : 'query'} DatabaseStep(${vars}) { result: ${action.field}(${args}) { ${SELECTIONS[action.field]} } }`;
}
const OPERATIONS = Object.fromEntries(Object.entries(ACTIONS).map(([name, a]) => [name, operationOf(a)]));
/** Dry runs: any action inside a transaction that the data API rolls back at the end. */
const DRY_RUN = 'mutation DatabaseStepDryRun($operations: JSON!) { result: dataTransaction(operations: $operations, rollback: true) { results } }';

/** The data API's answer, or a StepFailure naming its error code. */
async function call(ctx: StepRunContext, query: string, variables: Record<string, unknown>, what: string): Promise<unknown> {
  let res: ExecutionResultJson;
  try {
    res = await ctx.deps.router.run(query, variables, ctx.requestContext);
  } catch (err) {
    throw new StepFailure('SERVICE_UNAVAILABLE', `${what}: the data API could not be reached: ${(err as Error).message}`, true);
  }
  const err = res.errors?.[0];
  if (err) {
    const code = typeof err.extensions?.code === 'string' ? err.extensions.code : 'DATABASE_FAILED';
    throw new StepFailure(code, `${what}: ${err.message}`, code === 'SERVICE_UNAVAILABLE');
  }
  return (res.data as { result?: unknown } | null | undefined)?.result ?? null;
}

export const databaseStep: StepKind = {
  kind: 'Database',
  description: `\`query\`: a data-API body with its \`action\` (${DATABASE_ACTIONS.join(', ')}); the output is the data API's answer`,
  fields: ['query'],
  prepare(step) {
    const query = objectField(step, 'query');
    if (!query) throw new StepFieldError('query', 'is required: a data-API body with its action, e.g. {"action": "insert", "table": "orders", "values": {...}}');
    const name = query.action;
    if (typeof name !== 'string' || !Object.hasOwn(ACTIONS, name)) {
      throw new StepFieldError('query.action', `must be one of ${DATABASE_ACTIONS.join(', ')}${name === undefined ? '' : `, got ${JSON.stringify(name)}`}`);
    }
    const action = ACTIONS[name]!;
    for (const key of Object.keys(query)) {
      if (key !== 'action' && !Object.hasOwn(action.args, key)) {
        throw new StepFieldError(`query.${key}`, `is not a field of ${name} (${Object.keys(action.args).join(', ')})`);
      }
    }
    for (const [arg, type] of Object.entries(action.args)) {
      if (type.endsWith('!') && query[arg] === undefined) throw new StepFieldError(`query.${arg}`, `is required for ${name}`);
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
        const variables = Object.fromEntries(Object.keys(action.args).filter((arg) => values[arg] !== undefined).map((arg) => [arg, values[arg]]));
        const what = name === 'transaction' || name === 'rawSQL' ? name : `${name} on ${String(values.table)}`;
        if (!ctx.dryRun) return { body: await call(ctx, OPERATIONS[name]!, variables, what) };
        if (name === 'transaction') {
          const out = await call(ctx, DRY_RUN, { operations: variables.operations }, what);
          return { body: out, dry_run: 'rolled back' };
        }
        const out = (await call(ctx, DRY_RUN, { operations: [{ action: name, ...values }] }, what)) as { results?: unknown[] } | null;
        return { body: out?.results?.[0] ?? null, dry_run: 'rolled back' };
      },
    };
  },
};
