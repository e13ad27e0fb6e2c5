// The request log's writer (rest-compat/request-log.ts) as several front doors run it: each holds its rows in memory
// (a request never waits on the database), writes them in batches into the platform database, and together they keep
// each project's newest N rows; stopping a front door writes what it still holds. Read back through the tenant
// subgraph as the owning tenant would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import type { Principal } from '../../../platform/auth.ts';
import { createLogger } from '../../../platform/logger.ts';
import { notePrincipal, startRequestLog, type RequestLog } from '../../../rest-compat/request-log.ts';
import { startTenantHarness, type Harness, type SignedIn } from '../../../subgraphs/tenant/testing.ts';

const KEEP = 5;
const CREATE = 'mutation($name: String!) { createProject(input: { name: $name }) { id apiKey } }';
const LOG = `query($id: ID!) { projectRequests(projectId: $id, first: 200) { items { at method route status requestId credential } } }`;

let h: Harness;
let owner: SignedIn;
let projectId = '';
let db: pg.Client;
const doors: { app: FastifyInstance; log: RequestLog }[] = [];

/** A front door: one route acting for the project with its secret key; its rows written only when flushed. */
async function frontDoor(principal: () => Principal): Promise<{ app: FastifyInstance; log: RequestLog }> {
  const app = Fastify({ genReqId: (req) => String(req.headers['x-request-id']) });
  // A flush interval no test outlasts: rows are written when the test says so.
  const log = startRequestLog(app, {
    url: h.databaseUrl,
    keep: KEEP,
    logger: createLogger('silent'),
    flushEveryMs: 3_600_000,
  });
  app.get('/things/:id', async (req) => {
    notePrincipal(req, principal());
    return { ok: true, secret: 'never-logged-answer' };
  });
  await app.ready();
  const door = { app, log };
  doors.push(door);
  return door;
}

const rowsOf = async () =>
  (
    await h.data<{ projectRequests: { items: { requestId: string; route: string; credential: string }[] } }>(
      LOG,
      { id: projectId },
      owner.principal,
    )
  ).projectRequests.items;

beforeAll(async () => {
  h = await startTenantHarness();
  owner = await h.newTenant();
  projectId = (await h.data<{ createProject: { id: string } }>(CREATE, { name: 'Logged' }, owner.principal))
    .createProject.id;
  db = new pg.Client({ connectionString: h.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  for (const d of doors) await d.app.close();
  for (const d of doors) await d.log.stop();
  await db?.end();
  await h?.close();
});

describe('the request log across front doors', () => {
  it('answers a request before its row is written, and writes it on the next flush', async () => {
    const one = await frontDoor(() => ({ kind: 'project', projectId, tenantId: owner.tenantId }));
    const res = await one.app.inject({
      method: 'GET',
      url: '/things/1?token=query-secret',
      headers: { 'x-request-id': 'req-held-1' },
    });
    expect(res.statusCode).toBe(200);
    expect((await db.query('select count(*)::int as n from request_log')).rows[0].n).toBe(0);
    await one.log.flush();
    expect((await rowsOf()).map((r) => [r.requestId, r.route, r.credential])).toEqual([
      ['req-held-1', '/things/:id', 'secret_key'],
    ]);
    expect(JSON.stringify((await db.query('select * from request_log')).rows)).not.toMatch(/query-secret|never-logged/);
  });

  it('two front doors write into one log, which keeps the newest rows of the project', async () => {
    const [a, b] = [doors[0]!, await frontDoor(() => ({ kind: 'publishable', projectId, tenantId: owner.tenantId }))];
    for (let i = 0; i < 4; i++) {
      await a.app.inject({ method: 'GET', url: `/things/${i}`, headers: { 'x-request-id': `req-a-${i}` } });
      await b.app.inject({ method: 'GET', url: `/things/${i}`, headers: { 'x-request-id': `req-b-${i}` } });
    }
    await Promise.all([a.log.flush(), b.log.flush()]);
    const rows = await rowsOf();
    expect(rows).toHaveLength(KEEP);
    const ids = rows.map((r) => r.requestId);
    expect(ids.some((id) => id.startsWith('req-a-'))).toBe(true);
    expect(ids.some((id) => id.startsWith('req-b-'))).toBe(true);
    expect(new Set(rows.map((r) => r.credential))).toEqual(new Set(['secret_key', 'publishable_key']));
    expect(ids).not.toContain('req-held-1'); // the oldest went
  });

  it('a front door that stops writes what it still holds', async () => {
    const c = await frontDoor(() => ({ kind: 'anonymous' }));
    const d = await frontDoor(() => ({ kind: 'user', projectId, userId: 'u', clientId: 'c', scopes: [], mfa: false }));
    await c.app.inject({ method: 'GET', url: '/things/1', headers: { 'x-request-id': 'req-nobody' } }); // no project
    await d.app.inject({ method: 'GET', url: '/things/1', headers: { 'x-request-id': 'req-last-words' } });
    await d.log.stop();
    await c.log.stop();
    const rows = await rowsOf();
    expect(rows[0]).toMatchObject({ requestId: 'req-last-words', credential: 'user_token' });
    expect(rows.map((r) => r.requestId)).not.toContain('req-nobody');
  });

  it('drops the rows of a project that no longer exists instead of failing the batch', async () => {
    const gone = '00000000-0000-4000-8000-000000000000';
    const e = await frontDoor(() => ({ kind: 'project', projectId: gone, tenantId: owner.tenantId }));
    const f = doors[0]!;
    await e.app.inject({ method: 'GET', url: '/things/1', headers: { 'x-request-id': 'req-ghost' } });
    await f.app.inject({ method: 'GET', url: '/things/2', headers: { 'x-request-id': 'req-real' } });
    await Promise.all([e.log.flush(), f.log.flush()]);
    expect((await db.query('select count(*)::int as n from request_log where project_id = $1', [gone])).rows[0].n).toBe(
      0,
    );
    expect((await rowsOf())[0]!.requestId).toBe('req-real');
  });
});
