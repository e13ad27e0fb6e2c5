// Bounds on GraphQL operations, applied by the router (/graphql) and by every subgraph executor (the REST fast
// path, split-mode subgraph servers): a token cap while parsing, GraphQL Armor's depth, alias, directive and cost
// rules (linear in the document: fragments are counted once and their totals reused, so a fragment bomb is refused
// without being expanded), text that PostgreSQL cannot store refused in string literals, and a row budget for the
// actions that answer rows (the answer's size is rows × aliases). Each refusal is a 400 GRAPHQL_LIMIT_EXCEEDED
// naming its limit and the setting that raises it.
import {
  GraphQLError,
  Kind,
  getNamedType,
  isObjectType,
  parse,
  valueFromAST,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import type { Config } from './config.ts';
import { textProblem } from './input-guard.ts';

export type GraphQLLimits = {
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
  maxTokens: number;
  maxCost: number;
  maxRows: number;
};

/** The limits of the configuration (TESSERA_GRAPHQL_*). */
export function graphqlLimitsOf(
  config: Pick<
    Config,
    | 'graphqlMaxDepth'
    | 'graphqlMaxAliases'
    | 'graphqlMaxDirectives'
    | 'graphqlMaxTokens'
    | 'graphqlMaxCost'
    | 'graphqlMaxRows'
  >,
): GraphQLLimits {
  return {
    maxDepth: config.graphqlMaxDepth,
    maxAliases: config.graphqlMaxAliases,
    maxDirectives: config.graphqlMaxDirectives,
    maxTokens: config.graphqlMaxTokens,
    maxCost: config.graphqlMaxCost,
    maxRows: config.graphqlMaxRows,
  };
}

/**
 * Subgraphs receive what the router planned: fetches may be one level deeper (`_entities`) and longer (fragments
 * written out) than the caller's document, which the router already bounded. Their own bounds leave that room.
 */
export function subgraphLimitsOf(limits: GraphQLLimits): GraphQLLimits {
  return { ...limits, maxDepth: limits.maxDepth + 2, maxTokens: limits.maxTokens * 4, maxCost: limits.maxCost * 2 };
}

const SETTING: Record<string, string> = {
  depth: 'TESSERA_GRAPHQL_MAX_DEPTH',
  aliases: 'TESSERA_GRAPHQL_MAX_ALIASES',
  directives: 'TESSERA_GRAPHQL_MAX_DIRECTIVES',
  tokens: 'TESSERA_GRAPHQL_MAX_TOKENS',
  cost: 'TESSERA_GRAPHQL_MAX_COST',
  rows: 'TESSERA_GRAPHQL_MAX_ROWS',
};

/** The error of a limit: 400 GRAPHQL_LIMIT_EXCEEDED with `details: {limit, max, found?, setting}`. */
export function limitError(limit: keyof typeof SETTING & string, max: number, found?: number): GraphQLError {
  const what = limit === 'rows' ? 'rows an operation may ask for' : limit;
  const message = `The operation is over the ${limit} limit: at most ${max} ${what}${found !== undefined ? `, found ${found}` : ''} (${SETTING[limit]})`;
  return new GraphQLError(message, {
    extensions: {
      code: 'GRAPHQL_LIMIT_EXCEEDED',
      http: { status: 400 },
      details: { limit, max, ...(found !== undefined ? { found } : {}), setting: SETTING[limit] },
    },
  });
}

/**
 * GraphQL Armor reports "… limit of N exceeded, found M."; the count is kept for the caller. M may be written with an
 * exponent (a fragment bomb's cost: "found 3.3e+25").
 */
function armorReject(limit: string, max: number) {
  return (context: ValidationContext | null, err: GraphQLError) => {
    const found = /found (\d+(?:\.\d+)?(?:e[+-]?\d+)?)/i.exec(err.message)?.[1];
    context?.reportError(limitError(limit, max, found === undefined ? undefined : Math.ceil(Number(found))));
  };
}

/** Refuses string literals PostgreSQL cannot store (NUL, lone surrogates); variables are checked by the input guard. */
const textLiteralRule: ValidationRule = (context): ASTVisitor => ({
  StringValue(node) {
    const problem = textProblem(node.value);
    if (problem)
      context.reportError(
        new GraphQLError(`A string literal ${problem}`, {
          nodes: [node],
          extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
        }),
      );
  },
});

/**
 * The validation rules of the limits. They run before graphql-js's own rules (apart from them, see `validateLimited`):
 * each is linear in the document, while some of graphql-js's rules are not on adversarial documents.
 */
export function limitRules(limits: GraphQLLimits): ValidationRule[] {
  const common = { propagateOnRejection: false, exposeLimits: true };
  return [
    maxDepthRule({ ...common, n: limits.maxDepth, onReject: [armorReject('depth', limits.maxDepth)] }),
    maxAliasesRule({ ...common, n: limits.maxAliases, onReject: [armorReject('aliases', limits.maxAliases)] }),
    maxDirectivesRule({
      ...common,
      n: limits.maxDirectives,
      onReject: [armorReject('directives', limits.maxDirectives)],
    }),
    costLimitRule({ ...common, maxCost: limits.maxCost, onReject: [armorReject('cost', limits.maxCost)] }),
    textLiteralRule,
  ];
}

/** Parses with the token cap; a document over it is a GRAPHQL_LIMIT_EXCEEDED error (thrown). */
export function parseLimited(query: string, limits: GraphQLLimits): DocumentNode {
  try {
    return parse(query, { maxTokens: limits.maxTokens });
  } catch (err) {
    // By message: graphql may be loaded twice (ESM and CommonJS builds), so instanceof is not reliable.
    if (typeof (err as { message?: unknown }).message === 'string' && isTokenLimitError(err as Error))
      throw limitError('tokens', limits.maxTokens);
    throw err;
  }
}

/** graphql-js's own message for `maxTokens` (Apollo Server's parseOptions use it too). */
export function isTokenLimitError(err: { message: string }): boolean {
  return /Document contains more th(?:an|at) \d+ tokens/.test(err.message);
}

// --- the row budget ------------------------------------------------------------------------------------------

const ROW_ARGUMENTS = ['limit', 'first', 'k'];
/** Rows assumed for an action with a page-size argument left out (the data API's documented default is 100). */
const DEFAULT_PAGE = 100;
/** Rows assumed for an action without one (writes of up to 1000 rows, SQL). */
const UNPAGED_ROWS = 1000;

/** How many rows a root field may answer: 0 when its result carries no rows. */
function rowsOf(
  field: FieldNode,
  def: GraphQLField<unknown, unknown>,
  variables: Record<string, unknown>,
  onVariable?: () => void,
): number {
  const type = getNamedType(def.type);
  if (!isObjectType(type)) return 0;
  const fields = type.getFields();
  if (fields.row && !fields.rows) return 1;
  if (!fields.rows && !fields.results) return 0;
  const argDef = def.args.find((a) => ROW_ARGUMENTS.includes(a.name));
  if (!argDef) return UNPAGED_ROWS;
  const node = field.arguments?.find((a) => a.name.value === argDef.name);
  if (node && node.value.kind !== Kind.INT) onVariable?.();
  const value = node ? valueFromAST(node.value, argDef.type, variables) : argDef.defaultValue;
  if (typeof value !== 'number' || !Number.isFinite(value)) return DEFAULT_PAGE;
  return Math.max(1, Math.min(Math.trunc(value), UNPAGED_ROWS));
}

/**
 * The rows an operation may answer: the sum over its row-returning root fields (every alias counts, fragments are
 * counted once each and reused, so nesting them cannot hide or multiply work). Undefined for unknown operations.
 */
export function operationRows(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> = {},
  onVariable?: () => void,
): number | undefined {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  if (!operation) return undefined;
  const root: GraphQLObjectType | null | undefined =
    operation.operation === 'query'
      ? schema.getQueryType()
      : operation.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return 0;
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  const memo = new Map<string, number>();
  const fieldsOf = root.getFields();
  const count = (set: SelectionSetNode, seen: Set<string>): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const def = fieldsOf[sel.name.value];
        if (def) total += rowsOf(sel, def, variables, onVariable);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        total += count(sel.selectionSet, seen);
      } else {
        const name = sel.name.value;
        const known = memo.get(name);
        if (known !== undefined) total += known;
        else if (!seen.has(name) && fragments.has(name)) {
          const n = count(fragments.get(name)!.selectionSet, new Set([...seen, name]));
          memo.set(name, n);
          total += n;
        }
      }
      if (total > Number.MAX_SAFE_INTEGER / 2) return total;
    }
    return total;
  };
  return count(operation.selectionSet, new Set());
}

/** The row budget's error for an operation over it, else undefined. */
export function checkRows(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | undefined,
  limits: GraphQLLimits,
): GraphQLError | undefined {
  const rows = operationRows(schema, document, operationName, variables ?? {});
  return rows !== undefined && rows > limits.maxRows ? limitError('rows', limits.maxRows, rows) : undefined;
}

export type RowCheck = (
  operationName: string | null | undefined,
  variables: Record<string, unknown> | undefined,
) => GraphQLError | undefined;

/**
 * `checkRows` for a document whose limits passed, prepared once per operation name: when no page size is given by
 * a variable (most operations, every one without a row-returning field), its rows are counted once and never again.
 */
export function rowChecksOf(schema: GraphQLSchema, document: DocumentNode, limits: GraphQLLimits): RowCheck {
  const byName = new Map<string, ReturnType<typeof rowCheckOf>>();
  return (operationName, variables) => {
    let check = byName.get(operationName ?? '');
    if (!check) {
      check = rowCheckOf(schema, document, operationName, limits);
      if (byName.size < 10) byName.set(operationName ?? '', check);
    }
    return check(variables);
  };
}

function rowCheckOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  limits: GraphQLLimits,
): (variables: Record<string, unknown> | undefined) => GraphQLError | undefined {
  let byVariables = false;
  const rows = operationRows(schema, document, operationName, {}, () => (byVariables = true));
  if (byVariables) return (variables) => checkRows(schema, document, operationName, variables, limits);
  const over = rows !== undefined && rows > limits.maxRows;
  return () => (over ? limitError('rows', limits.maxRows, rows) : undefined);
}
