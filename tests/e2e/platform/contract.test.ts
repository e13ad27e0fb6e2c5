// The contract walk (issue 27): every operation of /openapi.json is called on a live platform, and every answer's
// status, content type and JSON body are checked against the document with a JSON-Schema validator
// (@cfworker/json-schema, draft 2020-12 as OpenAPI 3.1 uses). An answer whose status or content type the document
// does not list fails the test. Each operation gets the calls every route can be made to answer: no credential
// (401 where one is needed), a bad credential (401 everywhere: every route checks one that is sent), the wrong kind
// of credential (403), an unknown id (404), a malformed body (400) and a body of a media type no route takes (415);
// then a scenario of success calls (signup to storage, data, functions, identity, the documents).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { Validator } from '@cfworker/json-schema';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { waitFor } from '../../support/wait-for.ts';

type Json = Record<string, unknown>;
type Operation = {
  operationId: string;
  security?: Json[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Json };
  responses: Record<string, Json>;
};
type Answer = { status: number; type: string; text: string; body: unknown };

let p: TestPlatform;
let doc: { paths: Record<string, Record<string, Operation>>; components: Json };
const ops: { method: string; path: string; op: Operation }[] = [];
/** operationId → statuses seen, each validated. */
const seen = new Map<string, Set<number>>();
const problems: string[] = [];
const validators = new Map<string, Validator>();

/** `#/components/...` references replaced by what they point to (the document has no cycles). */
function deref(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(deref);
  if (!x || typeof x !== 'object') return x;
  const ref = (x as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    let target: unknown = doc;
    for (const part of ref.slice(2).split('/')) target = (target as Json)[part];
    return deref(target);
  }
  return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, deref(v)]));
}

function opOf(method: string, path: string): Operation {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not in /openapi.json`);
  return op;
}

/** Checks one answer against the operation's documented responses; records a problem when it is not documented. */
function check(method: string, path: string, a: Answer, why: string): void {
  const op = opOf(method, path);
  (seen.get(op.operationId) ?? seen.set(op.operationId, new Set()).get(op.operationId)!).add(a.status);
  const where = `${method} ${path} (${why}) answered ${a.status} ${a.type || '(no content type)'}`;
  const response = (deref(
    op.responses[String(a.status)] ?? op.responses[`${String(a.status)[0]}XX`] ?? op.responses.default,
  ) ?? undefined) as { content?: Record<string, { schema?: unknown }> } | undefined;
  if (!response) return void problems.push(`${where}: status not documented (${a.text.slice(0, 200)})`);
  const content = response.content;
  if (!content) {
    if (a.text.length > 0 && a.status !== 302 && a.status !== 304)
      problems.push(`${where}: the document says no body, the answer has ${a.text.length} bytes`);
    return;
  }
  if (a.status === 304) return;
  const media = Object.keys(content).find((m) => m === a.type || m === '*/*');
  if (!media) return void problems.push(`${where}: content type not documented (${Object.keys(content).join(', ')})`);
  if (!/json/.test(a.type)) return;
  const schema = content[media]!.schema;
  if (!schema) return;
  const key = `${op.operationId} ${a.status} ${media}`;
  let v = validators.get(key);
  if (!v) validators.set(key, (v = new Validator(schema as never, '2020-12', false)));
  const r = v.validate(a.body);
  if (!r.valid)
    problems.push(
      `${where}: body does not match the schema: ${r.errors
        .slice(-3)
        .map((e) => `${e.instanceLocation} ${e.error}`)
        .join('; ')} — ${a.text.slice(0, 300)}`,
    );
}

type CallOpts = {
  token?: string;
  apiKey?: string;
  body?: unknown;
  raw?: string | FormData;
  type?: string;
  headers?: Record<string, string>;
  query?: string;
};

/** Calls `method path` (the document's template) with `params` filled in, checks the answer and returns it. */
async function call(
  method: string,
  path: string,
  params: Record<string, string>,
  opts: CallOpts,
  why: string,
): Promise<Answer> {
  const url = path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(params[n] ?? 'missing'));
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
  if (opts.body !== undefined || typeof opts.raw === 'string')
    headers['content-type'] ??= opts.type ?? 'application/json';
  const res = await fetch(`${p.url}${url}${opts.query ? `?${opts.query}` : ''}`, {
    method,
    headers,
    redirect: 'manual',
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  const answer = {
    status: res.status,
    type: (res.headers.get('content-type') ?? '').split(';')[0]!.trim(),
    text,
    body,
  };
  check(method, path, answer, why);
  return answer;
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
let tenant: string;
let otherTenant: string;
let apiKey: string;
let projectId: string;

beforeAll(async () => {
  p = await startOneProcess();
  doc = (await (await fetch(`${p.url}/openapi.json`)).json()) as typeof doc;
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) ops.push({ method: method.toUpperCase(), path, op });
  const signup = async (email: string) => {
    await call('POST', '/auth/api/v1/tenants/signup', {}, { body: { email, password: 'a long password' } }, 'signup');
    return (
      (await call('POST', '/auth/api/v1/tenant/login', {}, { body: { email, password: 'a long password' } }, 'login'))
        .body as { access_token: string }
    ).access_token;
  };
  tenant = await signup('contract@example.com');
  otherTenant = await signup('contract-other@example.com');
  const project = (
    (await call('POST', '/auth/api/v1/projects', {}, { token: tenant, body: { name: 'Contract' } }, 'project'))
      .body as { project: { id: string; api_key: string } }
  ).project;
  apiKey = project.api_key;
  projectId = project.id;
  await waitFor(
    async () =>
      (
        await call(
          'POST',
          '/v1/rawSQL',
          {},
          { apiKey, body: { sql: 'create table if not exists items (id serial primary key, name text unique)' } },
          'setup',
        )
      ).status === 200,
    { message: 'the project database' },
  );
}, 120_000);

afterAll(async () => {
  await p?.close();
});

/** The credential of the kind an operation asks for, and one of another kind. */
function credentials(op: Operation): { right?: CallOpts; wrong?: CallOpts } {
  const kinds = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (kinds.length === 0) return {};
  if (kinds.includes('apiKey')) return { right: { apiKey }, wrong: { token: tenant } };
  // Bearer only: the tenant's rows (an API key is the wrong kind); end-user rows are called without an end-user token.
  if (ops.find((o) => o.op === op)!.path.startsWith('/auth/api/v1/'))
    return { right: { token: tenant }, wrong: { apiKey } };
  return { wrong: { apiKey } };
}

describe('the contract walk: every operation of /openapi.json, every answer checked against it', () => {
  it('answers the refusals every route can give, each as documented', async () => {
    const want = (what: string, status: number, expected: number | ((s: number) => boolean)) => {
      if (typeof expected === 'number' ? status !== expected : !expected(status))
        problems.push(`${what}: answered ${status}, expected ${typeof expected === 'number' ? expected : 'a refusal'}`);
    };
    for (const { method, path, op } of ops) {
      const name = `${method} ${path}`;
      const params = Object.fromEntries(
        (op.parameters ?? []).filter((x) => x.in === 'path').map((x) => [x.name, UNKNOWN]),
      );
      const needsCredential = (op.security?.length ?? 0) > 0 && !op.security!.some((s) => Object.keys(s).length === 0);
      const json = op.requestBody && 'application/json' in op.requestBody.content;
      // A row of the route table (it runs a GraphQL operation): the front door's checks hold for it.
      const row = 'x-graphql-operation' in op;
      const anonymous = await call(method, path, params, { body: json ? {} : undefined }, 'no credential');
      if (needsCredential) want(`${name} with no credential`, anonymous.status, 401);
      const bad = await call(
        method,
        path,
        params,
        { headers: { authorization: 'Bearer not-a-token' } },
        'bad credential',
      );
      if (row) want(`${name} with a bad credential`, bad.status, 401);
      const { right, wrong } = credentials(op);
      if (wrong && needsCredential) {
        const r = await call(
          method,
          path,
          params,
          { ...wrong, body: json ? {} : undefined },
          'wrong kind of credential',
        );
        // The OAuth wire endpoints (/userinfo) answer RFC 6750's 401 to anything but their bearer token.
        want(`${name} with the wrong kind of credential`, r.status, row ? 403 : (s) => s === 401 || s === 403);
      }
      if (right && Object.keys(params).length > 0) {
        const r = await call(method, path, params, { ...right }, 'unknown id');
        want(`${name} with an unknown id`, r.status, (s) => s === 404 || s === 400);
      }
      if (json && right) {
        const r = await call(method, path, params, { ...right, raw: '{"not json' }, 'malformed JSON body');
        want(`${name} with malformed JSON`, r.status, 400);
        const x = await call(method, path, params, { ...right, raw: '<a/>', type: 'application/xml' }, 'XML body');
        want(`${name} with an XML body`, x.status, 415);
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('answers the success of each part of the platform, each as documented', async () => {
    const k = { apiKey };
    const t = { token: tenant };
    // Tenant management
    await call('GET', '/auth/api/v1/tenant', {}, t, 'success');
    await call('GET', '/auth/api/v1/projects', {}, t, 'success');
    await call('GET', '/auth/api/v1/projects/{id}', { id: projectId }, t, 'success');
    expect(
      (
        await call(
          'GET',
          '/auth/api/v1/projects/{id}',
          { id: projectId },
          { token: otherTenant },
          "another tenant's project",
        )
      ).status,
    ).toBe(404);
    await call('GET', '/auth/api/v1/projects/{id}/cors', { id: projectId }, t, 'success');
    await call('GET', '/auth/api/v1/projects/{id}/branding', { id: projectId }, t, 'success');
    await call('GET', '/auth/api/v1/projects/{id}/publications', { id: projectId }, t, 'success');
    await call('GET', '/auth/api/v1/projects/{id}/requests', { id: projectId }, t, 'success');
    const clients = await call('GET', '/auth/api/v1/projects/{id}/oidc-clients', { id: projectId }, t, 'success');
    const client = (clients.body as { oidc_clients: { client_id: string; client_secret: string }[] }).oidc_clients[0]!;
    await call('GET', '/auth/api/v1/tenant/sessions', {}, t, 'success');
    await call('GET', '/auth/api/v1/plans', {}, {}, 'success');
    expect(
      (
        await call(
          'POST',
          '/auth/api/v1/tenant/login',
          {},
          { body: { email: 'contract@example.com', password: 'wrong password' } },
          'wrong password',
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await call(
          'POST',
          '/auth/api/v1/tenant/refresh',
          {},
          { body: { refresh_token: 'nope' } },
          'unknown refresh token',
        )
      ).status,
    ).toBe(401);
    // Data API at /v1
    expect(
      (
        await call(
          'POST',
          '/v1/insert',
          {},
          { ...k, body: { table: 'items', values: [{ name: 'a' }, { name: 'b' }] } },
          'success',
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await call(
          'POST',
          '/v1/insert',
          {},
          { ...k, body: { table: 'items', values: { name: 'a' } } },
          'unique violation',
        )
      ).status,
    ).toBe(409);
    await call('POST', '/v1/find', {}, { ...k, body: { table: 'items', where: { name: 'a' } } }, 'success');
    await call('POST', '/v1/findOne', {}, { ...k, body: { table: 'items', where: { name: 'zzz' } } }, 'success');
    await call(
      'POST',
      '/v1/update',
      {},
      { ...k, body: { table: 'items', where: { name: 'b' }, set: { name: 'c' } } },
      'success',
    );
    await call(
      'POST',
      '/v1/aggregate',
      {},
      { ...k, body: { table: 'items', aggregates: [{ fn: 'count', column: 'id', as: 'n' }] } },
      'success',
    );
    await call(
      'POST',
      '/v1/transaction',
      {},
      { ...k, body: { operations: [{ action: 'find', table: 'items' }] } },
      'success',
    );
    await call('POST', '/v1/delete', {}, { ...k, body: { table: 'items', where: { name: 'c' } } }, 'success');
    await call('POST', '/v1/rawSQL', {}, { ...k, body: { sql: 'select 1 as one' } }, 'success');
    await call('GET', '/v1/publication', {}, k, 'success');
    await call('POST', '/v1/publication', {}, { ...k, body: { table: 'items', enabled: true } }, 'success');
    expect(
      (await call('POST', '/v1/find', {}, { ...k, body: { table: 'no_such_table' } }, 'unknown table')).status,
    ).toBeGreaterThanOrEqual(400);
    // Storage: a streamed upload, its metadata, the bytes, the listings, the delete
    const form = new FormData();
    form.append('folder', 'docs');
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
    const up = await call('POST', '/storage/api/v1/storage/upload', {}, { ...k, raw: form }, 'success');
    expect(up.status).toBe(201);
    const objectId = (up.body as { object: { id: string } }).object.id;
    await call('POST', '/storage/api/v1/storage/upload/confirm', {}, { ...k, body: { id: objectId } }, 'success');
    await call('GET', '/storage/api/v1/storage/objects/{id}', { id: objectId }, k, 'success');
    const bytes = await call('GET', '/storage/api/v1/storage/download/{id}', { id: objectId }, k, 'success');
    expect([bytes.status, bytes.text]).toEqual([200, 'hello']);
    expect(
      (await call('GET', '/storage/api/v1/storage/objects/{id}', { id: objectId }, {}, 'visitor, no policy')).status,
    ).toBeGreaterThanOrEqual(400);
    expect(
      (
        await call(
          'GET',
          '/storage/api/v1/storage/objects',
          {},
          { headers: { 'x-api-key': 'tsk_wrong' } },
          'bad key on a public route',
        )
      ).status,
    ).toBe(401);
    await call('GET', '/storage/api/v1/storage/objects', {}, k, 'success');
    await call('GET', '/storage/api/v1/storage/folders', {}, k, 'success');
    await call('GET', '/storage/api/v1/storage/usage', {}, k, 'success');
    await call('GET', '/storage/api/v1/storage/policies', {}, k, 'success');
    expect((await call('DELETE', '/storage/api/v1/storage/objects/{id}', { id: objectId }, k, 'success')).status).toBe(
      204,
    );
    // Edge functions: sync and async invokes (202), the executions
    const fn = {
      name: 'double',
      steps: [{ name: 'double', kind: 'Transform', expression: '{{ input.body.n * 2 }}', return: true }],
    };
    expect((await call('POST', '/edge/api/v1/functions', {}, { ...k, body: fn }, 'success')).status).toBe(201);
    await call('GET', '/edge/api/v1/functions', {}, k, 'success');
    expect(
      (await call('POST', '/edge/api/v1/invoke/{name}', { name: 'double' }, { ...k, body: { n: 2 } }, 'success'))
        .status,
    ).toBe(200);
    const queued = await call(
      'POST',
      '/edge/api/v1/invoke/{name}',
      { name: 'double' },
      { ...k, body: { n: 3 }, query: 'async=true' },
      'async',
    );
    expect(queued.status).toBe(202);
    await call('GET', '/edge/api/v1/executions', {}, k, 'success');
    await call(
      'GET',
      '/edge/api/v1/executions/{id}',
      { id: (queued.body as { execution_id: string }).execution_id },
      k,
      'success',
    );
    for (const list of [
      'secrets',
      'webhooks',
      'hooks',
      'cron',
      'email-templates',
      'email-config',
      'event-subscriptions',
      'stats',
    ])
      await call('GET', `/edge/api/v1/${list}`, {}, k, 'success');
    // Identity provider: discovery, keys (application/jwk-set+json), an end-user's tokens and profile
    await call('GET', '/.well-known/openid-configuration', {}, {}, 'success');
    const jwks = await call('GET', '/jwks.json', {}, {}, 'success');
    expect([jwks.status, jwks.type]).toEqual([200, 'application/jwk-set+json']);
    expect(
      (
        await call(
          'POST',
          '/register',
          {},
          { ...k, body: { email: 'user@example.com', password: 'a long enough password' } },
          'success',
        )
      ).status,
    ).toBe(201);
    const token = await call(
      'POST',
      '/token',
      {},
      {
        type: 'application/x-www-form-urlencoded',
        raw: new URLSearchParams({
          grant_type: 'password',
          username: 'user@example.com',
          password: 'a long enough password',
          client_id: client.client_id,
          client_secret: client.client_secret,
          scope: 'openid email',
        }).toString(),
      },
      'success',
    );
    expect(token.status).toBe(200);
    const userToken = (token.body as { access_token: string }).access_token;
    await call('GET', '/userinfo', {}, { token: userToken }, 'success');
    expect((await call('GET', '/admin/users', {}, { token: userToken }, 'an end-user on an admin route')).status).toBe(
      403,
    );
    await call('GET', '/admin/users', {}, k, 'success');
    await call(
      'GET',
      '/authorize',
      {},
      { query: `client_id=${client.client_id}&redirect_uri=https://nowhere.invalid/cb&response_type=code` },
      'unknown redirect uri',
    );
    await call('GET', '/password/reset/confirm', {}, { query: 'token=x' }, 'success');
    // The documents, GraphQL over GET (CSRF prevention: a GET needs a preflight-forcing header) and health
    await call('GET', '/docs', {}, {}, 'success');
    await call('GET', '/livez', {}, {}, 'success');
    await call('GET', '/health', {}, {}, 'success');
    const q = `query=${encodeURIComponent('{ plans { id } }')}`;
    expect((await call('GET', '/graphql', {}, { query: q }, 'GET without a preflight header')).status).toBe(400);
    const ok = await call(
      'GET',
      '/graphql',
      {},
      { query: q, headers: { 'apollo-require-preflight': 'true' } },
      'success',
    );
    expect([ok.status, Array.isArray((ok.body as { data: { plans: unknown[] } }).data.plans)]).toEqual([200, true]);
    await call('POST', '/graphql', {}, { body: { query: '{ plans { id } }' } }, 'success');
    expect(problems).toEqual([]);
  }, 120_000);

  it('called every operation of the document', () => {
    const missing = ops.filter(({ op }) => !seen.has(op.operationId)).map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });
});
