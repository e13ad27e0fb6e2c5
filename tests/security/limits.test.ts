// Plan limits are enforced, not only displayed: a project's requests per minute and function runs per month are
// answered 429 with Retry-After once spent, whatever credential or trigger it uses, and no other project is affected.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../support/platform.ts';
import { client, type Res } from '../support/http.ts';
import { newProject, passwordGrant, registerUser, type Project } from '../e2e/identity/identity-fixtures.ts';
import { attackTable } from './attack-table.ts';
import { waitFor } from '../support/wait-for.ts';

const RPM = 30;
const RUNS = 5;

let p: TestPlatform;
let call: ReturnType<typeof client>;
let busy: Project;
let runner: Project;
let neighbour: Project;

/** Waits until at least `seconds` are left in the current minute (the request windows are calendar minutes). */
async function roomInMinute(seconds: number): Promise<void> {
  await waitFor(() => 60 - new Date().getSeconds() >= seconds, {
    timeoutMs: 61_000,
    intervalMs: 250,
    message: `${seconds} s left in the minute`,
  });
}

const echo = { name: 'echo', steps: [{ name: 'a', kind: 'Transform', expression: { ok: true } }] };

beforeAll(async () => {
  p = await startOneProcess();
  // An operator's small plan, set before anyone reads the plans.
  const db = new pg.Client({ connectionString: p.tessera!.config.databaseUrl });
  await db.connect();
  await db.query(
    `update plans set max_requests_per_minute = $1, max_function_invocations_per_month = $2 where id = 'free'`,
    [RPM, RUNS],
  );
  await db.end();
  call = client(p.url);
  busy = await newProject(p.url);
  runner = await newProject(p.url);
  neighbour = await newProject(p.url);
  for (const project of [runner, neighbour]) {
    expect((await call('POST', '/edge/api/v1/functions', { apiKey: project.apiKey, body: echo })).status).toBe(201);
    expect(
      (
        await call('POST', '/edge/api/v1/webhooks', {
          apiKey: project.apiKey,
          body: { slug: 'echo', function: 'echo' },
        })
      ).status,
    ).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await p?.close();
});

describe("a project's requests per minute", () => {
  attackTable([
    {
      name: "a project sends more requests in a minute than its plan allows, with its API key and its end-users' tokens together",
      attack: async () => {
        const user = await registerUser(p.url, busy); // (the registration is one of the project's requests)
        const token = (await passwordGrant(p.url, busy, user)).body.access_token;
        await roomInMinute(20);
        const answers: Res[] = [];
        while (answers.length < RPM + 6) {
          answers.push(await call('GET', '/edge/api/v1/functions', { apiKey: busy.apiKey }));
          answers.push(await call('POST', '/v1/find', { token, body: { table: 'nothing' } }));
        }
        // Every request before the limit was served; every one after it refused.
        const first = answers.findIndex((a) => a.status === 429);
        expect(first).toBeGreaterThan(0);
        expect(first).toBeLessThanOrEqual(RPM);
        expect(answers.slice(first).map((a) => a.status)).toEqual(answers.slice(first).map(() => 429));
        return answers[first]!;
      },
      refused: { status: 429, code: 'RATE_LIMITED', headers: ['retry-after'] },
      intact: async () => {
        // Another project on the same plan is served.
        expect((await call('GET', '/edge/api/v1/functions', { apiKey: neighbour.apiKey })).status).toBe(200);
      },
    },
  ]);
});

describe("a project's function runs per month", () => {
  attackTable([
    {
      name: 'a project runs its functions more often in a month than its plan allows (invoke, async, dry run, webhook)',
      attack: async () => {
        for (let i = 0; i < RUNS; i++)
          expect((await call('POST', '/edge/api/v1/invoke/echo', { apiKey: runner.apiKey, body: {} })).status).toBe(
            200,
          );
        for (const query of ['', '?async=true', '?dry_run=true']) {
          const res = await call('POST', `/edge/api/v1/invoke/echo${query}`, { apiKey: runner.apiKey, body: {} });
          expect({ query, status: res.status, code: res.body?.error?.code }).toEqual({
            query,
            status: 429,
            code: 'RATE_LIMITED',
          });
        }
        return await call('POST', `/webhooks/${runner.id}/echo`, { body: {} });
      },
      refused: { status: 429, code: 'RATE_LIMITED', headers: ['retry-after'] },
      intact: async () => {
        expect((await call('POST', '/edge/api/v1/invoke/echo', { apiKey: neighbour.apiKey, body: {} })).status).toBe(
          200,
        );
        expect((await call('POST', `/webhooks/${neighbour.id}/echo`, { body: {} })).status).toBe(200);
        // The refused project still manages its functions.
        expect((await call('GET', '/edge/api/v1/functions', { apiKey: runner.apiKey })).status).toBe(200);
      },
    },
  ]);
});
