// The caller's request id through every hop (split mode): the id a caller sends in X-Request-Id (when sane) or the
// front door's own is what the access log line of every process that served the request carries (front door,
// router process, subgraph processes), and what the answer echoes; an id a caller forged to break logs is replaced.
// A WebSocket (graphql-ws at /realtime) is one request too: its upgrade is logged with the id by the front door and
// by the subgraph process the front door forwards it to, and the 101 answer echoes the id.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { outputOf } from '../../support/platform.ts';
import { splitPlatformForFile } from '../../support/split-suite.ts';
import { client } from '../../support/http.ts';
import { waitFor } from '../../support/wait-for.ts';
import { createProject, dataCall, signIn } from '../data/data-support.ts';
import { multipart, newStorageProject, STORAGE } from '../storage/storage-fixtures.ts';

type AccessLine = { pid: number; msg: string; request_id: string; route: string; status: number };

describe('the request id in split mode', () => {
  // Access lines are info-level: the split processes log at info here (their output is the launcher's).
  const platform = splitPlatformForFile({ LOG_LEVEL: 'info' });

  /** The role of each process of the split deployment, by pid (split.json). */
  const rolesByPid = (): Map<number, string> => {
    const layout = JSON.parse(fs.readFileSync(path.join(platform().dataDir, 'split.json'), 'utf8')) as {
      router: { pid: number };
      frontDoor: { pid: number };
      subgraphs: Record<string, { pid: number }>;
    };
    return new Map([
      [layout.router.pid, 'router'],
      [layout.frontDoor.pid, 'front-door'],
      ...Object.entries(layout.subgraphs).map(([name, s]) => [s.pid, `subgraph:${name}`] as [number, string]),
    ]);
  };

  /** Every access-log line the split processes have written so far. */
  const accessLines = (): AccessLine[] =>
    outputOf(platform().child!)
      .split('\n')
      .filter((l) => l.startsWith('{') && l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l) as AccessLine);

  /** The roles whose access log has a line with `id`, once `expected` are all there. */
  const rolesLogging = async (id: string, expected: string[]): Promise<string[]> => {
    const roles = rolesByPid();
    const seen = () => [
      ...new Set(
        accessLines()
          .filter((l) => l.request_id === id)
          .map((l) => roles.get(l.pid)!),
      ),
    ];
    await waitFor(() => expected.every((r) => seen().includes(r)), {
      message: `access lines of ${expected.join(', ')} with ${id}`,
    }).catch((err: Error) => {
      throw new Error(`${err.message}; logged by: ${seen().join(', ') || 'none'}`);
    });
    return seen().sort();
  };

  it('a data action carries the caller’s id from the front door to the data subgraph, and the answer echoes it', async () => {
    const call = client(platform().url);
    const project = await createProject(call, await signIn(call), 'request ids');
    const data = dataCall(call, project.apiKey);
    expect((await data('rawSQL', { sql: 'create table notes (id serial primary key, body text)' })).status).toBe(200);
    const id = crypto.randomUUID();
    const res = await call('POST', '/v1/find', {
      apiKey: project.apiKey,
      headers: { 'x-request-id': id },
      body: { table: 'notes' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe(id);
    const roles = await rolesLogging(id, ['front-door', 'subgraph:data']);
    // Nothing but the processes of this deployment logged it.
    for (const r of roles) expect(r).toMatch(/^(front-door|router|subgraph:\w+)$/);
  }, 60_000);

  it('a read the router process plans over two subgraphs is logged with the caller’s id by all four processes', async () => {
    const project = await newStorageProject(platform().url);
    const id = crypto.randomUUID();
    const res = await fetch(`${platform().url}${STORAGE}/usage`, {
      headers: { 'x-api-key': project.apiKey, 'x-request-id': id },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe(id);
    await rolesLogging(id, ['front-door', 'router', 'subgraph:storage', 'subgraph:tenant']);
  }, 60_000);

  it('an upload keeps the caller’s id on the storage subgraph’s own call through the router to tenant management', async () => {
    // A new project's plan limits are not yet in storage: storage asks the router process for them (callInternal),
    // which asks tenant management: front door → storage → router → tenant, one id.
    const project = await newStorageProject(platform().url);
    const id = crypto.randomUUID();
    const { body, contentType } = multipart([
      { name: 'confirm', value: 'true' },
      { name: 'file', filename: 'a.txt', contentType: 'text/plain', body: Buffer.from('hello') },
    ]);
    const res = await fetch(`${platform().url}${STORAGE}/upload`, {
      method: 'POST',
      headers: { 'x-api-key': project.apiKey, 'x-request-id': id, 'content-type': contentType },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe(id);
    await rolesLogging(id, ['front-door', 'router', 'subgraph:storage', 'subgraph:tenant']);
  }, 60_000);

  /**
   * Opens a graphql-ws connection to /realtime sending `requestId` on the upgrade, waits for `connection_ack` (the
   * data subgraph's, through the front door's forwarder) and answers the id the 101 answer echoed.
   */
  const realtimeSocket = async (apiKey: string, requestId: string): Promise<string | undefined> => {
    const socket = new WebSocket(`${platform().url.replace(/^http/, 'ws')}/realtime`, 'graphql-transport-ws', {
      headers: { 'x-request-id': requestId },
    });
    try {
      let echoed: string | undefined;
      socket.on('upgrade', (res) => (echoed = res.headers['x-request-id'] as string | undefined));
      await new Promise<void>((resolve, reject) => {
        socket.on('open', () =>
          socket.send(JSON.stringify({ type: 'connection_init', payload: { 'x-api-key': apiKey } })),
        );
        socket.on('message', (data) => {
          if ((JSON.parse(data.toString()) as { type: string }).type === 'connection_ack') resolve();
        });
        socket.on('close', (code) => reject(new Error(`closed ${code} before connection_ack`)));
        socket.on('error', reject);
      });
      return echoed;
    } finally {
      socket.close();
    }
  };

  it('a graphql-ws connection carries the caller’s id from the front door to the data subgraph, and the 101 echoes it', async () => {
    const call = client(platform().url);
    const project = await createProject(call, await signIn(call), 'socket ids');
    const id = crypto.randomUUID();
    expect(await realtimeSocket(project.apiKey, id)).toBe(id);
    await rolesLogging(id, ['front-door', 'subgraph:data']);
    // Logged as the upgrade it was: GET of the endpoint, answered 101, once by each process the socket passed through
    // (the credential's look-up on the way may add the router's and tenant management's /graphql lines, same id).
    const roles = rolesByPid();
    const upgrades = accessLines()
      .filter((l) => l.request_id === id && l.route === '/realtime')
      .map((l) => [roles.get(l.pid), l.status]);
    expect(upgrades.sort()).toEqual([
      ['front-door', 101],
      ['subgraph:data', 101],
    ]);
  }, 60_000);

  it('a graphql-ws connection with a forged id gets the front door’s own, everywhere', async () => {
    const call = client(platform().url);
    const project = await createProject(call, await signIn(call), 'hostile socket ids');
    const hostile = 'x","msg":"forged-socket","level":60';
    const given = await realtimeSocket(project.apiKey, hostile);
    expect(given).toMatch(/^[0-9a-f-]{36}$/);
    await rolesLogging(given!, ['front-door', 'subgraph:data']);
    expect(accessLines().some((l) => l.request_id === hostile)).toBe(false);
    expect(outputOf(platform().child!)).not.toContain('forged-socket');
  }, 60_000);

  it('an error answer names the caller’s id in its body too', async () => {
    const id = `trace-${Date.now()}`;
    const res = await client(platform().url)('POST', '/v1/find', {
      apiKey: 'not-a-key',
      headers: { 'x-request-id': id },
      body: { table: 'notes' },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(res.body.error.request_id).toBe(id);
  });

  it.each([
    ['too long', 'a'.repeat(129)],
    ['a forged log field', 'x","msg":"forged","level":60'],
    ['spaces and quotes', 'id with "quotes" and spaces'],
    ['non-ASCII', 'caf\u00e9'],
  ])(
    'an id that is %s is replaced by the front door’s own, everywhere',
    async (_what, hostile) => {
      const call = client(platform().url);
      const project = await createProject(call, await signIn(call), 'hostile ids');
      const res = await fetch(`${platform().url}/v1/find`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey, 'x-request-id': hostile },
        body: JSON.stringify({ table: 'nothing_here' }),
      });
      // The table does not exist: the data subgraph answered (an error in the documented shape) all the same.
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const given = res.headers.get('x-request-id')!;
      expect(given).toMatch(/^[0-9a-f-]{36}$/);
      expect(((await res.json()) as { error: { request_id: string } }).error.request_id).toBe(given);
      await rolesLogging(given, ['front-door', 'subgraph:data']);
      expect(accessLines().some((l) => l.request_id === hostile)).toBe(false);
      expect(outputOf(platform().child!)).not.toContain('"msg":"forged"');
    },
    60_000,
  );

  it('no process logs an id of its own making for a request it was handed', () => {
    // Fastify's own ids are `req-<n>`: every hop takes the id it was given instead.
    const own = accessLines().filter((l) => /^req-\d+$/.test(l.request_id));
    expect(own).toEqual([]);
  });
});
