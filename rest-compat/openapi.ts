// OpenAPI 3.1 generated from the route table and the supergraph: request bodies from the operation's
// input types, responses from its selection set (with the REST aliases), errors from the error table.
import {
  Kind,
  parse,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  isScalarType,
  typeFromAST,
  type GraphQLSchema,
  type GraphQLInputType,
  type GraphQLOutputType,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type GraphQLObjectType,
  type GraphQLInterfaceType,
} from 'graphql';
import fs from 'node:fs';
import type { Config } from '../platform/config.ts';
import { ERROR_TABLE } from '../platform/errors.ts';
import type { RouteRow } from './route-types.ts';
import { snakeCase } from './variables.ts';

type Json = Record<string, unknown>;

/** The API's version is the package's (the client package carries the same; a test compares). */
export const API_VERSION = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Every error status an answer of the platform can carry, described once under `components.responses`. */
const ERROR_STATUSES = [400, 401, 403, 404, 408, 409, 413, 415, 416, 422, 429, 500, 502, 503, 504] as const;

/** Statuses a domain's rows give beyond the ones their class of route can (see `errorStatusesOf`). */
const DOMAIN_STATUSES: Record<string, number[]> = {
  // unique violations, hooks refusing a write (their own status, e.g. 422), failing (502) or timing out, row limits
  'Data API': [409, 413, 422, 502, 504],
  Storage: [409, 413, 415, 416],
  // a function's `{"error", "status"}` answer chooses its status (422 and the like), a failing one is 502, a slow one 504
  'Edge functions': [409, 422, 502, 504],
};

/** What each error status means on any route, before the error table's codes that give it. */
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad input: a field is missing, unknown or of the wrong type, or the body is not valid JSON',
  401: 'No valid credential: the route needs one, or one that was sent (on any route, public ones too) is wrong, expired or revoked',
  403: 'Refused: the credential may not do this (wrong kind, another project, a missing scope or policy), or the browser origin is not allowed',
  404: 'Not found: no such resource for this caller, or no such route',
  408: 'The request took longer than the edge allows',
  409: 'Conflict with the current state (a unique value taken, a run still in progress)',
  413: 'The body is larger than allowed',
  415: 'The body is of a content type this route does not take',
  429: "Too many requests: a rate limit or the plan's request quota; `Retry-After` says when to try again",
  500: 'Internal error (masked; the request id finds it in the logs)',
  503: 'A service is not available or the platform is shedding load; `Retry-After` says when to try again',
};

/** Methods whose requests may carry a body: the front door parses (and may refuse) one on each. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The error statuses a row can answer, decided by the same facts the front door acts on (rest-compat/server.ts):
 * bad input (400), unknown ids (404), the edge's time-out (408), the plan's request quota (429), an internal error
 * (500) and a service away (503) everywhere; 401 everywhere too, since every route checks a credential that is sent
 * (a bad or expired one is refused, also on public rows), and 403 everywhere since a browser origin the project does
 * not allow is refused before any route runs (and a credential of the wrong kind on the others); 413 and 415 on every
 * method that carries a body; 409 for changes; what the row's domain adds and what the row itself declares.
 */
export function errorStatusesOf(row: RouteRow): number[] {
  const out = new Set<number>([400, 401, 403, 404, 408, 429, 500, 503]);
  if (BODY_METHODS.has(row.method)) [413, 415].forEach((s) => out.add(s));
  if (row.operation.trimStart().startsWith('mutation')) out.add(409);
  for (const s of DOMAIN_STATUSES[row.tag] ?? []) out.add(s);
  for (const s of row.errors ?? []) out.add(s);
  return [...out].sort((a, b) => a - b);
}

/** The tags of the document, each with its description (a tag used by an operation and missing here is an error). */
export const TAGS: Record<string, string> = {
  'Tenant management':
    'Developer accounts (tenants), their sessions and MFA, projects, API keys, OIDC clients, members, plans and the request log.',
  'Identity provider':
    "The OpenID Connect provider of each project's end-users: discovery, keys, tokens, the hosted sign-in pages and the end-user account API.",
  'Data API':
    "The project's Postgres database: one `POST /v1/<action>` per data action (the older `/api/v1/<action>` spelling is an undocumented alias), and realtime publications.",
  Storage: 'Files in folders: streamed uploads and downloads, metadata, folders, usage and access policies.',
  'Edge functions':
    'Functions of ordered steps, their invocations, secrets, webhooks, cron jobs, hooks, e-mail, executions and statistics.',
  Operator:
    "The install's operator (an operator key, `Authorization: Bearer top_...`): plans and their limits, the default plan, accounts and projects, suspension, usage, the audit log and operator keys.",
  Health: 'Liveness and readiness of the platform and each of its services, and metrics.',
  Documents: 'The API documents themselves: this OpenAPI document, its reference page and the GraphQL endpoint.',
};

/** Who may call a row, said in its operation's description. */
const AUTH_TEXT: Record<RouteRow['auth'], string> = {
  none: 'Public: no credential needed (one that is sent is still checked).',
  optional:
    'Public or with a credential: visitors reach what the policies open to them; an API key or a token decides the rest.',
  tenant: 'Needs a tenant access token (`Authorization: Bearer`, from `/auth/api/v1/tenant/login`).',
  project: "Needs the project's API key (`X-Api-Key`) or an end-user access token.",
  user: 'Needs an end-user access token (`Authorization: Bearer`, from `/token`).',
  any: 'Needs a credential: `X-Api-Key` or `Authorization: Bearer`.',
  operator:
    "Needs an operator key (`Authorization: Bearer top_...`: the install's `TESSERA_OPERATOR_KEY`, or a key made with `POST /admin/api/v1/operator-keys`). Every other credential is refused (403).",
};

/** The security requirement of a row's auth: `{}` in the list means the call may also come with no credential. */
function securityOf(auth: RouteRow['auth']): Json[] {
  if (auth === 'none') return [];
  if (auth === 'tenant' || auth === 'user' || auth === 'operator') return [{ bearerAuth: [] }];
  if (auth === 'optional') return [{}, { apiKey: [] }, { bearerAuth: [] }];
  return [{ apiKey: [] }, { bearerAuth: [] }];
}

const SCALARS: Record<string, Json> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
};

/** `s` or null; a schema that already takes any value (a JSON scalar) stays as it is, not an `anyOf` with an empty arm. */
function nullable(s: Json): Json {
  if (Object.keys(s).filter((k) => k !== 'description').length === 0) return s;
  return { anyOf: [s, { type: 'null' }] };
}

function inputSchema(t: GraphQLInputType, snake: boolean): Json {
  if (isNonNullType(t)) return inputSchema(t.ofType, snake);
  if (isListType(t)) return { type: 'array', items: inputSchema(t.ofType, snake) };
  if (isEnumType(t)) return { type: 'string', enum: t.getValues().map((v) => v.name) };
  if (isInputObjectType(t)) {
    const properties: Json = {};
    const required: string[] = [];
    for (const f of Object.values(t.getFields())) {
      const name = snake ? snakeCase(f.name) : f.name;
      properties[name] = { ...inputSchema(f.type, snake), ...(f.description ? { description: f.description } : {}) };
      if (isNonNullType(f.type) && f.defaultValue === undefined) required.push(name);
    }
    return {
      type: 'object',
      properties,
      additionalProperties: false,
      ...(required.length ? { required } : {}),
      ...(t.description ? { description: t.description } : {}),
    };
  }
  return SCALARS[t.name] ?? {};
}

function outputSchema(t: GraphQLOutputType, sel: SelectionSetNode | undefined, schema: GraphQLSchema): Json {
  if (isNonNullType(t)) return outputSchema(t.ofType, sel, schema);
  if (isListType(t)) {
    const item = outputSchema(t.ofType, sel, schema);
    return { type: 'array', items: isNonNullType(t.ofType) ? item : nullable(item) };
  }
  if (isEnumType(t)) return { type: 'string', enum: t.getValues().map((v) => v.name) };
  if (isScalarType(t)) return SCALARS[t.name] ?? {};
  if ((isObjectType(t) || isInterfaceType(t)) && sel) return selectionSchema(sel, t, schema);
  return {};
}

function selectionSchema(
  sel: SelectionSetNode,
  type: GraphQLObjectType | GraphQLInterfaceType,
  schema: GraphQLSchema,
): Json {
  const properties: Json = {};
  const required: string[] = [];
  for (const s of sel.selections) {
    if (s.kind !== Kind.FIELD) continue;
    const key = s.alias?.value ?? s.name.value;
    if (s.name.value === '__typename') {
      properties[key] = { type: 'string' };
      continue;
    }
    const field = type.getFields()[s.name.value];
    if (!field) continue;
    const fieldSchema = isNonNullType(field.type)
      ? outputSchema(field.type, s.selectionSet, schema)
      : nullable(outputSchema(field.type, s.selectionSet, schema));
    properties[key] = { ...fieldSchema, ...(field.description ? { description: field.description } : {}) };
    if (isNonNullType(field.type)) required.push(key);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

function opOf(row: RouteRow): OperationDefinitionNode {
  return parse(row.operation).definitions.find(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  )!;
}

/** The OpenAPI document of every row of the table. */
export function buildOpenApi(rows: readonly RouteRow[], schema: GraphQLSchema, _config: Config): Json {
  const paths: Record<string, Json> = {};
  for (const row of rows) {
    const op = opOf(row);
    const varTypes = new Map(
      op.variableDefinitions?.map((v) => [
        v.variable.name.value,
        typeFromAST(schema, v.type as never) as GraphQLInputType | undefined,
      ]) ?? [],
    );
    const parameters: Json[] = [];
    let body: Json | undefined;
    const bodyProps: Json = {};
    const bodyRequired: string[] = [];
    for (const [name, sources] of Object.entries(row.variables)) {
      const t = varTypes.get(name);
      if (!t) continue;
      // `a|b` sources: document each place the value may come from.
      for (const source of sources.split('|')) {
        if (source === 'json') body = { description: 'Any JSON value' };
        else if (source === 'body' || source === 'body-deep') body = inputSchema(t, true);
        else if (source.startsWith('body.')) {
          bodyProps[source.slice(5)] = inputSchema(t, true);
          if (isNonNullType(t) && !sources.includes('|')) bodyRequired.push(source.slice(5));
        } else if (source.startsWith('header.')) {
          // Header names are case-insensitive; documented in their usual spelling (`Idempotency-Key`).
          const header = source
            .slice(7)
            .replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
          parameters.push({
            name: header,
            in: 'header',
            required: isNonNullType(t) && !sources.includes('|'),
            schema: inputSchema(t, true),
          });
        } else {
          const [where, key] = source.split('.') as ['params' | 'query', string];
          parameters.push({
            name: key,
            in: where === 'params' ? 'path' : 'query',
            required: where === 'params' || (isNonNullType(t) && !sources.includes('|')),
            schema: inputSchema(t, true),
          });
        }
      }
    }
    for (const m of row.path.matchAll(/:([A-Za-z_]+)/g)) {
      if (!parameters.some((p) => p.name === m[1] && p.in === 'path'))
        parameters.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
    }
    if (!body && Object.keys(bodyProps).length > 0)
      body = { type: 'object', properties: bodyProps, ...(bodyRequired.length ? { required: bodyRequired } : {}) };

    const rootType = op.operation === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
    const data = selectionSchema(op.selectionSet, rootType, schema);
    const firstKey = Object.keys(data.properties as Json)[0]!;
    const responseSchema =
      row.response === 'http'
        ? { description: "The function's own answer (any JSON)" }
        : row.unwrap
          ? (data.properties as Json)[firstKey]
          : data;

    const responses: Json = {
      [String(row.status)]:
        row.status === 204
          ? { description: 'Done, no content' }
          : {
              description: row.textSuccess ? `Success (JSON; text/plain ${row.textSuccess})` : 'Success',
              content: {
                'application/json': { schema: responseSchema },
                ...(row.textSuccess ? { 'text/plain': { schema: { type: 'string' } } } : {}),
              },
            },
    };
    for (const [status, other] of Object.entries(row.otherSuccess ?? {}))
      responses[status] = {
        description: other.description,
        content: { 'application/json': { schema: other.schema ?? { description: 'Any JSON value' } } },
      };
    for (const status of errorStatusesOf(row))
      responses[String(status)] =
        row.response === 'http' && status !== 401 && status !== 403
          ? {
              description: `Error (${status}): the error body of components/schemas/Error, or the operation's own answer with this status`,
              content: { 'application/json': { schema: { description: 'Any JSON value' } } },
            }
          : { $ref: `#/components/responses/E${status}` };
    // The operation's own answer may choose an error status of its own (a function's `{"error", "status"}` result,
    // 400-599): any other 4xx or 5xx. Its successes stay the ones listed (200, and 202 of an async invoke).
    if (row.response === 'http')
      for (const range of ['4XX', '5XX'])
        responses[range] = {
          description: `The operation's own error answer, with the ${range} status it chose (any JSON, e.g. \`{"error": "INVALID_SIGNATURE", "status": 401}\`)`,
          content: { 'application/json': { schema: { description: 'Any JSON value' } } },
        };

    const oaPath = row.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[oaPath] ??= {};
    paths[oaPath][row.method.toLowerCase()] = {
      operationId: row.id,
      summary: row.summary,
      description: `${row.description ?? `${row.summary}.`}\n\n${AUTH_TEXT[row.auth]}`,
      tags: [row.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
      responses,
      security: securityOf(row.auth),
      'x-graphql-operation': row.operation.trim(),
    };
  }

  const byStatus = new Map<number, string[]>();
  for (const [code, row] of Object.entries(ERROR_TABLE))
    byStatus.set(row.status, [...(byStatus.get(row.status) ?? []), code]);
  const errorResponses: Json = {};
  for (const status of ERROR_STATUSES) {
    errorResponses[`E${status}`] = {
      // 422 is also what functions and hooks typically choose for their own `{"error", "status"}` answers.
      description: `${STATUS_TEXT[status] ?? 'Error'} (${[...(byStatus.get(status) ?? []), ...(status === 422 || !byStatus.has(status) ? ['a function or hook answering this status'] : [])].join(', ')})`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tessera',
      version: API_VERSION,
      description:
        'Self-hostable backend platform. REST paths each run one GraphQL operation of the supergraph served at /graphql.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Api-Key',
          description:
            "A project key: the secret API key (tsk_...), or the publishable key (tpk_...) a web page or app may ship, which opens only a visitor's calls",
        },
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'Tenant access token, an end-user access token from /token, or an operator key (`top_...`, the admin API only)',
        },
      },
      schemas: {
        GraphQLResponse: {
          type: 'object',
          description:
            'A GraphQL-over-HTTP response: `data`, and `errors` each with `extensions.code` and `extensions.http.status`',
          properties: {
            data: { anyOf: [{ type: 'object' }, { type: 'null' }] },
            errors: {
              type: 'array',
              items: {
                type: 'object',
                required: ['message'],
                properties: { message: { type: 'string' }, extensions: { type: 'object' } },
              },
            },
            extensions: { type: 'object' },
          },
        },
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'request_id'],
              properties: {
                code: { type: 'string', enum: Object.keys(ERROR_TABLE) },
                message: { type: 'string' },
                details: { type: 'object' },
                request_id: { type: 'string' },
              },
            },
          },
        },
      },
      responses: errorResponses,
    },
  };
}

type PathItems = Record<string, Record<string, Record<string, unknown>>>;

/**
 * The whole document: the route table's rows, then the hand-written handlers' path items (which describe their own
 * answers; each also gets the errors every route can give: 429, 500 and 503).
 */
export function assembleOpenApi(
  rows: readonly RouteRow[],
  schema: GraphQLSchema,
  config: Config,
  handlers: readonly PathItems[],
): Json {
  const openapi = buildOpenApi(rows, schema, config);
  const paths = openapi.paths as Record<string, Record<string, unknown>>;
  for (const items of [...handlers, DOCUMENTS_OPENAPI]) {
    for (const [path, item] of Object.entries(items)) {
      for (const operation of Object.values(item)) {
        const responses = (operation.responses ??= {}) as Json;
        for (const status of ['429', '500', '503']) responses[status] ??= { $ref: `#/components/responses/E${status}` };
      }
      paths[path] = { ...paths[path], ...item };
    }
  }
  const used = new Set(
    Object.values(paths).flatMap((item) => Object.values(item).flatMap((o) => (o as { tags?: string[] }).tags ?? [])),
  );
  const missing = [...used].filter((t) => !TAGS[t]);
  if (missing.length > 0) throw new Error(`OpenAPI tags without a description in TAGS: ${missing.join(', ')}`);
  openapi.tags = Object.entries(TAGS)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
  return openapi;
}

/** The documents the front door serves about itself (rest-compat/server.ts): this one, its page and /graphql. */
const DOCUMENTS_OPENAPI: PathItems = {
  '/openapi.json': {
    get: {
      operationId: 'docs.openapi',
      summary: 'This OpenAPI document',
      description: 'The REST API as OpenAPI 3.1, generated from the route table and the supergraph. Public.',
      tags: ['Documents'],
      security: [],
      responses: {
        200: { description: 'The document', content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  },
  '/docs': {
    get: {
      operationId: 'docs.page',
      summary: 'The API reference page',
      description: 'A readable HTML page of this document. Public.',
      tags: ['Documents'],
      security: [],
      responses: { 200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
  '/realtime': { get: realtimeOperation('get'), post: realtimeOperation('post') },
  '/graphql': {
    get: {
      operationId: 'graphql.get',
      summary: 'GraphQL over GET (queries only)',
      description:
        "Query string `query`, `variables` (JSON), `operationName`. Apollo's CSRF prevention answers 400 unless the request carries `Apollo-Require-Preflight: true` (or any non-empty `X-Apollo-Operation-Name`, or a `Content-Type` other than a form's): see docs/architecture.md. A browser that asks for `text/html` gets the GraphiQL explorer. Credentials as on every route: `X-Api-Key` or `Authorization: Bearer`.",
      tags: ['Documents'],
      security: [{}, { apiKey: [] }, { bearerAuth: [] }],
      parameters: [
        { name: 'query', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'variables', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'operationName', in: 'query', required: false, schema: { type: 'string' } },
        {
          name: 'Apollo-Require-Preflight',
          in: 'header',
          required: false,
          description: 'Any non-empty value lets a GET through the CSRF prevention',
          schema: { type: 'string' },
        },
      ],
      responses: {
        200: {
          description: 'A GraphQL response (its `errors` may say what failed), or the explorer page',
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
            'application/graphql-response+json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
            'text/html': { schema: { type: 'string' } },
          },
        },
        ...graphqlErrors([400, 401, 403, 404]),
      },
    },
    post: {
      operationId: 'graphql.post',
      summary: 'GraphQL over POST',
      description:
        'Body `{query, variables?, operationName?}` as JSON, or a multipart request (uploads; it needs `Apollo-Require-Preflight: true`). The full supergraph; subscriptions are served at `/realtime`.',
      tags: ['Documents'],
      security: [{}, { apiKey: [] }, { bearerAuth: [] }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['query'],
              properties: {
                query: { type: 'string' },
                variables: { type: 'object' },
                operationName: { type: 'string' },
              },
            },
          },
          'multipart/form-data': { schema: { type: 'object' } },
        },
      },
      responses: {
        200: {
          description: 'A GraphQL response',
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
            'application/graphql-response+json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
          },
        },
        ...graphqlErrors([400, 401, 403, 404, 409, 413, 415]),
      },
    },
  },
};

/** The realtime endpoint (subgraphs/data/realtime, mounted by the front door): GraphQL subscriptions over SSE. */
function realtimeOperation(method: 'get' | 'post'): Record<string, unknown> {
  return {
    operationId: `data.realtime.${method}`,
    summary: method === 'get' ? 'Subscribe to row changes (SSE, query string)' : 'Subscribe to row changes (SSE)',
    description:
      "The GraphQL subscription `dataChanges(table: String)` of the project's published tables, as server-sent events (`Accept: text/event-stream`); the same path takes graphql-ws WebSockets (credentials as connection params). " +
      (method === 'get'
        ? 'Query string `query`, `variables`, `operationName`.'
        : 'Body `{query, variables?, operationName?}`.') +
      ' Needs the project API key or an end-user token (the publishable key too: rows under RLS as a visitor).',
    tags: ['Data API'],
    security: [{ apiKey: [] }, { bearerAuth: [] }],
    ...(method === 'get'
      ? {
          parameters: [
            { name: 'query', in: 'query', required: true, schema: { type: 'string' } },
            { name: 'variables', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'operationName', in: 'query', required: false, schema: { type: 'string' } },
          ],
        }
      : {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['query'],
                  properties: {
                    query: { type: 'string' },
                    variables: { type: 'object' },
                    operationName: { type: 'string' },
                  },
                },
              },
            },
          },
        }),
    responses: {
      200: {
        description:
          'The event stream (`event: next` with `data: {"data": {"dataChanges": {...}}}`, then `event: complete`), or a query\'s GraphQL response',
        content: {
          'text/event-stream': { schema: { type: 'string' } },
          'application/json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
          'application/graphql-response+json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
        },
      },
      ...graphqlErrors([400, 404, 405]),
      406: {
        description: 'NOT_ACCEPTABLE: the Accept header names neither application/json nor text/event-stream',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
      401: { $ref: '#/components/responses/E401' },
      403: { $ref: '#/components/responses/E403' },
      ...(method === 'post'
        ? { 413: { $ref: '#/components/responses/E413' }, 415: { $ref: '#/components/responses/E415' } }
        : {}),
    },
  };
}

/** GraphQL's own error answers: `{errors: [...]}` with the highest status of its errors. */
function graphqlErrors(statuses: number[]): Json {
  return Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: `${STATUS_TEXT[s] ?? 'Error'}, as a GraphQL response`,
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
          'application/graphql-response+json': { schema: { $ref: '#/components/schemas/GraphQLResponse' } },
        },
      },
    ]),
  );
}
