// Data API flows that must behave the same in one process and in split mode: called by data-realtime.test.ts
// (one process) and data-split.test.ts, each with its own platform, so Jest runs them in parallel.
import { expect, it } from '@jest/globals';
import { client } from '../../support/http.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createProject, dataCall, signIn, sseText } from './data-support.ts';

/** Actions through the front door, a publication, and its changes streamed over SSE; the project deleted after. */
export function actionsAndSseRealtime(target: () => { url: string }): void {
  it('runs actions and streams realtime changes through the front door', async () => {
    const { url } = target();
    const call = client(url);
    const project = await createProject(call, await signIn(call));
    const data = dataCall(call, project.apiKey);
    expect((await data('rawSQL', { sql: 'create table events (id serial primary key, kind text)' })).status).toBe(200);
    expect(
      (await call('POST', '/v1/publication', { apiKey: project.apiKey, body: { table: 'events', enabled: true } }))
        .status,
    ).toBe(200);
    const triggers = "select count(*)::int as n from information_schema.triggers where event_object_table = 'events'";
    await waitFor(async () => (await data('rawSQL', { sql: triggers })).body.rows[0].n > 0, {
      message: 'the realtime trigger',
    });
    expect(
      (
        await fetch(`${url}/realtime`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: '{}',
        })
      ).status,
    ).toBe(401);
    const sse = await sseText(url, project.apiKey, 'subscription { dataChanges(table: "events") { operation row } }');
    expect(sse.status).toBe(200);
    // The subscription is registered once a probe row written after it arrives.
    await waitFor(
      async () => {
        expect((await data('insert', { table: 'events', values: { kind: 'probe' } })).status).toBe(201);
        return sse.text().includes('"kind":"probe"');
      },
      { intervalMs: 200, message: 'the subscription to be registered' },
    );
    expect((await data('insert', { table: 'events', values: { kind: 'flow' } })).status).toBe(201);
    await waitFor(() => sse.text().includes('"kind":"flow"'), { message: 'the change over SSE' });
    expect(sse.text()).toContain('"operation":"insert"');
    await sse.close();
    expect((await call('DELETE', `/auth/api/v1/projects/${project.id}`, { token: project.token })).status).toBe(204);
  }, 60_000);
}
