// Every change that ends a credential is announced to every process (`credentials.changed`, delivered at
// commit), so credential caches elsewhere drop it. Listened to here over a plain LISTEN connection, as
// another process would hear it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { openBroadcast } from '../../../platform/broadcast.ts';
import { startTenantHarness, type Harness, type SignedIn } from '../../../subgraphs/tenant/testing.ts';
import { withOtherInstance } from './tenant-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

const CREATE = 'mutation($name: String!) { createProject(input: { name: $name }) { id apiKey } }';
const DELETE = 'mutation($id: ID!) { deleteProject(id: $id) }';
const REGENERATE = 'mutation($id: ID!) { regenerateProjectKey(id: $id) { id apiKey } }';
const LOGOUT = 'mutation { logout }';
const REFRESH = 'mutation($t: String!) { refreshSession(refreshToken: $t) { accessToken refreshToken } }';
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

type Heard = { topic: string; payload: Record<string, unknown> };

let h: Harness;
let listener: pg.Client;
let heard: Heard[] = [];
const markersHeard = new Set<string>();
let markers = 0;

/**
 * What was announced on `credentials.changed` by the changes committed so far: a marker is notified on the channel
 * after them and waited for. PostgreSQL delivers a channel's notifications in commit order, so once the marker is
 * heard every earlier announcement has been (and a change that announced nothing has, provably, announced nothing).
 */
async function announced(): Promise<Record<string, unknown>[]> {
  const marker = `test-marker:${markers++}`;
  await listener.query(`select pg_notify('tessera_broadcast', $1)`, [marker]);
  await waitFor(() => markersHeard.has(marker), { message: `the marker ${marker}` });
  return heard.filter((m) => m.topic === 'credentials.changed').map((m) => m.payload);
}

beforeAll(async () => {
  h = await startTenantHarness();
  listener = new pg.Client({ connectionString: h.databaseUrl });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.payload?.startsWith('test-marker:')) markersHeard.add(n.payload);
    else heard.push(openBroadcast(n.payload!) as Heard);
  });
  await listener.query('listen tessera_broadcast');
});

afterAll(async () => {
  await listener?.end();
  await h?.close();
});

beforeEach(() => {
  heard = [];
});

async function project(as: SignedIn): Promise<{ id: string; apiKey: string }> {
  return (await h.data(CREATE, { name: 'Shop' }, as.principal)).createProject;
}

describe('credentials.changed', () => {
  it('is announced for the project when its API key is regenerated', async () => {
    const t = await h.newTenant();
    const p = await project(t);
    heard = [];
    await h.data(REGENERATE, { id: p.id }, t.principal);
    expect(await announced()).toEqual([{ projectId: p.id }]);
  });

  it('is announced for the project when it is deleted, and not when the delete fails', async () => {
    const t = await h.newTenant();
    const p = await project(t);
    heard = [];
    expect(await h.code(DELETE, { id: UNKNOWN_ID }, t.principal)).toBe('NOT_FOUND');
    expect(await announced()).toEqual([]);
    await h.data(DELETE, { id: p.id }, t.principal);
    expect(await announced()).toEqual([{ projectId: p.id }]);
  });

  it('is announced for the session when it logs out', async () => {
    const t = await h.newTenant();
    await h.data(LOGOUT, {}, t.principal);
    expect(await announced()).toEqual([{ sessionIds: [(t.principal as { sessionId: string }).sessionId] }]);
  });

  it('is announced for the session revoked because a rotated refresh token came back', async () => {
    const t = await h.newTenant();
    await h.run(REFRESH, { t: t.refreshToken }, undefined, '203.0.113.1');
    expect(await announced()).toEqual([]);
    // From another address: the reuse interval's same pair is only for the client that rotated it.
    expect((await h.run(REFRESH, { t: t.refreshToken }, undefined, '198.51.100.7')).errors?.[0]?.extensions?.code).toBe(
      'INVALID_TOKEN',
    );
    expect(await announced()).toEqual([{ sessionIds: [(t.principal as { sessionId: string }).sessionId] }]);
  });

  it('is announced for everything when the signing keys rotate (the previous key retires)', async () => {
    await withOtherInstance(h, async (services) => {
      heard = [];
      await services.signingKeys.rotate();
      expect(await announced()).toEqual([{ all: true }]);
    });
  });
});
