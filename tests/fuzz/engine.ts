// The property-based fuzzer of issue 13 (fast-check), shared by the test suite (bounded) and the bench (long
// run): requests generated from the live `/openapi.json` (every operation; path, query and body from its schemas,
// then broken: wrong types, missing and extra fields, deep nesting, huge strings, NUL and lone surrogates, bad path
// parameters, bad or foreign credentials, wrong content types, malformed JSON) and from the GraphQL schema (random
// operations over the real root fields, and depth, alias, directive and fragment attacks). The property: no 5xx,
// every error in the documented shape, and /health alive.
import fc from 'fast-check';

export type FuzzTarget = { url: string; apiKey: string; token: string; projectId: string };
export type FuzzResult = { requests: number; byStatus: Record<string, number>; seed: number };

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
};
type Param = { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: Schema };
type Operation = { method: string; path: string; params: Param[]; body?: Schema; form?: Schema; security: boolean };
type Req = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  expect: 'rest' | 'graphql' | 'oauth' | 'any';
};

const OAUTH = /^\/(token|introspect|revocation)$/;
/** Requests that would end the fuzzer's own credentials or project (it keeps going with them). */
const DESTRUCTIVE = /regenerate-key|\/logout$|rotate-secret|mfa\/(enroll|verify|disable)$/;

/** The operations of the OpenAPI document. */
export function operationsOf(openapi: {
  paths: Record<
    string,
    Record<
      string,
      { parameters?: Param[]; requestBody?: { content?: Record<string, { schema?: Schema }> }; security?: unknown[] }
    >
  >;
}): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(openapi.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = op.requestBody?.content ?? {};
      ops.push({
        method: method.toUpperCase(),
        path,
        params: op.parameters ?? [],
        body: content['application/json']?.schema,
        form: content['application/x-www-form-urlencoded']?.schema,
        security: Array.isArray(op.security) ? op.security.length > 0 : true,
      });
    }
  }
  return ops;
}

// --- values -------------------------------------------------------------------------------------------------

const nasty = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '🎉',
  "'; drop table x; --",
  '../../etc/passwd',
  '%00',
  '${{7*7}}',
  '{{ constructor.constructor("return process")() }}',
  '\r\nX-Injected: 1',
  '<script>',
  ' ',
  '',
);
const hugeString = fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'x'.repeat(n));
const deepJson = fc
  .integer({ min: 50, max: 3000 })
  .chain((n) =>
    fc
      .constantFrom('[', '{"a":')
      .map((open) => (open === '[' ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n))),
  );
const anyScalar = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  nasty,
  fc.constantFrom(-271821, 8.64e15, Number.MAX_SAFE_INTEGER, -1, 0, 1e308),
);
const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyScalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), nasty), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A value that fits the schema, most of the time. */
function valueFor(schema: Schema | undefined): fc.Arbitrary<unknown> {
  if (!schema) return anyJson;
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string':
      return fc.oneof(
        fc.string(),
        fc.emailAddress(),
        fc.uuid(),
        fc.constantFrom('2026-01-01T00:00:00Z', '-271821-04-20T00:00:00Z', 'orders', '* * * * *'),
      );
    case 'integer':
      return fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.constantFrom(0, 1, 100, 1000, 2 ** 31, -(2 ** 31) - 1));
    case 'number':
      return fc.double();
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valueFor(schema.items), { maxLength: 4 });
    case 'object': {
      const props = Object.entries(schema.properties ?? {});
      if (props.length === 0) return fc.dictionary(fc.string(), anyJson, { maxKeys: 3 });
      return fc.record(Object.fromEntries(props.map(([k, s]) => [k, valueFor(s)])), { requiredKeys: [] });
    }
    default:
      return anyJson;
  }
}

/** A body: fitting, or broken on purpose. */
function bodyFor(schema: Schema | undefined): fc.Arbitrary<{ text: string; type: string }> {
  const json = (v: unknown) => ({ text: JSON.stringify(v) ?? 'null', type: 'application/json' });
  const fitting = valueFor(schema ?? { type: 'object' });
  return fc.oneof(
    { weight: 5, arbitrary: fitting.map(json) },
    // Wrong types and extra fields.
    {
      weight: 2,
      arbitrary: fc
        .tuple(fitting, fc.dictionary(fc.oneof(fc.string(), nasty), anyJson, { maxKeys: 3 }))
        .map(([v, extra]) => json(v && typeof v === 'object' && !Array.isArray(v) ? { ...v, ...extra } : extra)),
    },
    { weight: 2, arbitrary: anyJson.map(json) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fitting, nasty)
        .map(([v, s]) =>
          json(
            v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).map((k) => [k, s])) : s,
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fitting, hugeString)
        .map(([v, s]) =>
          json(
            v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).map((k) => [k, s])) : s,
          ),
        ),
    },
    { weight: 1, arbitrary: deepJson.map((text) => ({ text, type: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc.tuple(fitting, deepJson).map(([v, d]) => ({
        text: JSON.stringify(v ?? {})
          .replace(/^\{/, `{"deep":${d},`)
          .replace(/,}$/, '}'),
        type: 'application/json',
      })),
    },
    // Malformed JSON, empty bodies, wrong content types.
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('{', '{"a":', '[1,', 'nul', '"\\ud800"', '{"a":"\\u0000"}', '')
        .map((text) => ({ text, type: 'application/json' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.string(),
          fc.constantFrom(
            'text/plain',
            'text/csv',
            'application/xml',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/json; charset=latin1',
            'application/octet-stream',
          ),
        )
        .map(([text, type]) => ({ text, type })),
    },
  );
}

/** A path parameter: a plausible one, the project's own id, or a hostile one. */
function pathParam(target: FuzzTarget, safe: boolean): fc.Arbitrary<string> {
  return fc.oneof(
    fc.uuid().map(encodeURIComponent),
    fc.string({ minLength: 1 }).map(encodeURIComponent),
    fc.constantFrom(
      '%ZZ',
      '%00',
      '%E0%A4%A',
      '%ED%A0%80',
      'a'.repeat(200),
      'a'.repeat(1500),
      '..%2F..%2Fetc',
      '%F0%9F%8E%89',
      '1e308',
      '-1',
    ),
    ...(safe ? [fc.constant(target.projectId)] : []),
  );
}

function credentials(target: FuzzTarget): fc.Arbitrary<Record<string, string>> {
  return fc.constantFrom<Record<string, string>>(
    {},
    { 'x-api-key': target.apiKey },
    { authorization: `Bearer ${target.token}` },
    { 'x-api-key': 'tsk_garbage' },
    { authorization: 'Bearer garbage' },
    { authorization: 'Basic Zm9vOmJhcg==' },
    { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJ0eXAiOiJ0ZW5hbnQifQ.' },
    { 'x-api-key': target.apiKey, authorization: `Bearer ${target.token}` },
  );
}

/** A request for one OpenAPI operation. */
function restRequest(target: FuzzTarget, op: Operation): fc.Arbitrary<Req> {
  const safe = op.method === 'GET';
  const pathNames = [...op.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]!);
  const queryParams = op.params.filter((p) => p.in === 'query');
  return fc
    .record({
      path: fc.tuple(...pathNames.map(() => pathParam(target, safe))),
      query: fc.tuple(
        ...queryParams.map((p) =>
          fc.option(fc.oneof(valueFor(p.schema).map(String), nasty, fc.string()), { nil: undefined }),
        ),
      ),
      extraQuery: fc.option(fc.tuple(fc.string(), fc.oneof(fc.string(), nasty)), { nil: undefined }),
      creds: credentials(target),
      body: op.body
        ? fc.option(bodyFor(op.body), { freq: 6, nil: undefined })
        : op.form
          ? fc.option(formBody(op.form), { nil: undefined })
          : fc.option(bodyFor(undefined), { freq: 4, nil: undefined }),
    })
    .map(({ path, query, extraQuery, creds, body }) => {
      let p = op.path;
      pathNames.forEach((name, i) => (p = p.replace(`{${name}}`, path[i]!)));
      const qs = new URLSearchParams();
      queryParams.forEach((param, i) => {
        if (query[i] !== undefined) qs.append(param.name, query[i]!);
      });
      if (extraQuery) qs.append(extraQuery[0], extraQuery[1]);
      const search = qs.toString();
      const headers: Record<string, string> = { ...creds };
      if (body) headers['content-type'] = body.type;
      const method = op.method === 'GET' && body ? 'GET' : op.method;
      return {
        method,
        path: `${p}${search ? `?${search}` : ''}`,
        headers,
        body: method === 'GET' ? undefined : body?.text,
        expect: OAUTH.test(op.path) ? 'oauth' : op.path === '/graphql' ? 'graphql' : 'rest',
      } satisfies Req;
    });
}

function formBody(schema: Schema): fc.Arbitrary<{ text: string; type: string }> {
  return fc
    .dictionary(
      fc.constantFrom(...Object.keys(schema.properties ?? { x: {} }), 'grant_type', 'client_id', 'username'),
      fc.oneof(
        fc.string(),
        nasty,
        fc.constantFrom('password', 'client_credentials', 'refresh_token', 'authorization_code'),
      ),
      { maxKeys: 6 },
    )
    .map((d) => ({ text: new URLSearchParams(d).toString(), type: 'application/x-www-form-urlencoded' }));
}

// --- GraphQL ------------------------------------------------------------------------------------------------

/** Root fields of the public schema, from introspection: name → argument names and whether it returns an object. */
export type RootField = { name: string; kind: 'query' | 'mutation'; args: string[]; object: boolean };

function graphqlRequest(target: FuzzTarget, fields: RootField[]): fc.Arbitrary<Req> {
  const field = fc.constantFrom(...fields);
  const selection = (f: RootField) => (f.object ? '{ __typename }' : '');
  const call = (f: RootField, args: string) => `${f.name}${args ? `(${args})` : ''} ${selection(f)}`;
  const argText = (f: RootField) =>
    fc.subarray(f.args).chain((names) =>
      fc
        .tuple(
          ...names.map(() =>
            fc.oneof(
              fc.constantFrom('"x"', '1', 'true', 'null', '[1]', '{a: 1}', '"\\u0000"', '"orders"', '-1', '100000'),
              fc.string().map((s) => JSON.stringify(s)),
            ),
          ),
        )
        .map((vals) => names.map((n, i) => `${n}: ${vals[i]}`).join(', ')),
    );
  const documents = fc.oneof(
    // A random root field with random arguments, alone or aliased many times.
    fc
      .tuple(field, fc.integer({ min: 1, max: 60 }))
      .chain(([f, n]) =>
        argText(f).map(
          (args) => `${f.kind} { ${Array.from({ length: n }, (_, i) => `a${i}: ${call(f, args)}`).join(' ')} }`,
        ),
      ),
    // Variables of the wrong type or hostile content.
    fc.tuple(field, anyJson).map(([f, v]) =>
      JSON.stringify({
        q: `${f.kind} ($v: JSON) { ${f.name}${f.args.length ? `(${f.args[0]}: $v)` : ''} ${selection(f)} }`,
        v,
      }),
    ),
    // Depth through introspection, fragment bombs, directive floods, token floods.
    fc
      .integer({ min: 5, max: 60 })
      .map((n) => `{ __schema { types { ${'fields { type { '.repeat(n)}name${' } }'.repeat(n)} } } }`),
    fc
      .integer({ min: 5, max: 40 })
      .map(
        (n) =>
          `query { ...F${n} }\n${Array.from({ length: n + 1 }, (_, i) => (i === 0 ? 'fragment F0 on Query { __typename }' : `fragment F${i} on Query { ...F${i - 1} a${i}: __typename ...F${i - 1} }`)).join('\n')}`,
      ),
    fc.integer({ min: 10, max: 200 }).map((n) => `{ __typename ${'@include(if: true) '.repeat(n)}}`),
    fc.integer({ min: 1000, max: 20000 }).map((n) => `{ ${'__typename '.repeat(n)}}`),
    fc.constantFrom(
      'subscription { __typename }',
      '{',
      'query A { __typename } query B { __typename }',
      'fragment X on Query { ...X } { ...X }',
      '{ nope }',
      '',
    ),
  );
  return fc
    .tuple(documents, credentials(target), fc.constantFrom('post', 'get', 'post-raw'))
    .map(([doc, creds, how]) => {
      let query = doc;
      let variables: unknown;
      if (doc.startsWith('{"q":')) {
        const parsed = JSON.parse(doc) as { q: string; v: unknown };
        query = parsed.q;
        variables = { v: parsed.v };
      }
      if (how === 'get')
        return {
          method: 'GET',
          path: `/graphql?query=${encodeURIComponent(query.slice(0, 4000))}${variables ? `&variables=${encodeURIComponent(JSON.stringify(variables).slice(0, 2000))}` : ''}`,
          headers: { ...creds, 'apollo-require-preflight': 'true' },
          expect: 'graphql',
        } satisfies Req;
      const body = how === 'post-raw' ? query : JSON.stringify({ query, variables });
      return {
        method: 'POST',
        path: '/graphql',
        headers: { ...creds, 'content-type': 'application/json' },
        body,
        expect: 'graphql',
      } satisfies Req;
    });
}

// --- the property -------------------------------------------------------------------------------------------

/** Why an answer breaks the property, or undefined when it keeps it. */
export function problemOf(req: Req, status: number, contentType: string, text: string): string | undefined {
  if (status >= 500) return `${status} (a 5xx)`;
  if (status < 400) return undefined;
  if (!/json/.test(contentType))
    return /html/.test(contentType) ? undefined : `error without a JSON body (${contentType})`;
  let body: { error?: unknown; errors?: { message?: unknown; extensions?: { code?: unknown } }[] };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return 'error body is not JSON';
  }
  // /realtime is GraphQL over HTTP too: /openapi.json documents its 400, 404 and 405 as GraphQL responses.
  if (
    req.expect === 'graphql' ||
    (Array.isArray(body.errors) && (req.path.startsWith('/graphql') || req.path.startsWith('/realtime')))
  ) {
    const e = body.errors?.[0];
    return typeof e?.message === 'string' && typeof e.extensions?.code === 'string'
      ? undefined
      : 'GraphQL error without errors[].extensions.code';
  }
  if (typeof body.error === 'string')
    return req.expect === 'oauth' || status === 401 || status === 403 || status === 400
      ? undefined
      : `RFC 6749 error body outside the OAuth endpoints`;
  const e = body.error as { code?: unknown; message?: unknown; request_id?: unknown } | undefined;
  if (typeof e?.code !== 'string' || typeof e.message !== 'string' || typeof e.request_id !== 'string')
    return 'error body outside the documented shape';
  return undefined;
}

/** Runs the fuzzer: `runs` generated requests with `seed`; throws (fast-check's report, with the seed) on the first broken property. */
export async function fuzz(
  target: FuzzTarget,
  opts: {
    runs: number;
    seed: number;
    openapi: Parameters<typeof operationsOf>[0];
    rootFields: RootField[];
    healthEvery?: number;
  },
): Promise<FuzzResult> {
  const ops = operationsOf(opts.openapi).filter(
    (o) => !DESTRUCTIVE.test(o.path) && !(o.method === 'DELETE' && /projects\/\{id\}$/.test(o.path)),
  );
  const request = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ops).chain((op) => restRequest(target, op)) },
    { weight: 1, arbitrary: graphqlRequest(target, opts.rootFields) },
  );
  const byStatus: Record<string, number> = {};
  let n = 0;
  await fc.assert(
    fc.asyncProperty(request, async (req) => {
      let res: Response;
      let text: string;
      try {
        res = await fetch(target.url + req.path, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(30_000),
        });
        text = await res.text();
      } catch (err) {
        // A body over the server's limit is answered 413 and the connection closed while the client may still be
        // sending it: the client can see the reset before the answer. Anything else failing is a finding.
        if ((req.body?.length ?? 0) > 1_000_000) {
          byStatus.reset = (byStatus.reset ?? 0) + 1;
          n++;
          return;
        }
        throw new Error(
          `${req.method} ${req.path.slice(0, 300)} → no answer: ${(err as Error).message} ${String((err as { cause?: unknown }).cause ?? '')}`,
        );
      }
      byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
      const problem = problemOf(req, res.status, res.headers.get('content-type') ?? '', text);
      if (problem) throw new Error(`${req.method} ${req.path.slice(0, 300)} → ${problem}: ${text.slice(0, 300)}`);
      if (++n % (opts.healthEvery ?? 200) === 0) {
        const health = await fetch(`${target.url}/health`, { signal: AbortSignal.timeout(5000) });
        if (health.status !== 200) throw new Error(`/health answered ${health.status} after ${n} requests`);
      }
    }),
    { numRuns: opts.runs, seed: opts.seed, endOnFailure: true },
  );
  return { requests: n, byStatus, seed: opts.seed };
}

/** Root fields of the API schema, by introspection over /graphql. */
export async function rootFieldsOf(url: string, apiKey: string): Promise<RootField[]> {
  const q =
    '{ __schema { queryType { fields { name args { name } type { kind ofType { kind } } } } mutationType { fields { name args { name } type { kind ofType { kind } } } } } }';
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ query: q }),
  });
  const data = (
    (await res.json()) as {
      data: {
        __schema: Record<
          'queryType' | 'mutationType',
          { fields: { name: string; args: { name: string }[]; type: { kind: string; ofType?: { kind: string } } }[] }
        >;
      };
    }
  ).data.__schema;
  const out: RootField[] = [];
  for (const [kind, t] of [
    ['query', data.queryType],
    ['mutation', data.mutationType],
  ] as const) {
    for (const f of t.fields)
      out.push({
        name: f.name,
        kind,
        args: f.args.map((a) => a.name),
        object: (f.type.ofType?.kind ?? f.type.kind) === 'OBJECT' || f.type.kind === 'LIST',
      });
  }
  return out;
}
