// The Idempotency-Key store on real PostgreSQL: what the HTTP tests cannot reach in a few seconds — a claim left by a
// process that died is taken over once its lease ran out (not 409 for a day), a key past its 24 hours belongs to
// the next request whatever its body, the sweep forgets expired keys, and a slow first run that lost its claim
// cannot overwrite the answer of the run that took it over.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import pg from 'pg';
import { AppError } from '../../../platform/errors.ts';
import {
  createIdempotency,
  fingerprintOf,
  IDEMPOTENCY_WINDOW_MS,
  type HttpAnswer,
} from '../../../subgraphs/functions/services/idempotency.ts';
import { createSql } from '../../../subgraphs/functions/services/sql.ts';
import { createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { openFunctionsTables } from './functions-fixtures.ts';

let db: { url: string; drop: () => Promise<void> };
let tables: Awaited<ReturnType<typeof openFunctionsTables>>;
let client: pg.Client;
let store: ReturnType<typeof createIdempotency>;
const projectId = crypto.randomUUID();

beforeAll(async () => {
  db = await createTestDatabase();
  tables = await openFunctionsTables(db.url);
  store = createIdempotency({ sql: createSql(tables.orm) });
  client = tables.client;
}, 60_000);

afterAll(async () => {
  await tables?.close();
  await db?.drop();
});

const answer = (n: number): HttpAnswer => ({ status: 200, body: { n }, headers: {} });
const req = (key: string, body = 'b', leaseMs = 60_000) => ({
  projectId,
  scope: 'invoke/f/project',
  key,
  fingerprint: fingerprintOf('invoke', body),
  leaseMs,
});
/** Waits until a claim for `key` is stored (the first run has claimed it). */
const claimed = async (key: string) =>
  void (await waitFor(
    async () => Boolean((await client.query('select 1 from function_idempotency where key = $1', [key])).rowCount),
    { timeoutMs: 10_000, intervalMs: 10, message: `a claim for ${key}` },
  ));
const codeOf = async (p: Promise<unknown>) =>
  await p.then(
    () => 'ran',
    (err: unknown) => (err instanceof AppError ? err.code : String(err)),
  );

it('takes over a claim whose lease ran out without an answer; a live claim is 409', async () => {
  // A first run claims the key and never answers (its process died): simulated by a work that never settles.
  void store.run(req('k-lease', 'b', 60_000), () => new Promise<HttpAnswer>(() => {}));
  await claimed('k-lease');
  expect(await codeOf(store.run(req('k-lease'), async () => answer(1)))).toBe('CONFLICT');
  await client.query(
    `update function_idempotency set claimed_until = now() - interval '1 second' where key = 'k-lease'`,
  );
  const taken = await store.run(req('k-lease'), async () => answer(2));
  expect(taken.body).toEqual({ n: 2 });
  expect((await store.run(req('k-lease'), async () => answer(3))).headers['x-idempotent-replay']).toBe('true');
});

it('lets a slow first run that lost its claim store nothing over the answer of the run that took it over', async () => {
  let finish!: (a: HttpAnswer) => void;
  const slow = store.run(req('k-slow', 'b', 60_000), () => new Promise<HttpAnswer>((r) => (finish = r)));
  await claimed('k-slow');
  await client.query(
    `update function_idempotency set claimed_until = now() - interval '1 second' where key = 'k-slow'`,
  );
  expect((await store.run(req('k-slow'), async () => answer(20))).body).toEqual({ n: 20 });
  finish(answer(10));
  expect((await slow).body).toEqual({ n: 10 });
  const replay = await store.run(req('k-slow'), async () => answer(30));
  expect(replay.body).toEqual({ n: 20 });
});

it('gives a key past its 24 hours to the next request, whatever its body, and the sweep deletes such keys', async () => {
  await store.run(req('k-old', 'first'), async () => answer(1));
  expect(await codeOf(store.run(req('k-old', 'second'), async () => answer(2)))).toBe('IDEMPOTENCY_KEY_REUSED');
  await client.query(
    `update function_idempotency set created_at = now() - make_interval(secs => $1) where key = 'k-old'`,
    [IDEMPOTENCY_WINDOW_MS / 1000 + 1],
  );
  expect((await store.run(req('k-old', 'second'), async () => answer(2))).body).toEqual({ n: 2 });
  await store.run(req('k-gone'), async () => answer(1));
  await client.query(
    `update function_idempotency set created_at = now() - make_interval(secs => $1) where key = 'k-gone'`,
    [IDEMPOTENCY_WINDOW_MS / 1000 + 1],
  );
  expect(await store.sweepExpired()).toBeGreaterThanOrEqual(1);
  const { rows } = await client.query(`select key from function_idempotency where key in ('k-gone', 'k-old')`);
  expect(rows.map((r) => r.key)).toEqual(['k-old']);
});

it('keeps keys stored before fingerprints existed (the old webhook table) replaying whatever the body', async () => {
  await client.query(
    `insert into function_idempotency (project_id, scope, key, response, created_at) values ($1, 'webhook/old', 'evt_old', $2::jsonb, now())`,
    [projectId, JSON.stringify(answer(7))],
  );
  const res = await store.run(
    {
      projectId,
      scope: 'webhook/old',
      key: 'evt_old',
      fingerprint: fingerprintOf('webhook', 'anything'),
      leaseMs: 1000,
    },
    async () => answer(8),
  );
  expect(res.body).toEqual({ n: 7 });
});
