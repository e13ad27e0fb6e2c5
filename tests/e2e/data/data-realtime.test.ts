// Realtime end to end: publications toggled with the project key (one source of truth with the tenant
// routes), changes streamed over SSE and graphql-ws, only to the project's own subscribers, and
// nothing more once the table is turned off.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import {
  dataCall,
  dropLeftoverRoles,
  realtimeSubscribers,
  twoProjects,
  wsClient,
  type Call,
  type DataProject,
} from './data-support.ts';
import { newProject, passwordGrant, registerUser } from '../identity/identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actionsAndSseRealtime } from './data-flows.ts';

type Change = {
  table: string;
  operation: string;
  row: Record<string, unknown> | null;
  old: Record<string, unknown> | null;
};

let platform: TestPlatform;
let call: Call;
let a: DataProject;
let b: DataProject;
let dataA: ReturnType<typeof dataCall>;
let dataB: ReturnType<typeof dataCall>;
let databaseUrl: string;

const SUBSCRIPTION = 'subscription($t: String) { dataChanges(table: $t) { table operation row old } }';

/** Opens an SSE subscription; collects each change until closed. */
async function subscribeSse(headers: Record<string, string>, table?: string) {
  const abort = new AbortController();
  const res = await fetch(`${platform.url}/realtime`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query: SUBSCRIPTION, variables: { t: table ?? null } }),
    signal: abort.signal,
  });
  const changes: Change[] = [];
  const errors: unknown[] = [];
  if (res.status === 200 && res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let idx: number;
          while ((idx = buffer.indexOf('\n\n')) >= 0) {
            const chunk = buffer.slice(0, idx);
            buffer = buffer.slice(idx + 2);
            const data = chunk.split('\n').find((l) => l.startsWith('data:'));
            if (!data || !chunk.includes('event: next')) continue;
            const payload = JSON.parse(data.slice(5)) as { data?: { dataChanges: Change }; errors?: unknown[] };
            if (payload.data) changes.push(payload.data.dataChanges);
            if (payload.errors) errors.push(...payload.errors);
          }
        }
      } catch {
        // aborted
      }
    })();
  }
  return {
    status: res.status,
    changes,
    errors,
    close: () => abort.abort(),
    body: res.status === 200 ? undefined : await res.json(),
  };
}

const triggerCount = async (table: string): Promise<number> =>
  (
    await dataA('rawSQL', {
      sql: 'select count(*)::int as n from information_schema.triggers where event_object_table = $1',
      params: [table],
    })
  ).body.rows[0].n;

beforeAll(async () => {
  platform = await startOneProcess();
  databaseUrl = platform.tessera!.config.databaseUrl!;
  call = client(platform.url);
  ({ a, b, dataA, dataB } = await twoProjects(call, ['realtime a', 'realtime b']));
  for (const d of [dataA, dataB])
    expect((await d('rawSQL', { sql: 'create table items (id serial primary key, name text not null)' })).status).toBe(
      200,
    );
}, 60_000);

afterAll(async () => {
  await platform?.close();
  if (databaseUrl) await dropLeftoverRoles(databaseUrl);
});

describe('publications', () => {
  it('are read and toggled with the project key, the same switches as the tenant routes', async () => {
    const set = await call('POST', '/v1/publication', { apiKey: a.apiKey, body: { table: 'items', enabled: true } });
    expect(set.status).toBe(200);
    expect(set.body.publication).toMatchObject({ table: 'items', enabled: true });
    const list = await call('GET', '/v1/publication', { apiKey: a.apiKey });
    expect(list.body.publications).toEqual([expect.objectContaining({ table: 'items', enabled: true })]);
    const tenant = await call('GET', `/auth/api/v1/projects/${a.id}/publications`, { token: a.token });
    expect(tenant.body.publications).toEqual(list.body.publications);
    expect((await call('GET', '/v1/publication', { apiKey: b.apiKey })).body.publications).toEqual([]);
    await waitFor(async () => (await triggerCount('items')) > 0, { message: 'realtime trigger' });
  });

  it('refuses bad bodies and other credentials', async () => {
    expect((await call('POST', '/v1/publication', { apiKey: a.apiKey, body: { enabled: true } })).status).toBe(400);
    expect(
      (await call('POST', '/v1/publication', { apiKey: a.apiKey, body: { table: 'a.b', enabled: true } })).status,
    ).toBe(400);
    expect(
      (await call('POST', '/v1/publication', { apiKey: a.apiKey, body: { table: 'items', enabled: 'yes' } })).status,
    ).toBe(400);
    expect((await call('GET', '/v1/publication')).status).toBe(401);
    expect((await call('GET', '/v1/publication', { apiKey: 'tsk_nope' })).status).toBe(401);
    expect(
      (await call('POST', '/v1/publication', { token: a.token, body: { table: 'items', enabled: true } })).status,
    ).toBe(403);
  });
});

describe('realtime over SSE', () => {
  actionsAndSseRealtime(() => platform); // the same in split mode: data-split.test.ts

  it('refuses subscribers without valid project credentials', async () => {
    expect((await subscribeSse({})).status).toBe(401);
    expect((await subscribeSse({ 'x-api-key': 'tsk_garbage' })).status).toBe(401);
    expect((await subscribeSse({ authorization: `Bearer ${a.token}` })).status).toBe(403);
  });

  it('answers variables or extensions that are not a JSON object in a GET with 400 naming them, never a 5xx', async () => {
    for (const [name, raw] of [
      ['variables', '{{ constructor.constructor("return process")() }}'],
      ['extensions', '{"a":'],
      ['variables', '[1,2]'],
    ]) {
      const qs = new URLSearchParams({ query: SUBSCRIPTION, [name]: raw });
      const res = await fetch(`${platform.url}/realtime?${qs}`, {
        headers: { 'x-api-key': a.apiKey, accept: 'text/event-stream' },
      });
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain(`${name}: must be a JSON object`);
    }
  });

  it('streams inserts, updates and deletes to the project, nothing to others, and stops when turned off', async () => {
    const mine = await subscribeSse({ 'x-api-key': a.apiKey }, 'items');
    const all = await subscribeSse({ 'x-api-key': a.apiKey });
    const other = await subscribeSse({ 'x-api-key': b.apiKey });
    expect([mine.status, all.status, other.status, mine.body]).toEqual([200, 200, 200, undefined]);
    // No wait: a subscription listens before its 200 is sent, so a change committed from here on is not missed.
    expect((await dataA('insert', { table: 'items', values: { name: 'first' } })).status).toBe(201);
    expect((await dataA('update', { table: 'items', where: { name: 'first' }, set: { name: 'renamed' } })).status).toBe(
      200,
    );
    expect((await dataA('delete', { table: 'items', where: { name: 'renamed' } })).status).toBe(200);
    await waitFor(async () => mine.changes.length >= 3, { message: 'three changes' });
    expect(mine.changes).toEqual([
      { table: 'items', operation: 'insert', row: { id: 1, name: 'first' }, old: null },
      { table: 'items', operation: 'update', row: { id: 1, name: 'renamed' }, old: { id: 1, name: 'first' } },
      { table: 'items', operation: 'delete', row: null, old: { id: 1, name: 'renamed' } },
    ]);
    await waitFor(async () => all.changes.length >= 3, { message: 'three changes on the unfiltered stream' });
    // B's own table of the same name is not published: B's writes stream nowhere either.
    await dataB('insert', { table: 'items', values: { name: 'b row' } });

    expect(
      (await call('POST', '/v1/publication', { apiKey: a.apiKey, body: { table: 'items', enabled: false } })).status,
    ).toBe(200);
    await waitFor(async () => (await triggerCount('items')) === 0, { message: 'trigger dropped' });
    await dataA('insert', { table: 'items', values: { name: 'after off' } });
    await new Promise((r) => setTimeout(r, 800)); // proves a change does NOT come: no later event on these streams to wait for
    expect(mine.changes).toHaveLength(3);
    expect(all.changes).toHaveLength(3);
    expect(other.changes).toEqual([]);
    expect([mine.errors, other.errors]).toEqual([[], []]);
    for (const s of [mine, all, other]) s.close();
  }, 30_000);

  it('refuses to publish a table that does not exist (400 naming it); a published table dropped and made again streams again', async () => {
    const refused = await call('POST', '/v1/publication', {
      apiKey: a.apiKey,
      body: { table: 'later', enabled: true },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('"later"'),
    });
    expect((await dataA('rawSQL', { sql: 'create table later (id int primary key)' })).status).toBe(200);
    expect(
      (await call('POST', '/v1/publication', { apiKey: a.apiKey, body: { table: 'later', enabled: true } })).status,
    ).toBe(200);
    await waitFor(async () => (await triggerCount('later')) > 0, { message: 'trigger on the table' });
    // Dropped with its trigger and made again while the switch stays on: the catalog sync after the DDL puts the
    // trigger back.
    expect((await dataA('rawSQL', { sql: 'drop table later' })).status).toBe(200);
    expect((await dataA('rawSQL', { sql: 'create table later (id int primary key)' })).status).toBe(200);
    await waitFor(async () => (await triggerCount('later')) > 0, { message: 'trigger on the new table' });
    const sub = await subscribeSse({ 'x-api-key': a.apiKey }, 'later');
    await dataA('insert', { table: 'later', values: { id: 7 } });
    await waitFor(async () => sub.changes.length === 1, { message: 'one change' });
    expect(sub.changes[0]).toMatchObject({ operation: 'insert', row: { id: 7 } });
    sub.close();
  }, 30_000);
});

describe('realtime over graphql-ws', () => {
  it('authenticates with connection params and streams changes', async () => {
    // The SSE subscriptions closed above are released once their server side notices the closed socket: wait
    // for that, or a release landing after this one subscribed would hide it from the gauge.
    await waitFor(async () => (await realtimeSubscribers(platform.url)) === 0, {
      message: 'the earlier subscriptions released',
    });
    const ws = wsClient(platform.url, { 'x-api-key': a.apiKey });
    const got: Change[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const stop = ws.subscribe<{ dataChanges: Change }>(
        { query: SUBSCRIPTION, variables: { t: 'later' } },
        {
          next: (v) => {
            if (v.data) got.push(v.data.dataChanges);
            if (got.length === 1) {
              stop();
              resolve();
            }
          },
          error: reject,
          complete: () => resolve(),
        },
      );
    });
    await waitFor(async () => (await realtimeSubscribers(platform.url)) > 0, {
      message: 'the WebSocket subscription listening',
    });
    await dataA('insert', { table: 'later', values: { id: 8 } });
    await done;
    expect(got[0]).toMatchObject({ operation: 'insert', row: { id: 8 } });
    await ws.dispose();

    const refused = wsClient(platform.url, { 'x-api-key': 'tsk_garbage' });
    const outcome = await new Promise<string>((resolve) => {
      refused.subscribe(
        { query: SUBSCRIPTION },
        { next: () => resolve('next'), error: () => resolve('error'), complete: () => resolve('complete') },
      );
    });
    expect(outcome).toBe('error');
    await refused.dispose();
  }, 30_000);
});

describe('end users and deletes', () => {
  it("an end user gets a delete only when its policies would have let it read the row, and then only the row's key", async () => {
    const p = await newProject(platform.url);
    const data = dataCall(call, p.apiKey);
    for (const sql of [
      'create table notes (id serial primary key, owner text not null, body text not null)',
      'alter table notes enable row level security',
      "create policy own on notes using (owner = current_setting('request.user_id', true))",
    ])
      expect((await data('rawSQL', { sql })).status).toBe(200);
    expect(
      (await call('POST', '/v1/publication', { apiKey: p.apiKey, body: { table: 'notes', enabled: true } })).status,
    ).toBe(200);
    const [u1, u2] = [await registerUser(platform.url, p), await registerUser(platform.url, p)];
    const token = async (u: { email: string; password: string }) =>
      (await passwordGrant(platform.url, p, u)).body.access_token as string;
    const s1 = await subscribeSse({ authorization: `Bearer ${await token(u1!)}` }, 'notes');
    const s2 = await subscribeSse({ authorization: `Bearer ${await token(u2!)}` }, 'notes');
    expect([s1.status, s2.status]).toEqual([200, 200]);
    // Written by the project key for u1, then deleted: u2 may see neither.
    await waitFor(
      async () => {
        await data('insert', { table: 'notes', values: { owner: u1!.id, body: 'probe' } });
        return s1.changes.length > 0;
      },
      { message: "u1's subscription" },
    );
    const made = await data('insert', {
      table: 'notes',
      values: { owner: u1!.id, body: 'secret of u1' },
      returning: ['id'],
    });
    const id = made.body.rows[0].id as number;
    expect((await data('delete', { table: 'notes', where: { id } })).status).toBe(200);
    await waitFor(async () => s1.changes.some((c) => c.operation === 'delete'), { message: "u1's delete event" });
    expect(s1.changes.find((c) => c.operation === 'delete')).toEqual({
      table: 'notes',
      operation: 'delete',
      row: null,
      old: { id },
    });
    // A change after the delete reaches u2 (its stream works), and nothing of u1's rows ever did.
    await data('insert', { table: 'notes', values: { owner: u2!.id, body: 'for u2' } });
    await waitFor(async () => s2.changes.length > 0, { message: "u2's own change" });
    expect(s2.changes.map((c) => c.operation)).toEqual(['insert']);
    expect(JSON.stringify(s2.changes)).not.toContain('secret of u1');
    s1.close();
    s2.close();
  }, 60_000);
});

describe('a lost listener', () => {
  it("tells the project's subscribers of the gap once it is back, and streams on", async () => {
    expect(
      (await call('POST', '/v1/publication', { apiKey: a.apiKey, body: { table: 'items', enabled: true } })).status,
    ).toBe(200);
    const sub = await subscribeSse({ 'x-api-key': a.apiKey }, 'items');
    expect(sub.status).toBe(200);
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ database_name: string }>(
        'select database_name from data_project_roles where project_id = $1',
        [a.id],
      );
      const killed = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'tessera-realtime' and datname = $1`,
        [rows[0]!.database_name],
      );
      expect(killed.rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    await waitFor(async () => sub.changes.some((c) => c.operation === 'gap'), { message: 'the gap event' });
    expect(sub.changes.find((c) => c.operation === 'gap')).toMatchObject({ table: '*', operation: 'gap', row: null });
    await waitFor(
      async () => {
        await dataA('insert', { table: 'items', values: { name: 'after the gap' } });
        return sub.changes.some((c) => c.row?.name === 'after the gap');
      },
      { message: 'changes after the gap' },
    );
    sub.close();
  }, 30_000);
});

describe('GraphQL limits on the realtime endpoint', () => {
  it('refuses alias floods and token floods like every other GraphQL endpoint, over HTTP and graphql-ws', async () => {
    const aliases = Array.from({ length: 200 }, (_, i) => `a${i}: realtime`).join(' ');
    const res = await fetch(`${platform.url}/realtime`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey },
      body: JSON.stringify({ query: `{ ${aliases} }` }),
    });
    const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_LIMIT_EXCEEDED');
    const ws = wsClient(platform.url, { 'x-api-key': a.apiKey });
    const outcome = await new Promise<unknown>((resolve) => {
      ws.subscribe(
        { query: `subscription { dataChanges { table ${'operation '.repeat(20_000)} } }` },
        { next: resolve, error: resolve, complete: () => resolve('complete') },
      );
    });
    expect(JSON.stringify(outcome)).toMatch(/GRAPHQL_LIMIT_EXCEEDED|tokens/);
    await ws.dispose();
  });
});
