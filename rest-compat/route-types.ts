// The shape of one row of the REST route table (see route-table.ts).

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Where a GraphQL variable's value comes from:
 * - `body`: the whole JSON body, its top-level keys turned from snake_case to camelCase
 * - `body-deep`: the same with the keys of nested objects turned too (for input types nesting input types, never
 *   for free-form JSON such as a data API row)
 * - `body.<field>`: one field of the body (as sent)
 * - `params.<name>`: a path parameter; `query.<name>`: a query-string parameter
 * - `header.<name>`: a request header (name in lower case, e.g. `header.idempotency-key`)
 * Path, query and header values are strings; they are coerced to the variable's GraphQL type (Int, Float, Boolean).
 */
type OneSource =
  'body' | 'body-deep' | 'json' | `body.${string}` | `params.${string}` | `query.${string}` | `header.${string}`;
/** `json`: the whole JSON body exactly as sent (any JSON value). `a|b`: the first of the two that is present. */
export type VariableSource = OneSource | `${OneSource}|${OneSource}`;

/**
 * Who may call: `none` (public), `optional` (public, but a credential sent decides what the caller may do: storage
 * rows whose folders' policies open them to visitors), `tenant` (tenant bearer token), `project` (X-Api-Key or
 * end-user token), `user` (end-user token), `any` credential, `operator` (an operator key: the admin API). Every route checks a credential that is sent, so any
 * route answers 401 to a bad one (rest-compat/openapi.ts documents it).
 */
export type RouteAuth = 'none' | 'optional' | 'tenant' | 'project' | 'user' | 'any' | 'operator';

export type RouteRow = {
  /** Dotted operation id, reused as OpenAPI operationId and in logs. */
  id: string;
  method: HttpMethod;
  /** Path with `:name` parameters, as in the seed. */
  path: string;
  summary: string;
  /** OpenAPI tag (the domain). */
  tag: string;
  auth: RouteAuth;
  /** GraphQL operation document; fields are aliased to the REST (snake_case) shape. */
  operation: string;
  /** HTTP status on success. 204 sends no body. */
  status: number;
  variables: Record<string, VariableSource>;
  /** Body is `data[<first root field>]` instead of `data` (for flat responses like login). */
  unwrap?: boolean;
  /**
   * `http`: the operation chooses the answer: its single root field is `{status, body, headers?}` (e.g. a
   * function's own `{"error": ..., "status": 401}` result); `status` above is only the documented default.
   */
  response?: 'http';
  /** The operation's longer description (OpenAPI `description`). */
  description?: string;
  /**
   * Other success answers than `status`, with what each carries: e.g. 202 `{execution_id, status}` of an async invoke.
   * Documented in /openapi.json beside `status`; the contract test (tests/e2e/platform/contract.test.ts) holds the
   * server to them.
   */
  otherSuccess?: Record<number, { description: string; schema?: Record<string, unknown> }>;
  /**
   * The success may also be text (`text/plain`): the operation's answer is a string in some cases (e.g. `?format=sql`),
   * which the front door sends as text. The description says when.
   */
  textSuccess?: string;
  /** Error statuses the row's domain gives beyond those its class of route can (rest-compat/openapi.ts errorStatusesOf). */
  errors?: number[];
};
