// Realtime over graphql-ws in split mode: the front door accepts the WebSocket, authenticates the
// connection params and forwards the connection to the data subgraph's process with the signed context;
// that process refuses WebSockets without it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import type { Client } from 'graphql-ws';
import { SPLIT_START_HOOK_MS, startSplit, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { signContext } from '../../../platform/auth.ts';
import {
  createProject,
  dataCall,
  realtimeSubscribers,
  signIn,
  wsClient,
  type Call,
  type DataProject,
} from './data-support.ts';
import { waitFor } from '../../support/wait-for.ts';

type Change = { table: string; operation: string; row: Record<string, unknown> | null };

const SUBSCRIPTION = 'subscription($t: String) { dataChanges(table: $t) { table operation row } }';

let platform: TestPlatform;
let call: Call;
let project: DataProject;
let dataUrl: string;

beforeAll(async () => {
  platform = await startSplit();
  call = client(platform.url);
  dataUrl = (
    JSON.parse(fs.readFileSync(path.join(platform.dataDir, 'split.json'), 'utf8')) as {
      subgraphs: Record<string, { url: string }>;
    }
  ).subgraphs.data!.url;
  project = await createProject(call, await signIn(call), 'realtime split');
  const data = dataCall(call, project.apiKey);
  expect((await data('rawSQL', { sql: 'create table notes (id serial primary key, body text)' })).status).toBe(200);
  expect(
    (await call('POST', '/v1/publication', { apiKey: project.apiKey, body: { table: 'notes', enabled: true } })).status,
  ).toBe(200);
  await waitFor(
    async () =>
      (
        await data('rawSQL', {
          sql: "select count(*)::int as n from information_schema.triggers where event_object_table = 'notes'",
        })
      ).body.rows[0].n > 0,
    { message: 'trigger' },
  );
}, SPLIT_START_HOOK_MS);

afterAll(async () => {
  // Deleting the project drops its schema and its (cluster-wide) roles.
  // The drop runs after the answer, in the data process; whatever it has not finished when the processes stop, the
  // platform's close drops (tests/support/database.ts dropInstallation).
  if (project) await call('DELETE', `/auth/api/v1/projects/${project.id}`, { token: project.token });
  await platform?.close();
}, 60_000);

/** Subscribes once; answers how it ended ('next', 'error' or 'complete') and the socket's close code. */
function firstOutcome(ws: Client): Promise<[string, number | undefined]> {
  let code: number | undefined;
  ws.on('closed', (event) => (code = (event as { code?: number }).code));
  return new Promise((resolve) => {
    const end = (how: string) => setTimeout(() => resolve([how, code]), 50);
    ws.subscribe(
      { query: SUBSCRIPTION },
      { next: () => end('next'), error: () => end('error'), complete: () => end('complete') },
    );
  });
}

describe('realtime over graphql-ws in split mode', () => {
  it('streams an insert to a subscriber connected through the front door', async () => {
    const subscribersBefore = await realtimeSubscribers(dataUrl);
    const ws = wsClient(platform.url, { 'x-api-key': project.apiKey });
    const got: Change[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const stop = ws.subscribe<{ dataChanges: Change }>(
        { query: SUBSCRIPTION, variables: { t: 'notes' } },
        {
          next: (v) => {
            if (v.data) got.push(v.data.dataChanges);
            stop();
            resolve();
          },
          error: reject,
          complete: () => resolve(),
        },
      );
    });
    // Connection forwarded and subscription listening: graphql-ws says nothing when it is; the data process's gauge does.
    await waitFor(async () => (await realtimeSubscribers(dataUrl)) > subscribersBefore, {
      message: 'the forwarded subscription listening',
    });
    expect(
      (await dataCall(call, project.apiKey)('insert', { table: 'notes', values: { body: 'over the socket' } })).status,
    ).toBe(201);
    await done;
    expect(got).toEqual([{ table: 'notes', operation: 'insert', row: { id: 1, body: 'over the socket' } }]);
    await ws.dispose();
  }, 30_000);

  it('refuses connections with missing, garbage or tenant credentials, and from origins the project does not allow', async () => {
    for (const params of [{}, { 'x-api-key': 'tsk_garbage' }, { authorization: `Bearer ${project.token}` }]) {
      const ws = wsClient(platform.url, params);
      expect(await firstOutcome(ws)).toEqual(['error', 4403]); // graphql-ws: Forbidden
      await ws.dispose();
    }
    // A good key from a browser on an origin the project does not allow (the forwarder checks it, as the one process does).
    const browser = wsClient(platform.url, { 'x-api-key': project.apiKey }, { origin: 'https://evil.example.net' });
    expect(await firstOutcome(browser)).toEqual(['error', 4403]);
    await browser.dispose();
  }, 30_000);

  it('closes a socket sending a message over 1 MiB with 1009, before or after authentication, and its forwarded connection with it', async () => {
    const subscribersBefore = await realtimeSubscribers(dataUrl);
    const closeCode = (messages: object[]) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${platform.url.replace(/^http/, 'ws')}/realtime`, 'graphql-transport-ws');
        socket.on('open', () => {
          for (const m of messages) socket.send(JSON.stringify(m));
        });
        socket.on('close', (code) => resolve(code));
        socket.on('error', reject);
      });
    const junk = 'x'.repeat(1_500_000);
    expect(await closeCode([{ type: 'connection_init', payload: { junk } }])).toBe(1009);
    const init = { type: 'connection_init', payload: { 'x-api-key': project.apiKey } };
    const subscribe = (query: string) => ({ id: '1', type: 'subscribe', payload: { query } });
    expect(await closeCode([init, subscribe(`${SUBSCRIPTION} # ${junk}`)])).toBe(1009);
    await waitFor(async () => (await realtimeSubscribers(dataUrl)) === subscribersBefore, {
      message: 'no subscription left behind',
    });
    // The front door still serves sockets.
    const ws = wsClient(platform.url, { 'x-api-key': 'tsk_garbage' });
    expect(await firstOutcome(ws)).toEqual(['error', 4403]);
    await ws.dispose();
  }, 30_000);

  it('has a data process that refuses WebSockets without the signed context, or with a forged one', async () => {
    const url = `${dataUrl.replace(/^http/, 'ws').replace(/\/graphql$/, '')}/realtime`;
    const statusOf = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(url, 'graphql-transport-ws', { headers });
        socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        socket.on('open', () => {
          socket.close();
          resolve(101);
        });
        socket.on('error', () => resolve(-1));
      });
    expect(await statusOf({})).toBe(401);
    const forged = await signContext(
      { requestId: 'x', principal: { kind: 'project', projectId: project.id, tenantId: 'x' } },
      'a-different-secret-of-enough-length!!',
    );
    expect(await statusOf({ 'x-tessera-context': forged })).toBe(401);
  });
});
