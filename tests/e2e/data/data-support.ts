// Helpers of the data API end-to-end tests: a signed-in tenant, projects created through the tenant
// REST API (usable at once: the first data call makes the project's database if the event has not yet).
import pg from 'pg';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { client, type Res } from '../../support/http.ts';
import { dropInstallation } from '../../support/database.ts';

export type Call = ReturnType<typeof client>;
export type DataProject = { id: string; apiKey: string; token: string };

let counter = 0;

/** Signs up and signs in a fresh tenant; answers its access token. */
export async function signIn(call: Call): Promise<string> {
  const email = `data-${Date.now()}-${counter++}@example.com`;
  const signup = await call('POST', '/auth/api/v1/tenants/signup', {
    body: { email, password: 'correct horse battery', name: 'Data' },
  });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.body)}`);
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'correct horse battery' } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  return login.body.access_token as string;
}

/** Creates a project through the tenant API (usable at once: its first data call makes its database if needed). */
export async function createProject(call: Call, token: string, name = 'data test'): Promise<DataProject> {
  const res = await call('POST', '/auth/api/v1/projects', { token, body: { name } });
  if (res.status !== 201) throw new Error(`create project: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.project.id as string, apiKey: res.body.project.api_key as string, token };
}

/** POST /v1/<action> with the project's key. */
export function dataCall(call: Call, apiKey: string) {
  return async (action: string, body: unknown): Promise<Res> => await call('POST', `/v1/${action}`, { apiKey, body });
}

/** Two projects of two new tenants, named `names`, and their data-API callers (dataCall). */
export async function twoProjects(call: Call, names: [string, string]) {
  const a = await createProject(call, await signIn(call), names[0]);
  const b = await createProject(call, await signIn(call), names[1]);
  return { a, b, dataA: dataCall(call, a.apiKey), dataB: dataCall(call, b.apiKey) };
}

/** Publishes the table's changes to realtime subscribers (the tenant API). */
export async function publish(call: Call, project: DataProject, table: string): Promise<void> {
  const res = await call('POST', `/auth/api/v1/projects/${project.id}/publications`, {
    token: project.token,
    body: { table, enabled: true },
  });
  if (res.status !== 200) throw new Error(`publish ${table}: ${res.status} ${JSON.stringify(res.body)}`);
}

/**
 * A graphql-ws client of `base`'s /realtime with `connectionParams` (credentials); connects at its first subscription,
 * never retries. `headers` go on the upgrade request (a browser's `Origin`).
 */
export function wsClient(
  base: string,
  connectionParams: Record<string, unknown>,
  headers: Record<string, string> = {},
): Client {
  return createClient({
    url: `${base.replace('http', 'ws')}/realtime`,
    webSocketImpl: class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers });
      }
    },
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
}

/**
 * Opens a GraphQL subscription over SSE (POST /realtime) with the API key; `text()` is all the stream sent so far,
 * `close()` ends the subscription and waits for the reading to stop.
 */
export async function sseText(
  base: string,
  apiKey: string,
  query: string,
): Promise<{ status: number; text: () => string; close: () => Promise<void> }> {
  const abort = new AbortController();
  const res = await fetch(`${base}/realtime`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': apiKey },
    body: JSON.stringify({ query }),
    signal: abort.signal,
  });
  let text = '';
  const reading = (async () => {
    if (!res.body) return;
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    text: () => text,
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}

/**
 * Drops the databases and roles a test database's projects left on the shared server (they are cluster-wide).
 * Closing a platform started by tests/support/platform.ts does this already; this is for platforms a test started itself.
 */
export async function dropLeftoverRoles(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const dbName = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await dropInstallation(admin, dbName);
  } finally {
    await admin.end();
  }
}

/**
 * Realtime subscriptions open on the process serving `url` (its `tessera_realtime_subscribers` gauge): a WebSocket
 * subscription counts once it listens, and graphql-ws itself says nothing when that is. `gauge` reads another of its
 * realtime gauges (`tessera_realtime_subscribers_elsewhere`: what the other data processes reported).
 */
export async function realtimeSubscribers(url: string, gauge = 'tessera_realtime_subscribers'): Promise<number> {
  const metrics = new URL('/metrics', url);
  const text = await (await fetch(metrics)).text();
  const m = new RegExp(`^${gauge}(?:\\{[^}]*\\})? (\\d+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${gauge} in ${metrics.href}`);
  return Number(m[1]);
}

/**
 * Connects `ws` (its first subscription, to `query`) and answers how the connection went: `['connected']` once the
 * server acknowledged `connection_init`, else `['closed', code]`.
 */
export function connectOutcome(ws: Client, query: string): Promise<['connected'] | ['closed', number | undefined]> {
  return new Promise((resolve) => {
    ws.on('connected', () => resolve(['connected']));
    ws.on('closed', (event) => resolve(['closed', (event as { code?: number }).code]));
    ws.subscribe({ query }, { next: () => undefined, error: () => undefined, complete: () => undefined });
  });
}
