// The data API in split mode: actions reach the data subgraph's own process, and the realtime stream
// is forwarded by the front door to that process (signed context) and still streams changes over SSE.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSplit, type TestPlatform } from '../support/platform.ts';
import { client } from '../support/http.ts';
import { createProject, dataCall, signIn, type Call } from './data-support.ts';
import { waitFor } from '../support/wait-for.ts';

let platform: TestPlatform;
let call: Call;

beforeAll(async () => {
  platform = await startSplit();
  call = client(platform.url);
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

describe('data API in split mode', () => {
  it('runs actions and streams realtime changes through the front door', async () => {
    const project = await createProject(call, await signIn(call));
    const data = dataCall(call, project.apiKey);
    expect((await data('rawSQL', { sql: 'create table events (id serial primary key, kind text)' })).status).toBe(200);
    expect((await call('POST', '/v1/publication', { apiKey: project.apiKey, body: { table: 'events', enabled: true } })).status).toBe(200);
    await waitFor(
      async () => (await data('rawSQL', { sql: "select count(*)::int as n from information_schema.triggers where event_object_table = 'events'" })).body.rows[0].n > 0, { message: 'trigger' },
    );
    expect((await fetch(`${platform.url}/realtime`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: '{}' })).status).toBe(401);
    const abort = new AbortController();
    const res = await fetch(`${platform.url}/realtime`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': project.apiKey },
      body: JSON.stringify({ query: 'subscription { dataChanges(table: "events") { operation row } }' }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    let text = '';
    const reader = res.body!.getReader();
    const reading = (async () => {
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
    await new Promise((r) => setTimeout(r, 500));
    expect((await data('insert', { table: 'events', values: { kind: 'split' } })).status).toBe(201);
    await waitFor(async () => text.includes('"kind":"split"'), { message: 'the change over SSE' });
    expect(text).toContain('"operation":"insert"');
    abort.abort();
    await reading;
    // Deleting the project drops its schema and its (cluster-wide) roles.
    expect((await call('DELETE', `/auth/api/v1/projects/${project.id}`, { token: project.token })).status).toBe(204);
    await new Promise((r) => setTimeout(r, 1000));
  }, 60_000);
});
