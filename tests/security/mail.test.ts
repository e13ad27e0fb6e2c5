// Mail through the platform's sender: a project without SMTP settings of its own cannot make the platform send
// its functions' mail (to anyone, from the platform's address); the platform sender still carries the identity
// provider's own mails, and a project with its own settings sends through them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { client } from '../support/http.ts';
import {
  newProject,
  registerUser,
  startIdentityPlatform,
  startMailbox,
  type Project,
} from '../e2e/identity/identity-fixtures.ts';
import { attackTable } from './attack-table.ts';
import { waitFor } from '../support/wait-for.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let own: Awaited<ReturnType<typeof startMailbox>>;
let call: ReturnType<typeof client>;
let bare: Project;
let configured: Project;

const F = '/edge/api/v1';
const VICTIM = 'victim@example.org';

async function mailer(p: Project): Promise<void> {
  const as = { apiKey: p.apiKey };
  expect(
    (
      await call('POST', `${F}/email-templates`, {
        ...as,
        body: { name: 'spam', subject: 'You won {{ prize }}', text: 'Claim {{ prize }} now' },
      })
    ).status,
  ).toBe(201);
  const fn = await call('POST', `${F}/functions`, {
    ...as,
    body: {
      name: 'mailer',
      steps: [
        { name: 'send', kind: 'Email', template: 'spam', to: '{{ input.body.to }}', variables: { prize: 'a car' } },
      ],
    },
  });
  expect(fn.status).toBe(201);
  expect((await call('POST', `${F}/webhooks`, { ...as, body: { slug: 'mailer', function: 'mailer' } })).status).toBe(
    201,
  );
}

/**
 * Nothing reached the platform's mailbox for `to`. The identity provider's own mail, queued after the attack,
 * goes through the same queue and sender: once it has arrived, a mail queued by the attack would have too.
 */
async function platformSentNothingTo(to: string): Promise<void> {
  const marker = await registerUser(env.base, bare);
  expect(
    (await call('POST', '/password/reset/request', { apiKey: bare.apiKey, body: { email: marker.email } })).status,
  ).toBe(202);
  await env.mailbox.waitFor(marker.email, /Reset your password/);
  expect(env.mailbox.mails.filter((m) => m.to === to)).toEqual([]);
}

beforeAll(async () => {
  env = await startIdentityPlatform({ TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true' });
  own = await startMailbox();
  call = client(env.base);
  bare = await newProject(env.base);
  configured = await newProject(env.base);
  await mailer(bare);
  await mailer(configured);
  const port = new URL(own.url).port;
  expect(
    (
      await call('POST', `${F}/email-config`, {
        apiKey: configured.apiKey,
        body: { host: '127.0.0.1', port: Number(port), secure: false, from: 'Shop <shop@example.com>' },
      })
    ).status,
  ).toBe(200);
}, 90_000);

afterAll(async () => {
  await env?.close();
  await own?.close();
});

describe('mail through the platform sender', () => {
  attackTable([
    {
      name: 'a project without SMTP settings sends mail from a function (sync invoke)',
      attack: () => call('POST', `${F}/invoke/mailer`, { apiKey: bare.apiKey, body: { to: VICTIM } }),
      refused: { status: 409, code: 'EMAIL_NOT_CONFIGURED' },
      intact: () => platformSentNothingTo(VICTIM),
    },
    {
      name: 'the same, queued (async invoke): the run fails, nothing is sent',
      attack: async () => {
        const res = await call('POST', `${F}/invoke/mailer?async=true`, { apiKey: bare.apiKey, body: { to: VICTIM } });
        expect(res.status).toBe(202);
        const id = res.body.execution_id as string;
        const failed = async () => {
          const rec = await call('GET', `${F}/executions/${id}`, { apiKey: bare.apiKey });
          return rec.body.execution.status === 'failed' && rec;
        };
        const rec = await waitFor(failed, { intervalMs: 100, message: 'the queued run to fail' });
        return { ...rec, status: 409, body: { error: { code: rec.body.execution.error.code } } };
      },
      refused: { status: 409, code: 'EMAIL_NOT_CONFIGURED' },
      intact: () => platformSentNothingTo(VICTIM),
    },
    {
      name: 'the same, from an anonymous caller of its public webhook',
      attack: () => call('POST', `/webhooks/${bare.id}/mailer`, { body: { to: VICTIM } }),
      refused: { status: 502, code: 'FUNCTION_FAILED' },
      intact: () => platformSentNothingTo(VICTIM),
    },
    {
      name: 'the same in a dry run (which would show the mail as sendable)',
      attack: async () => {
        const res = await call('POST', `${F}/invoke/mailer?dry_run=true`, {
          apiKey: bare.apiKey,
          body: { to: VICTIM },
        });
        return {
          ...res,
          status: res.body.status === 'failed' ? 409 : 200,
          body: { error: { code: res.body.error?.code } },
        };
      },
      refused: { status: 409, code: 'EMAIL_NOT_CONFIGURED' },
    },
    {
      name: "a project without SMTP settings test-sends through the platform's",
      attack: () => call('POST', `${F}/email-config/test`, { apiKey: bare.apiKey, body: { to: VICTIM } }),
      refused: { status: 404, code: 'NOT_FOUND' },
      // (The identity provider's own mail still goes out through the platform sender: platformSentNothingTo waits for one.)
      intact: () => platformSentNothingTo(VICTIM),
    },
  ]);

  it("sends a configured project's mail through its own server, from its own address", async () => {
    const res = await call('POST', `${F}/invoke/mailer`, {
      apiKey: configured.apiKey,
      body: { to: 'customer@example.org' },
    });
    expect(res.status).toBe(200);
    const mail = await own.waitFor('customer@example.org', /You won a car/);
    expect(mail.raw).toMatch(/From: Shop <shop@example.com>/);
    await platformSentNothingTo('customer@example.org');
  });
});
