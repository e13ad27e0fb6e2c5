// Attacks on outbound event webhooks and the other issue-17 surfaces: a subscription aimed at internal addresses
// (refused at creation, or at delivery for a name that resolves there: the internal server is never reached), another
// project's subscriptions, deliveries, executions and idempotency keys, credentials that may not manage them, and a
// flood of subscriptions. Each row checks the neighbour intact.
import os from 'node:os';
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { startEdgeWorld, type EdgeWorld } from '../e2e/functions/functions-helpers.ts';
import { newProject, passwordGrant, registerUser } from '../e2e/identity/identity-fixtures.ts';
import { attackTable, type Attack } from './attack-table.ts';
import { startInternalServer, type InternalServer } from '../support/internal-server.ts';
import { waitFor } from '../support/wait-for.ts';

let w: EdgeWorld;
let internal: InternalServer;
let victim: { id: string; secret: string };
let victimExecution: string;
let publishableKey: string;
let userToken: string;
const SUBS = '/edge/api/v1/event-subscriptions';

beforeAll(async () => {
  internal = await startInternalServer();
  w = await startEdgeWorld();
  // The neighbour: the other project's subscription and a failed execution of its own.
  const sub = await w.call('POST', SUBS, {
    apiKey: w.other.apiKey,
    body: { url: 'https://hooks.example.com/tessera', events: ['user.registered'] },
  });
  expect(sub.status).toBe(201);
  victim = sub.body.event_subscription;
  await w.call('POST', '/edge/api/v1/functions', {
    apiKey: w.other.apiKey,
    body: { name: 'private', steps: [{ name: 'read', kind: 'Database', query: { action: 'find', table: 'nope' } }] },
  });
  victimExecution = (
    await w.call('POST', '/edge/api/v1/invoke/private', { apiKey: w.other.apiKey, body: { card: '4242' } })
  ).body.error.details.execution_id;
  // Browser and end-user credentials of the attacker's own project.
  const project = await newProject(w.p.url);
  publishableKey = (await w.call('GET', `/auth/api/v1/projects/${project.id}`, { token: project.tenantToken })).body
    .project.publishable_key;
  userToken = (await passwordGrant(w.p.url, project, await registerUser(w.p.url, project))).body.access_token;
}, 120_000);

afterAll(async () => {
  await w?.p.close();
  await internal?.close();
});

/** The neighbour's subscription is unchanged (same URL, enabled) and its secret still its own. */
const victimIntact = async () => {
  const got = await w.call('GET', `${SUBS}/${victim.id}`, { apiKey: w.other.apiKey });
  expect(got.body.event_subscription).toMatchObject({
    url: 'https://hooks.example.com/tessera',
    enabled: true,
    secret: null,
  });
};
const internalUntouched = async () => expect(internal.hits()).toBe(0);

describe('subscriptions aimed at internal addresses', () => {
  const targets: [string, string][] = [
    ['loopback IPv4', '127.0.0.1:9'],
    ['loopback written as 127.1', '127.1'],
    ['loopback in hex', '0x7f000001'],
    ['localhost', 'localhost'],
    ['localhost with a trailing dot', 'localhost.'],
    ['a name under localhost', 'api.localhost'],
    ['the cloud metadata address', '169.254.169.254'],
    ['a private address', '10.1.2.3'],
    ['IPv6 loopback', '[::1]'],
    ['IPv4-mapped IPv6 loopback', '[::ffff:127.0.0.1]'],
    ['6to4 carrying loopback', '[2002:7f00:1::]'],
  ];
  attackTable(
    targets.map(([what, host]) => ({
      name: `a subscription to ${what} (${host}) is refused when it is made`,
      attack: async () =>
        await w.call('POST', SUBS, {
          apiKey: w.apiKey,
          body: { url: `http://${host}/latest/meta-data`, events: ['execution.failed'] },
        }),
      refused: { status: 400, code: 'VALIDATION_FAILED' },
      intact: internalUntouched,
    })),
  );

  attackTable([
    {
      name: 'a subscription to a host name that resolves to loopback is accepted, but its deliveries are refused before any connection',
      attack: async () => {
        const made = await w.call('POST', SUBS, {
          apiKey: w.apiKey,
          body: { url: `http://${os.hostname()}:${internal.port}/internal`, events: ['execution.failed'] },
        });
        expect(made.status).toBe(201);
        const id = made.body.event_subscription.id as string;
        await w.call('POST', `${SUBS}/${id}/test`, { apiKey: w.apiKey });
        return await waitFor(async () => {
          const log = await w.call('GET', `${SUBS}/${id}/deliveries`, { apiKey: w.apiKey });
          const d = log.body.deliveries[0];
          if (!d?.last_error) return undefined;
          expect(d.last_error).toMatch(/refused/);
          expect(d.last_status_code).toBeNull();
          // Answered as the refusal the delivery met (the log's own answer is a 200).
          return { status: 400, body: { error: { code: 'VALIDATION_FAILED' } }, headers: new Headers() };
        });
      },
      refused: { status: 400, code: 'VALIDATION_FAILED' },
      intact: internalUntouched,
    },
  ]);
});

describe("another project's subscriptions, deliveries and executions", () => {
  const rows: Attack[] = [
    {
      name: "reads another project's subscription by id",
      attack: async () => await w.call('GET', `${SUBS}/${victim.id}`, { apiKey: w.apiKey }),
      refused: { status: 404, code: 'NOT_FOUND' },
      intact: victimIntact,
    },
    {
      name: "repoints another project's subscription at itself",
      attack: async () =>
        await w.call('PUT', `${SUBS}/${victim.id}`, {
          apiKey: w.apiKey,
          body: { url: 'https://attacker.example.com/steal' },
        }),
      refused: { status: 404, code: 'NOT_FOUND' },
      intact: victimIntact,
    },
    {
      name: "rotates another project's secret to learn the new one",
      attack: async () =>
        await w.call('POST', `${SUBS}/${victim.id}/rotate-secret`, {
          apiKey: w.apiKey,
          body: { secret: 'whsec_' + Buffer.from('attacker chosen secret!!').toString('base64') },
        }),
      refused: { status: 404, code: 'NOT_FOUND', notContaining: () => ['whsec_'] },
      intact: victimIntact,
    },
    {
      name: "deletes another project's subscription",
      attack: async () => await w.call('DELETE', `${SUBS}?id=${victim.id}`, { apiKey: w.apiKey }),
      refused: { status: 404, code: 'NOT_FOUND' },
      intact: victimIntact,
    },
    {
      name: "reads another project's delivery log",
      attack: async () => await w.call('GET', `${SUBS}/${victim.id}/deliveries`, { apiKey: w.apiKey }),
      refused: { status: 404, code: 'NOT_FOUND' },
      intact: victimIntact,
    },
    {
      name: "sends test events through another project's subscription",
      attack: async () => await w.call('POST', `${SUBS}/${victim.id}/test`, { apiKey: w.apiKey }),
      refused: { status: 404, code: 'NOT_FOUND' },
      intact: victimIntact,
    },
    {
      name: "replays another project's execution (and would read its input)",
      attack: async () =>
        await w.call('POST', `/edge/api/v1/executions/${victimExecution}/replay`, { apiKey: w.apiKey, body: {} }),
      refused: { status: 404, code: 'NOT_FOUND', notContaining: () => ['4242'] },
      intact: async () =>
        expect(
          (await w.call('GET', `/edge/api/v1/executions/${victimExecution}`, { apiKey: w.other.apiKey })).body.execution
            .status,
        ).toBe('failed'),
    },
    {
      name: "diffs its own execution against another project's",
      attack: async () => {
        const own = (
          await w.call('POST', '/edge/api/v1/functions', {
            apiKey: w.apiKey,
            body: { name: 'mine', steps: [{ name: 'x', kind: 'Transform', expression: 1 }] },
          })
        ).status;
        expect([201, 409]).toContain(own);
        const mine = (await w.call('POST', '/edge/api/v1/invoke/mine', { apiKey: w.apiKey, body: {} })).headers.get(
          'x-execution-id',
        );
        return await w.call('GET', `/edge/api/v1/executions/${mine}/diff/${victimExecution}`, { apiKey: w.apiKey });
      },
      refused: { status: 404, code: 'NOT_FOUND', notContaining: () => ['4242'] },
    },
  ];
  attackTable(rows);
});

describe('credentials that may not manage subscriptions', () => {
  attackTable([
    {
      name: 'no credentials list subscriptions',
      attack: async () => await w.call('GET', SUBS),
      refused: { status: 401, code: 'UNAUTHENTICATED' },
    },
    {
      name: 'the publishable key creates a subscription',
      attack: async () =>
        await w.call('POST', SUBS, {
          apiKey: publishableKey,
          body: { url: 'https://attacker.example.com/x', events: ['user.registered'] },
        }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'an end-user lists subscriptions',
      attack: async () => await w.call('GET', SUBS, { token: userToken }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: "the tenant's own token (not a project key) lists subscriptions",
      attack: async () => await w.call('GET', SUBS, { token: w.token }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
    {
      name: 'an end-user replays an execution',
      attack: async () =>
        await w.call('POST', `/edge/api/v1/executions/${victimExecution}/replay`, { token: userToken, body: {} }),
      refused: { status: 403, code: 'FORBIDDEN' },
    },
  ]);
});

describe('floods', () => {
  attackTable(
    [
      {
        name: 'a project makes more than 100 subscriptions',
        attack: async () => {
          for (let i = 0; i < 100; i++) {
            const r = await w.call('POST', SUBS, {
              apiKey: w.apiKey,
              body: { url: `https://hooks.example.com/${i}`, events: ['user.registered'] },
            });
            if (r.status !== 201) break;
          }
          return await w.call('POST', SUBS, {
            apiKey: w.apiKey,
            body: { url: 'https://hooks.example.com/one-too-many', events: ['user.registered'] },
          });
        },
        refused: { status: 409, code: 'CONFLICT' },
        intact: victimIntact,
      },
    ],
    120_000,
  );
});
