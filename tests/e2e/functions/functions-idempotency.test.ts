// Idempotency-Key on invoke (sync and async) and on the webhook receiver: one implementation. The same key and body
// within 24 hours answer the first answer without running again (concurrent duplicates too), another body is 422,
// a failed run frees the key, and keys belong to the caller.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, startEdgeWorld, type EdgeWorld } from './functions-helpers.ts';
import { newProject, newProjectWithPk, passwordGrant, registerUser } from '../identity/identity-fixtures.ts';
import type { Res } from '../../support/http.ts';

let w: EdgeWorld;

/** Rows of the project's `runs` table: one per run of the `record` function. */
async function runs(tag: string): Promise<number> {
  const res = await w.call('POST', '/v1/find', { apiKey: w.apiKey, body: { table: 'runs', where: { tag } } });
  expect(res.status).toBe(200);
  return (res.body.rows as unknown[]).length;
}

const invoke = (name: string, body: unknown, key: string | null, query = '', apiKey = w.apiKey): Promise<Res> =>
  w.call('POST', `/edge/api/v1/invoke/${name}${query}`, {
    apiKey,
    body,
    headers: key === null ? {} : { 'Idempotency-Key': key },
  });

/**
 * Creates the table `runs` in the project of `apiKey` and the function `name`, each run of which writes a row (so runs
 * can be counted) tagged `tag` and answers the row's id and tag.
 */
async function createRecorder(
  apiKey: string,
  name: string,
  opts: { tag?: string; public?: boolean } = {},
): Promise<void> {
  const sql = await w.call('POST', '/v1/rawSQL', {
    apiKey,
    body: { sql: 'create table runs (id serial primary key, tag text not null)' },
  });
  expect(sql.status).toBe(200);
  const tag = opts.tag ?? '{{ input.body.tag }}';
  const fn = await w.call('POST', '/edge/api/v1/functions', {
    apiKey,
    body: {
      name,
      public: opts.public ?? false,
      steps: [
        { name: 'save', kind: 'Database', query: { action: 'insert', table: 'runs', values: { tag } } },
        { name: 'answer', kind: 'Transform', expression: { id: '{{ steps.save.body.rows[0].id }}', tag } },
      ],
    },
  });
  expect(fn.status).toBe(201);
}

beforeAll(async () => {
  // Behind a (simulated) reverse proxy: visitors are told apart by X-Forwarded-For.
  w = await startEdgeWorld({ TESSERA_TRUST_PROXY: 'true' });
  await createRecorder(w.apiKey, 'record');
  // Fails until the table `later` exists.
  const flaky = await w.call('POST', '/edge/api/v1/functions', {
    apiKey: w.apiKey,
    body: {
      name: 'flaky',
      steps: [
        { name: 'read', kind: 'Database', query: { action: 'find', table: 'later' } },
        { name: 'save', kind: 'Database', query: { action: 'insert', table: 'runs', values: { tag: 'flaky' } } },
      ],
    },
  });
  expect(flaky.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await w?.p.close();
});

describe('Idempotency-Key on invoke', () => {
  it('runs a synchronous invoke once: the repeat answers the stored answer, marked as a replay', async () => {
    const first = await invoke('record', { tag: 'sync-1' }, 'key-sync-1');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-idempotent-replay')).toBeNull();
    const again = await invoke('record', { tag: 'sync-1' }, 'key-sync-1');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('x-idempotent-replay')).toBe('true');
    expect(again.headers.get('x-execution-id')).toBe(first.headers.get('x-execution-id'));
    expect(await runs('sync-1')).toBe(1);
    // Without a key, or with another key, it runs again.
    expect((await invoke('record', { tag: 'sync-1' }, null)).status).toBe(200);
    expect((await invoke('record', { tag: 'sync-1' }, 'key-sync-2')).status).toBe(200);
    expect(await runs('sync-1')).toBe(3);
  });

  it('queues an asynchronous invoke once: the repeat answers the same execution id', async () => {
    const first = await invoke('record', { tag: 'async-1' }, 'key-async-1', '?async=true');
    expect(first.status).toBe(202);
    const again = await invoke('record', { tag: 'async-1' }, 'key-async-1', '?async=true');
    expect(again.status).toBe(202);
    expect(again.body.execution_id).toBe(first.body.execution_id);
    expect(again.headers.get('x-idempotent-replay')).toBe('true');
    const list = await w.call('GET', '/edge/api/v1/executions?function=record&first=100', { apiKey: w.apiKey });
    const queued = (list.body.executions as { id: string; input: { body: { tag: string } } }[]).filter(
      (e) => e.input?.body?.tag === 'async-1',
    );
    expect(queued.map((e) => e.id)).toEqual([first.body.execution_id]);
  });

  it('runs concurrent duplicates once (sync and async): the others get 409 while it runs, or its answer', async () => {
    const sync = await Promise.all(
      Array.from({ length: 12 }, () => invoke('record', { tag: 'race-sync' }, 'key-race-sync')),
    );
    for (const r of sync) expect([200, 409]).toContain(r.status);
    for (const r of sync.filter((x) => x.status === 409)) expectError(r, 409, 'CONFLICT', /still being handled/);
    expect(new Set(sync.filter((r) => r.status === 200).map((r) => r.body.id)).size).toBe(1);
    expect(await runs('race-sync')).toBe(1);

    const queued = await Promise.all(
      Array.from({ length: 12 }, () => invoke('record', { tag: 'race-async' }, 'key-race-async', '?async=true')),
    );
    for (const r of queued) expect([202, 409]).toContain(r.status);
    expect(new Set(queued.filter((r) => r.status === 202).map((r) => r.body.execution_id)).size).toBe(1);
    const list = await w.call('GET', '/edge/api/v1/executions?function=record&first=100', { apiKey: w.apiKey });
    expect(
      (list.body.executions as { input: { body: { tag: string } } }[]).filter(
        (e) => e.input?.body?.tag === 'race-async',
      ),
    ).toHaveLength(1);
  });

  it('refuses the same key with another body, or sync and async mixed (422), and a malformed key (400)', async () => {
    expect((await invoke('record', { tag: 'body-a' }, 'key-body')).status).toBe(200);
    expectError(
      await invoke('record', { tag: 'body-b' }, 'key-body'),
      422,
      'IDEMPOTENCY_KEY_REUSED',
      /different request body/,
    );
    expectError(await invoke('record', { tag: 'body-a' }, 'key-body', '?async=true'), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectError(
      await invoke('record', { tag: 'body-a' }, 'k'.repeat(256)),
      400,
      'VALIDATION_FAILED',
      /Idempotency-Key/,
    );
    expectError(await invoke('record', { tag: 'body-a' }, 'has space'), 400, 'VALIDATION_FAILED', /Idempotency-Key/);
    expect(await runs('body-a')).toBe(1);
    expect(await runs('body-b')).toBe(0);
  });

  it('stores nothing for a failed run: the retry with the same key runs again', async () => {
    expectError(await invoke('flaky', {}, 'key-flaky'), 502, 'FUNCTION_FAILED');
    expect(
      (await w.call('POST', '/v1/rawSQL', { apiKey: w.apiKey, body: { sql: 'create table later (id int)' } })).status,
    ).toBe(200);
    const retry = await invoke('flaky', {}, 'key-flaky');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-idempotent-replay')).toBeNull();
    expect((await invoke('flaky', {}, 'key-flaky')).headers.get('x-idempotent-replay')).toBe('true');
    expect(await runs('flaky')).toBe(1);
  });

  it('answers an unknown function 404 before looking at the key, and ignores the key on dry runs', async () => {
    expectError(await invoke('nope', {}, 'key-404'), 404, 'NOT_FOUND');
    const dry1 = await invoke('record', { tag: 'dry' }, 'key-dry', '?dry_run=true');
    const dry2 = await invoke('record', { tag: 'other' }, 'key-dry', '?dry_run=true');
    expect([dry1.status, dry2.status]).toEqual([200, 200]);
    expect(dry2.headers.get('x-idempotent-replay')).toBeNull();
    expect(await runs('dry')).toBe(0);
  });

  it('keeps keys of different functions and projects apart', async () => {
    await createRecorder(w.other.apiKey, 'record');
    expect((await invoke('record', { tag: 'shared' }, 'key-shared')).status).toBe(200);
    const there = await invoke('record', { tag: 'shared' }, 'key-shared', '', w.other.apiKey);
    expect(there.status).toBe(200);
    expect(there.headers.get('x-idempotent-replay')).toBeNull();
  });

  it('takes the key as an argument of the GraphQL mutation too', async () => {
    const op = {
      query:
        'mutation($k: String) { invokeEdgeFunction(name: "record", input: {tag: "gql"}, idempotencyKey: $k) { status body headers } }',
      variables: { k: 'key-gql' },
    };
    const a = await w.call('POST', '/graphql', { apiKey: w.apiKey, body: op });
    const b = await w.call('POST', '/graphql', { apiKey: w.apiKey, body: op });
    expect(a.body.data.invokeEdgeFunction.status).toBe(200);
    expect(b.body.data.invokeEdgeFunction.body).toEqual(a.body.data.invokeEdgeFunction.body);
    expect(b.body.data.invokeEdgeFunction.headers['x-idempotent-replay']).toBe('true');
    expect(await runs('gql')).toBe(1);
  });
});

/**
 * Makes `name` in the project of `apiKey` a public recorder (`createRecorder`), then sends it the same Idempotency-Key
 * and body as two callers (`first`, `second`, then `first` again): each caller's first call runs, and only the first
 * caller's repeat answers its stored answer.
 */
async function expectKeysPerCaller(
  apiKey: string,
  name: string,
  first: () => Promise<Res>,
  second: () => Promise<Res>,
): Promise<void> {
  await createRecorder(apiKey, name, { tag: name, public: true });
  const a1 = await first();
  const b1 = await second();
  const a2 = await first();
  expect([a1.status, b1.status, a2.status]).toEqual([200, 200, 200]);
  expect(b1.body.id).not.toBe(a1.body.id);
  expect(b1.headers.get('x-idempotent-replay')).toBeNull();
  expect(a2.body).toEqual(a1.body);
  expect(a2.headers.get('x-idempotent-replay')).toBe('true');
}

describe('Idempotency-Key of end-users', () => {
  it("never answers one end-user another's stored answer", async () => {
    const project = await newProject(w.p.url);
    const tokenOf = async () =>
      (await passwordGrant(w.p.url, project, await registerUser(w.p.url, project))).body.access_token as string;
    const [alice, bob] = [await tokenOf(), await tokenOf()];
    const asUser = (token: string) => () =>
      w.call('POST', '/edge/api/v1/invoke/whoami', { token, body: {}, headers: { 'Idempotency-Key': 'shared-key' } });
    await expectKeysPerCaller(project.apiKey, 'whoami', asUser(alice), asUser(bob));
  });
});

describe('Idempotency-Key of visitors (the publishable key)', () => {
  it("never answers one visitor another's stored answer, and replays a visitor's own", async () => {
    const project = await newProjectWithPk(w.p.url);
    const asVisitor = (address: string) => () =>
      w.call('POST', '/edge/api/v1/invoke/visit', {
        apiKey: project.pk,
        body: { same: 'body' },
        headers: { 'Idempotency-Key': 'guessable-key', 'X-Forwarded-For': address },
      });
    await expectKeysPerCaller(project.apiKey, 'visit', asVisitor('203.0.113.7'), asVisitor('198.51.100.9'));
  });
});

describe('Idempotency-Key on the webhook receiver (the same implementation)', () => {
  it('replays the same key and body, refuses another body (422), and runs once under concurrency', async () => {
    const rec = await w.call('POST', '/edge/api/v1/webhooks', {
      apiKey: w.apiKey,
      body: { function: 'record', slug: 'record-hook' },
    });
    expect(rec.status).toBe(201);
    const post = (body: string, key: string) =>
      w.call('POST', `/webhooks/${w.projectId}/record-hook`, {
        raw: body,
        headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
      });
    const all = await Promise.all(Array.from({ length: 8 }, () => post('{"tag":"hook-1"}', 'evt_race')));
    for (const r of all) expect([200, 409]).toContain(r.status);
    expect(await runs('hook-1')).toBe(1);
    const again = await post('{"tag":"hook-1"}', 'evt_race');
    expect(again.headers.get('x-idempotent-replay')).toBe('true');
    expectError(await post('{"tag":"hook-2"}', 'evt_race'), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await runs('hook-2')).toBe(0);
  });
});
