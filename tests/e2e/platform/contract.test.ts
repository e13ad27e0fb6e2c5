// The contract walk (issue 27): every operation of /openapi.json is called on a live platform, and every answer's
// status, content type and JSON body are checked against the document with a JSON-Schema validator
// (@cfworker/json-schema, draft 2020-12 as OpenAPI 3.1 uses). An answer whose status or content type the document
// does not list fails the test. Each operation gets the calls every route can be made to answer: no credential
// (401 where one is needed), a bad credential (401 everywhere: every route checks one that is sent), the wrong kind
// of credential (403), an unknown id (404), a malformed body (400), a body over the limit (413), a body of a media type
// no route takes (415), and for form endpoints a repeated field and a JSON array; then a success for every operation
// (a tenant's life from signup to deletion with MFA and mail links through a real SMTP sink, data, storage, realtime,
// functions and event deliveries, the identity provider's flows and hosted pages, the documents, health).
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { Validator } from '@cfworker/json-schema';
import { startOneProcess, TEST_SECRET, type TestPlatform } from '../../support/platform.ts';
import { startPgServer } from '../../support/pg-servers.ts';
import { createSecretBox } from '../../../platform/crypto.ts';
import { withPgClient } from '../../../platform/pg-pool.ts';
import { waitFor } from '../../support/wait-for.ts';
import { nextCode } from '../../support/totp.ts';
import { startMailbox, tokenOf } from '../identity/identity-fixtures.ts';

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
/** The install's bootstrap operator key: the admin API's credential. */
const OPERATOR_KEY = `top_${'c'.repeat(43)}`;
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
  /** An event stream: read its first event, then end the request. */
  stream?: boolean;
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
  const abort = new AbortController();
  const res = await fetch(`${p.url}${url}${opts.query ? `?${opts.query}` : ''}`, {
    method,
    headers,
    redirect: 'manual',
    signal: abort.signal,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  let text: string;
  if (opts.stream && res.ok && /event-stream/.test(res.headers.get('content-type') ?? '')) {
    // The subscription stays open: its first chunk is enough, then the request ends.
    const reader = res.body!.getReader();
    text = new TextDecoder().decode((await reader.read()).value);
    abort.abort();
  } else text = await res.text();
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

const BODY_LIMIT = 16_384;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
let tenant: string;
let otherTenant: string;
let apiKey: string;
let projectId: string;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
/** The project's default OIDC client, an end-user's access token and two executions, from the first success calls. */
let client: { client_id: string; client_secret: string };
let userToken: string;
const executions: string[] = [];

beforeAll(async () => {
  mailbox = await startMailbox();
  // The project's own SMTP server (the e-mail config's test) is the loopback mailbox: the operator allows it here.
  // A small JSON body limit, so that every JSON route's 413 is cheap to reach.
  p = await startOneProcess({
    TESSERA_OPERATOR_KEY: OPERATOR_KEY,
    TESSERA_SMTP_URL: mailbox.url,
    TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true',
    TESSERA_BODY_LIMIT: String(BODY_LIMIT),
  });
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
  await mailbox?.close();
});

/** The credential of the kind an operation asks for, and one of another kind. */
function credentials(op: Operation): { right?: CallOpts; wrong?: CallOpts } {
  const kinds = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (kinds.length === 0) return {};
  if (kinds.includes('apiKey')) return { right: { apiKey }, wrong: { token: tenant } };
  // The operator's admin API: an operator key, and a tenant token is the wrong kind.
  if (ops.find((o) => o.op === op)!.path.startsWith('/admin/api/v1/'))
    return { right: { token: OPERATOR_KEY }, wrong: { token: tenant } };
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
        // Sent without its body: a route that needs one may refuse the body (400) before it looks the id up.
        want(`${name} with an unknown id`, r.status, json ? (x) => x === 404 || x === 400 : 404);
      }
      // A form endpoint (OAuth, the hosted pages) given a body it cannot take: a repeated parameter, a JSON array.
      if (op.requestBody && 'application/x-www-form-urlencoded' in op.requestBody.content) {
        await call(
          method,
          path,
          params,
          { type: 'application/x-www-form-urlencoded', raw: 'a=1&a=2' },
          'repeated form field',
        );
        const r = await call(method, path, params, { raw: '[1,2]' }, 'a JSON array for a form');
        want(`${name} with a JSON array for a form`, r.status, (s) => s >= 400 && s < 500);
      }
      if (json && right) {
        const r = await call(method, path, params, { ...right, raw: '{"not json' }, 'malformed JSON body');
        want(`${name} with malformed JSON`, r.status, 400);
        const big = await call(
          method,
          path,
          params,
          { ...right, body: { pad: 'x'.repeat(BODY_LIMIT) } },
          'body too large',
        );
        want(`${name} with a body over the limit`, big.status, 413);
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
    client = (clients.body as { oidc_clients: { client_id: string; client_secret: string }[] }).oidc_clients[0]!;
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
    // A script of several statements, the schema (JSON and the SQL script) and migrations
    await call(
      'POST',
      '/v1/rawSQL',
      {},
      { ...k, body: { sql: 'create table walk_script (id int); insert into walk_script values (1)' } },
      'success',
    );
    await call('GET', '/v1/schema', {}, k, 'success');
    const dump = await call('GET', '/v1/schema', {}, { ...k, query: 'format=sql' }, 'success');
    expect(dump.status).toBe(200);
    await call('GET', '/v1/migrations', {}, k, 'success');
    await call('GET', '/v1/usage', {}, k, 'success');
    await call(
      'POST',
      '/v1/migrations',
      {},
      { ...k, body: { version: '20261127000000', name: 'walk', sql: 'create table walked (id int primary key)' } },
      'success',
    );
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
    userToken = (token.body as { access_token: string }).access_token;
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
    // Realtime: a subscription over server-sent events (GET and POST), a query as JSON
    const sub = 'subscription { dataChanges(table: "items") { table operation } }';
    const sse = { ...k, stream: true, headers: { accept: 'text/event-stream' } };
    const got = await call('GET', '/realtime', {}, { ...sse, query: `query=${encodeURIComponent(sub)}` }, 'success');
    expect([got.status, got.type]).toEqual([200, 'text/event-stream']);
    const posted = await call('POST', '/realtime', {}, { ...sse, body: { query: sub } }, 'success');
    expect([posted.status, posted.type]).toEqual([200, 'text/event-stream']);
    await call('POST', '/realtime', {}, { ...k, body: { query: '{ realtime }' } }, 'a query');
    await call('POST', '/realtime', {}, { ...k, body: { query: '{ nope }' } }, 'an invalid query');
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

  it('answers the success of every other operation, each as documented', async () => {
    const k = { apiKey };
    const t = { token: tenant };
    const ok = async (method: string, path: string, params: Record<string, string>, opts: CallOpts) => {
      const a = await call(method, path, params, opts, 'success');
      if (a.status >= 400)
        problems.push(`${method} ${path} (success call) answered ${a.status}: ${a.text.slice(0, 300)}`);
      return a.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    const form = (fields: Record<string, string>) => ({
      type: 'application/x-www-form-urlencoded',
      raw: new URLSearchParams(fields).toString(),
    });
    const P = '/auth/api/v1/projects/{id}';
    const id = { id: projectId };

    // Tenant management: a project's settings and OIDC clients, a spare project's keys and deletion
    await ok('PUT', P, id, { ...t, body: { name: 'Contract project' } });
    await ok('PUT', `${P}/cors`, id, { ...t, body: { allowed_origins: ['https://app.example.com'] } });
    await ok('PUT', `${P}/branding`, id, {
      ...t,
      body: { brand_color: '#123456', hosted_sign_up: true, hosted_password_reset: true },
    });
    await ok('POST', `${P}/publications`, id, { ...t, body: { table: 'items', enabled: false } });
    const redirect = 'https://app.example.com/callback';
    const web = (await ok('POST', `${P}/oidc-clients`, id, { ...t, body: { name: 'Web', redirect_uris: [redirect] } }))
      .oidc_client as { client_id: string; client_secret: string };
    const spareClient = (await ok('POST', `${P}/oidc-clients`, id, { ...t, body: { name: 'Spare' } })).oidc_client;
    const c = { id: projectId, client_id: spareClient.client_id as string };
    await ok('PUT', `${P}/oidc-clients/{client_id}`, c, { ...t, body: { name: 'Spare client' } });
    await ok('POST', `${P}/oidc-clients/{client_id}/rotate-secret`, c, t);
    await ok('DELETE', `${P}/oidc-clients/{client_id}`, c, t);
    const spare = (await ok('POST', '/auth/api/v1/projects', {}, { ...t, body: { name: 'Spare' } })).project;
    await ok('POST', `${P}/regenerate-key`, { id: spare.id }, t);
    await ok('POST', `${P}/regenerate-publishable-key`, { id: spare.id }, t);
    await ok('DELETE', P, { id: spare.id }, t);

    // A tenant account's whole life: sessions, refresh, MFA, password and e-mail changes, reset, deletion
    const email = 'life@example.com';
    const pw = 'a long password';
    await ok('POST', '/auth/api/v1/tenants/signup', {}, { body: { email, password: pw } });
    const login = async (password = pw) =>
      (await ok('POST', '/auth/api/v1/tenant/login', {}, { body: { email, password } })) as {
        access_token: string;
        refresh_token: string;
      };
    const first = await login();
    const second = await login();
    const me = { token: first.access_token };
    await ok('POST', '/auth/api/v1/tenant/refresh', {}, { body: { refresh_token: second.refresh_token } });
    const sessions = (await ok('GET', '/auth/api/v1/tenant/sessions', {}, me)).sessions as {
      id: string;
      current: boolean;
    }[];
    const other = sessions.find((x) => !x.current)!;
    await ok('DELETE', '/auth/api/v1/tenant/sessions/{id}', { id: other.id }, me);
    await ok('POST', '/auth/api/v1/tenant/logout', {}, { token: (await login()).access_token });
    await login();
    await ok('POST', '/auth/api/v1/tenant/sessions/revoke', {}, { ...me, body: { keep_current: true } });
    const mfa = await ok('POST', '/auth/api/v1/tenant/mfa/enroll', {}, me);
    let code = await nextCode(mfa.secret);
    await ok('POST', '/auth/api/v1/tenant/mfa/verify', {}, { ...me, body: { code } });
    code = await nextCode(mfa.secret, code);
    await ok('POST', '/auth/api/v1/tenant/mfa/recovery-codes', {}, { ...me, body: { code } });
    code = await nextCode(mfa.secret, code);
    await ok('POST', '/auth/api/v1/tenant/mfa/disable', {}, { ...me, body: { code } });
    await ok(
      'POST',
      '/auth/api/v1/tenant/password',
      {},
      { ...me, body: { current_password: pw, new_password: 'another long password' } },
    );
    await ok(
      'POST',
      '/auth/api/v1/tenant/email',
      {},
      { ...me, body: { new_email: 'life2@example.com', current_password: 'another long password' } },
    );
    const changeMail = await mailbox.waitFor('life2@example.com', /token=/);
    await ok('POST', '/auth/api/v1/tenant/email/confirm', {}, { body: { token: tokenOf(changeMail) } });
    await ok('POST', '/auth/api/v1/tenant/password/forgot', {}, { body: { email: 'life2@example.com' } });
    const resetMail = await mailbox.waitFor('life2@example.com', /token=/);
    await ok(
      'POST',
      '/auth/api/v1/tenant/password/reset',
      {},
      { body: { token: tokenOf(resetMail), new_password: pw } },
    );
    const last = (
      await ok('POST', '/auth/api/v1/tenant/login', {}, { body: { email: 'life2@example.com', password: pw } })
    ).access_token as string;
    await ok(
      'POST',
      '/auth/api/v1/tenant/delete',
      {},
      { token: last, body: { confirm: 'life2@example.com', current_password: pw } },
    );

    // Data: a vector search (an exact scan over real[])
    await ok(
      'POST',
      '/v1/rawSQL',
      {},
      { ...k, body: { sql: 'create table docs (id serial primary key, embedding real[])' } },
    );
    await ok(
      'POST',
      '/v1/insert',
      {},
      { ...k, body: { table: 'docs', values: [{ embedding: [1, 0, 0] }, { embedding: [0, 1, 0] }] } },
    );
    await ok(
      'POST',
      '/v1/vectorSearch',
      {},
      { ...k, body: { table: 'docs', column: 'embedding', vector: [1, 0.1, 0], k: 1 } },
    );

    // Storage policies
    const policy = { name: 'public docs', folder: 'public', operations: ['read'], principal: 'public' };
    const p1 = (await ok('POST', '/storage/api/v1/storage/policies', {}, { ...k, body: policy })).policy;
    await ok('DELETE', '/storage/api/v1/storage/policies/{id}', { id: p1.id }, k);
    const p2 = (await ok('POST', '/storage/api/v1/storage/policies', {}, { ...k, body: policy })).policy;
    await ok('DELETE', '/storage/api/v1/storage/policies', {}, { ...k, query: `id=${p2.id}` });

    // Edge functions: a function's life, secrets, webhooks and their public receivers, hooks, cron, e-mail, executions,
    // event subscriptions and their deliveries
    const E = '/edge/api/v1';
    const echo = {
      name: 'echo',
      steps: [{ name: 'echo', kind: 'Transform', expression: '{{ input.body }}', return: true }],
    };
    const fn = (
      await ok(
        'POST',
        `${E}/functions`,
        {},
        {
          ...k,
          body: {
            name: 'echo',
            steps: [{ name: 'echo', kind: 'Transform', expression: '{{ input.body }}', return: true }],
          },
        },
      )
    ).function;
    await ok('GET', `${E}/functions/{id}`, { id: fn.id }, k);
    await ok('PUT', `${E}/functions/{id}`, { id: fn.id }, { ...k, body: { ...echo, description: 'Echoes' } });
    await ok('POST', `${E}/secrets`, {}, { ...k, body: { name: 'TOKEN', value: 'shh' } });
    await ok('DELETE', `${E}/secrets`, {}, { ...k, query: 'name=TOKEN' });
    const hook = (await ok('POST', `${E}/webhooks`, {}, { ...k, body: { function: 'echo', slug: 'echo' } })).webhook;
    await ok('POST', '/webhooks/{project_id}/{slug}', { project_id: projectId, slug: 'echo' }, { body: { a: 1 } });
    await ok('POST', '/edge/webhooks/{project_id}/{slug}', { project_id: projectId, slug: 'echo' }, { body: { a: 2 } });
    await ok('DELETE', `${E}/webhooks`, {}, { ...k, query: `id=${hook.id}` });
    const dbHook = (
      await ok(
        'POST',
        `${E}/hooks`,
        {},
        {
          ...k,
          body: { table: 'items', timing: 'after', events: ['insert'], function: 'echo' },
        },
      )
    ).hook;
    await ok('DELETE', `${E}/hooks`, {}, { ...k, query: `id=${dbHook.id}` });
    const cron = (
      await ok(
        'POST',
        `${E}/cron`,
        {},
        {
          ...k,
          body: { name: 'yearly', schedule: '0 0 1 1 *', function: 'echo', enabled: false },
        },
      )
    ).cron_job;
    await ok('PUT', `${E}/cron/{id}`, { id: cron.id }, { ...k, body: { schedule: '0 0 2 1 *' } });
    await ok('DELETE', `${E}/cron`, {}, { ...k, query: `id=${cron.id}` });
    const tpl = (
      await ok(
        'POST',
        `${E}/email-templates`,
        {},
        {
          ...k,
          body: { name: 'welcome', subject: 'Hi {{ name }}', text: 'Hello {{ name }}' },
        },
      )
    ).email_template;
    await ok('GET', `${E}/email-templates/{id}`, { id: tpl.id }, k);
    await ok(
      'PUT',
      `${E}/email-templates`,
      {},
      {
        ...k,
        query: `id=${tpl.id}`,
        body: {
          name: 'welcome',
          subject: 'Hello {{ name }}',
          text: 'Hello {{ name }}',
          html: '<p>Hello {{ name }}</p>',
        },
      },
    );
    await ok(
      'POST',
      `${E}/email-templates/{id}/preview`,
      { id: tpl.id },
      { ...k, body: { variables: { name: 'Ada' } } },
    );
    await ok('DELETE', `${E}/email-templates`, {}, { ...k, query: `id=${tpl.id}` });
    await ok(
      'POST',
      `${E}/email-config`,
      {},
      {
        ...k,
        body: { host: '127.0.0.1', port: Number(new URL(mailbox.url).port), from: 'app@example.com' },
      },
    );
    await ok('POST', '/edge/api/v1/email-config/test', {}, { ...k, body: { to: 'someone@example.com' } });
    await ok('DELETE', `${E}/email-config`, {}, k);
    await ok('POST', `${E}/invoke/{name}`, { name: 'echo' }, { ...k, body: { n: 1 } });
    const list = (await ok('GET', `${E}/executions`, {}, k)).executions as { id: string }[];
    executions.push(...list.map((x) => x.id));
    await ok('GET', `${E}/executions/{id}/events`, { id: executions[0]! }, k);
    await ok('GET', `${E}/executions/{id}/diff/{other}`, { id: executions[0]!, other: executions[1]! }, k);
    await ok('POST', `${E}/executions/{id}/replay`, { id: executions[0]! }, { ...k, body: {} });
    const sub = {
      url: 'https://hooks.example.com/tessera',
      events: ['row.inserted'],
      tables: ['items'],
    };
    const s1 = (await ok('POST', `${E}/event-subscriptions`, {}, { ...k, body: sub })).event_subscription;
    const S = `${E}/event-subscriptions/{id}`;
    await ok('GET', S, { id: s1.id }, k);
    await ok('PUT', S, { id: s1.id }, { ...k, body: { description: 'Orders' } });
    await ok('POST', `${S}/rotate-secret`, { id: s1.id }, k);
    const delivery = (await ok('POST', `${S}/test`, { id: s1.id }, k)).delivery;
    await ok('GET', `${S}/deliveries`, { id: s1.id }, k);
    await ok('GET', `${S}/deliveries/{delivery_id}`, { id: s1.id, delivery_id: delivery.id }, k);
    // A delivery being attempted answers 409 (documented, checked): redeliver once its attempt has ended.
    await waitFor(
      async () =>
        (
          await call(
            'POST',
            `${S}/deliveries/{delivery_id}/redeliver`,
            { id: s1.id, delivery_id: delivery.id },
            k,
            'success',
          )
        ).status < 400,
      { message: 'a redelivery once the first attempt ended' },
    );
    await ok('DELETE', S, { id: s1.id }, k);
    const s2 = (await ok('POST', `${E}/event-subscriptions`, {}, { ...k, body: sub })).event_subscription;
    await ok('DELETE', `${E}/event-subscriptions`, {}, { ...k, query: `id=${s2.id}` });
    await ok('DELETE', `${E}/functions/{id}`, { id: fn.id }, k);

    // Identity provider: the admin API, an end-user's MFA, password and e-mail flows, token introspection and
    // revocation, the hosted pages, sign-out
    const user = (
      await ok(
        'POST',
        '/admin/users',
        {},
        { ...k, body: { email: 'admin-made@example.com', password: 'a long enough password' } },
      )
    ).user;
    const U = '/admin/users/{id}';
    await ok('GET', U, { id: user.id }, k);
    await ok('PATCH', U, { id: user.id }, { ...k, body: { roles: ['editor'] } });
    await ok('POST', `${U}/disable`, { id: user.id }, k);
    await ok('POST', `${U}/enable`, { id: user.id }, k);
    await ok('POST', `${U}/revoke-sessions`, { id: user.id }, k);
    await ok('POST', `${U}/reset-mfa`, { id: user.id }, k);
    await ok('DELETE', U, { id: user.id }, k);
    const invited = (await ok('POST', '/admin/users/invite', {}, { ...k, body: { email: 'invited@example.com' } }))
      .user;
    await ok('POST', `${U}/invite`, { id: invited.id }, k);
    const u = { token: userToken };
    await ok('POST', '/userinfo', {}, u);
    const umfa = await ok('POST', '/mfa/enroll', {}, u);
    let ucode = await nextCode(umfa.secret);
    await ok('POST', '/mfa/verify', {}, { ...u, body: { code: ucode } });
    ucode = await nextCode(umfa.secret, ucode);
    await ok('POST', '/mfa/disable', {}, { ...u, body: { code: ucode } });
    await ok('POST', '/email/verify/request', {}, u);
    const verify = tokenOf(await mailbox.waitFor('user@example.com', /token=/));
    await ok('GET', '/email/verify/confirm', {}, { query: `token=${verify}` });
    await ok('POST', '/email/verify/confirm', {}, { body: { token: verify } });
    await ok('POST', '/password/reset/request', {}, { ...k, body: { email: 'user@example.com' } });
    const reset = tokenOf(await mailbox.waitFor('user@example.com', /token=/));
    await ok('POST', '/password/reset/confirm', {}, { body: { token: reset, new_password: 'a new long password' } });
    const grant = async (password = 'a new long password') =>
      (await ok(
        'POST',
        '/token',
        {},
        form({
          grant_type: 'password',
          username: 'user@example.com',
          password,
          client_id: client.client_id,
          client_secret: client.client_secret,
          scope: 'openid email',
        }),
      )) as { access_token: string };
    const fresh = await grant();
    await ok(
      'POST',
      '/password/change',
      {},
      {
        token: fresh.access_token,
        body: { current_password: 'a new long password', new_password: 'a new long password 2' },
      },
    );
    const basic = { client_id: client.client_id, client_secret: client.client_secret };
    await ok('POST', '/introspect', {}, form({ token: fresh.access_token, ...basic }));
    await ok('POST', '/revocation', {}, form({ token: fresh.access_token, ...basic }));
    const auth = `response_type=code&client_id=${web.client_id}&redirect_uri=${encodeURIComponent(redirect)}&scope=openid&state=s`;
    const page = await call('GET', '/authorize', {}, { query: auth }, 'success');
    const hidden = Object.fromEntries(
      [...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1]!,
        m[2]!.replace(/&amp;/g, '&'),
      ]),
    );
    await ok(
      'POST',
      '/authorize',
      {},
      form({ ...hidden, email: 'user@example.com', password: 'a new long password 2', action: 'sign_in' }),
    );
    await ok('GET', '/authorize/sign-up', {}, { query: auth });
    await ok(
      'POST',
      '/authorize/sign-up',
      {},
      form({ ...hidden, email: 'signed-up@example.com', password: 'a long enough password' }),
    );
    await ok('GET', '/authorize/forgot-password', {}, { query: auth });
    await ok('POST', '/authorize/forgot-password', {}, form({ ...hidden, email: 'user@example.com' }));
    await ok('GET', '/logout', {}, {});
    await ok('POST', '/logout', {}, { token: (await grant('a new long password 2')).access_token });
    await ok('GET', '/metrics', {}, {});
    await ok('GET', '/openapi.json', {}, {});
    for (const svc of ['auth', 'idp', 'core', 'storage', 'edge']) await ok('GET', `/health/${svc}/readyz`, {}, {});
    expect(problems).toEqual([]);
  }, 120_000);

  it("answers the success of every operation of the operator's admin API, each as documented", async () => {
    const op = { token: OPERATOR_KEY };
    const ok = async (method: string, path: string, params: Record<string, string>, body?: unknown) => {
      const a = await call(method, `/admin/api/v1${path}`, params, { ...op, body }, 'success');
      if (a.status >= 400)
        problems.push(`${method} ${path} (success call) answered ${a.status}: ${a.text.slice(0, 300)}`);
      return a.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    };
    await ok('GET', '/plans', {});
    await ok('POST', '/plans', {}, { id: 'contract', name: 'Contract', limits: { max_projects: 2 } });
    await ok(
      'PATCH',
      '/plans/{id}',
      { id: 'contract' },
      { price_cents_per_month: 100, limits: { max_projects: null } },
    );
    await ok('DELETE', '/plans/{id}', { id: 'contract' });
    const settings = await ok('GET', '/settings', {});
    await ok('PUT', '/settings/default-plan', {}, { plan_id: settings.default_plan });
    const tenants = await ok('GET', '/tenants', {});
    const tenantId = tenants.tenants[0].id as string;
    await ok('GET', '/tenants/{id}', { id: tenantId });
    await ok('PUT', '/tenants/{id}/plan', { id: tenantId }, { plan_id: tenants.tenants[0].plan.id });
    await ok('POST', '/tenants/{id}/suspend', { id: tenantId }, { reason: 'contract walk' });
    await ok('POST', '/tenants/{id}/resume', { id: tenantId });
    const projects = await ok('GET', '/projects', {});
    const id = projects.projects[0].id as string;
    await ok('GET', '/projects/{id}', { id });
    await ok('POST', '/projects/{id}/suspend', { id }, {});
    await ok('POST', '/projects/{id}/resume', { id });
    await ok('GET', '/audit', {});
    const key = await ok('POST', '/operator-keys', {}, { name: 'contract' });
    await ok('GET', '/operator-keys', {});
    await ok('DELETE', '/operator-keys/{id}', { id: key.id });
    // A second project server: the test's own database is a valid maintenance database on a reachable server.
    await ok('GET', '/servers', {});
    await ok('POST', '/servers', {}, { id: 'contract', url: p.databaseUrl, state: 'read-only' });
    await ok('GET', '/servers/{id}', { id: 'contract' });
    await ok('PATCH', '/servers/{id}', { id: 'contract' }, { weight: 2 });
    await ok('DELETE', '/servers/{id}', { id: 'contract' });
    expect(problems).toEqual([]);
  }, 120_000);

  it('answers the success of the online moves of the admin API (a second project server), each as documented', async () => {
    // A second project server (PostgreSQL 15 of this machine), registered as the fleet registers one.
    const server = await startPgServer();
    try {
      const sealed = createSecretBox(TEST_SECRET, 'data:servers').encrypt(server.url);
      await withPgClient(p.databaseUrl, (c) =>
        c.query(`insert into data_servers (id, url_sealed) values ('contract-b', $1)`, [sealed]),
      );
      const op = { token: OPERATOR_KEY };
      const ok = async (method: string, path: string, params: Record<string, string>, body?: unknown) => {
        const a = await call(method, `/admin/api/v1${path}`, params, { ...op, body }, 'success');
        if (a.status >= 400)
          problems.push(`${method} ${path} (success call) answered ${a.status}: ${a.text.slice(0, 300)}`);
        return a.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      const ended = async () =>
        await waitFor(
          async () => {
            const list = await ok('GET', '/moves', {}, undefined);
            return (list.moves as { state: string }[]).every((m) => m.state === 'done' || m.state === 'failed');
          },
          { timeoutMs: 60_000, intervalMs: 250, message: 'the moves to end' },
        );
      // Queued, then done (or failed, where the server is newer than this machine's pg_dump): a 2xx either way.
      const moved = await ok('POST', '/projects/{id}/move', { id: projectId }, { server: 'contract-b' });
      await ok('GET', '/moves/{id}', { id: moved.move.id });
      await ended();
      await ok('POST', '/servers/{id}/drain', { id: 'contract-b' });
      await ended();
      expect(problems).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('answered a success (2xx, or the redirect of a hosted form) for every operation', () => {
    const without = ops
      .filter(({ op }) => ![...(seen.get(op.operationId) ?? [])].some((s) => s >= 200 && s < 400))
      .map(({ op }) => op.operationId)
      .sort();
    expect(without).toEqual([]);
  });

  it('called every operation of the document', () => {
    const missing = ops.filter(({ op }) => !seen.has(op.operationId)).map(({ method, path }) => `${method} ${path}`);
    expect(missing).toEqual([]);
  });
});
