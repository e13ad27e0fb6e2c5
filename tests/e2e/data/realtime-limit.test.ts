// Realtime subscribers against the plan's max_realtime_subscribers (issue 28): up to the limit subscriptions open,
// past it SSE is refused with 409 PLAN_LIMIT_REACHED before its stream starts and graphql-ws answers the
// subscription with that error; closing one frees a slot, and the operator raising the limit lets more in.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { setPlanLimits } from '../../support/plans.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createProject, realtimeSubscribers, signIn, wsClient, type Call, type DataProject } from './data-support.ts';

const SUBSCRIPTION = 'subscription { dataChanges { table operation } }';

let p: TestPlatform;
let call: Call;
let a: DataProject;
let b: DataProject;

beforeAll(async () => {
  p = await startOneProcess();
  call = client(p.url);
  a = await createProject(call, await signIn(call), 'realtime limit');
  b = await createProject(call, await signIn(call), 'neighbour');
  await setPlanLimits(p, 'free', { max_realtime_subscribers: 2 });
}, 60_000);

afterAll(async () => {
  await setPlanLimits(p, 'free', { max_realtime_subscribers: 200 }).catch(() => {});
  await p?.close();
});

/** An SSE subscription with `apiKey`: its status, and its JSON body when refused (an accepted one streams until closed). */
async function sse(apiKey: string) {
  const ctrl = new AbortController();
  const res = await fetch(`${p.url}/realtime`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-api-key': apiKey },
    body: JSON.stringify({ query: SUBSCRIPTION }),
    signal: ctrl.signal,
  });
  const body = res.headers.get('content-type')?.includes('json') ? await res.json() : undefined;
  return { status: res.status, body, close: () => ctrl.abort() };
}

/** What a graphql-ws subscription with `apiKey` answers first: `{error}` (the protocol's error message), `{next}`, or 'listening' once it counts. */
async function wsOutcome(apiKey: string, before: number) {
  const ws = wsClient(p.url, { 'x-api-key': apiKey });
  const outcome = new Promise<unknown>((resolve) => {
    ws.subscribe(
      { query: SUBSCRIPTION },
      {
        next: (v) => resolve({ next: v }),
        error: (e) => resolve({ error: e }),
        complete: () => resolve('complete'),
      },
    );
  });
  const listening = (async () => {
    await waitFor(async () => (await realtimeSubscribers(p.url)) > before, { message: 'the subscription to listen' });
    return 'listening';
  })();
  return { outcome: await Promise.race([outcome, listening]), dispose: async () => await ws.dispose() };
}

describe('max_realtime_subscribers', () => {
  it('opens subscriptions up to the limit and refuses the next over SSE with 409 PLAN_LIMIT_REACHED before the stream starts', async () => {
    const open = [await sse(a.apiKey), await sse(a.apiKey)];
    expect(open.map((o) => o.status)).toEqual([200, 200]);
    const third = await sse(a.apiKey);
    expect(third.status).toBe(409);
    expect(third.body.error).toMatchObject({
      code: 'PLAN_LIMIT_REACHED',
      details: { limit: 'max_realtime_subscribers', max: 2 },
      request_id: expect.any(String),
    });
    expect(third.body.error.message).toMatch(/free plan allows 2 realtime subscribers per project/);
    // The neighbour's subscriptions are its own.
    const neighbour = await sse(b.apiKey);
    expect(neighbour.status).toBe(200);
    neighbour.close();
    // Over graphql-ws the subscription is answered with the same error.
    const before = await realtimeSubscribers(p.url);
    const ws = await wsOutcome(a.apiKey, before);
    expect(ws.outcome).toMatchObject({ error: [{ extensions: { code: 'PLAN_LIMIT_REACHED' } }] });
    expect(JSON.stringify(ws.outcome)).toMatch(/PLAN_LIMIT_REACHED/);
    expect(JSON.stringify(ws.outcome)).toMatch(/max_realtime_subscribers/);
    await ws.dispose();
    // Closing one frees a slot.
    open[0]!.close();
    await waitFor(async () => (await realtimeSubscribers(p.url)) === 1, {
      message: 'the closed subscription released',
    });
    const again = await sse(a.apiKey);
    expect(again.status).toBe(200);
    again.close();
    open[1]!.close();
    await waitFor(async () => (await realtimeSubscribers(p.url)) === 0, { message: 'every subscription released' });
  });

  it('lets a WebSocket subscription take the last slot, and more once the operator raises the limit', async () => {
    const first = await sse(a.apiKey);
    expect(first.status).toBe(200);
    const ws = await wsOutcome(a.apiKey, 1);
    expect(ws.outcome).toBe('listening');
    expect((await sse(a.apiKey)).status).toBe(409);
    await setPlanLimits(p, 'free', { max_realtime_subscribers: 3 });
    const third = await sse(a.apiKey);
    expect(third.status).toBe(200);
    expect((await sse(a.apiKey)).status).toBe(409);
    first.close();
    third.close();
    await ws.dispose();
    await waitFor(async () => (await realtimeSubscribers(p.url)) === 0, { message: 'every subscription released' });
  });
});
