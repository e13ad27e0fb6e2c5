// E-mail through a real SMTP server on loopback (smtp-server from npm), and HTTP steps against a local
// server: retries with backoff and the function's timeout. Private targets are allowed here by configuration.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startEdgeWorld, expectError, type EdgeWorld } from './functions-helpers.ts';
import { waitFor } from '../../support/wait-for.ts';

const F = '/edge/api/v1';
type Received = { from: string; to: string[]; data: string; user?: string };

describe('e-mail and outbound HTTP', () => {
  let w: EdgeWorld;
  let smtp: SMTPServer;
  let smtpPort: number;
  const mails: Received[] = [];
  let web: http.Server;
  /** Requests to /slow, answered only when the file ends. */
  const held: http.ServerResponse[] = [];
  let webUrl: string;
  let flakyCalls = 0;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onAuth: (auth, _session, cb) =>
        auth.username === 'mailer' && auth.password === 'smtp-pass'
          ? cb(null, { user: auth.username })
          : cb(new Error('Invalid username or password')),
      onData: (stream, session, cb) => {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString()));
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            data,
            user: session.user as string | undefined,
          });
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    smtpPort = (smtp.server.address() as AddressInfo).port;
    web = http.createServer((req, res) => {
      if (req.url === '/flaky') {
        flakyCalls++;
        if (flakyCalls < 3) return res.writeHead(503).end('busy');
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ok: true, calls: flakyCalls }));
      }
      // Never answered while the test runs: a run that reaches its end did so without this step finishing.
      if (req.url === '/slow') return void held.push(res);
      if (req.url === '/teapot')
        return res.writeHead(418, { 'content-type': 'application/json' }).end('{"short":"and stout"}');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    w = await startEdgeWorld({ TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true' });
  }, 60_000);

  afterAll(async () => {
    await w?.p.close();
    await new Promise<void>((r) => smtp.close(() => r()));
    for (const res of held) res.writeHead(200).end('late');
    web?.close();
  });

  it('sends a test e-mail through the project SMTP settings, and reports a refusal as 502', async () => {
    const { call, apiKey } = w;
    const set = await call('POST', `${F}/email-config`, {
      apiKey,
      body: {
        host: '127.0.0.1',
        port: smtpPort,
        secure: false,
        user: 'mailer',
        password: 'smtp-pass',
        from: 'Shop <shop@example.com>',
      },
    });
    expect(set.status).toBe(200);
    const res = await call('POST', `${F}/email-config/test`, { apiKey, body: { to: 'owner@example.com' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sent: true, message_id: expect.any(String) });
    expect(mails.at(-1)).toMatchObject({ from: 'shop@example.com', to: ['owner@example.com'], user: 'mailer' });
    expect(mails.at(-1)!.data).toMatch(/Subject: Tessera test e-mail/);
    // Re-saving without a password keeps the stored one.
    await call('POST', `${F}/email-config`, {
      apiKey,
      body: { host: '127.0.0.1', port: smtpPort, user: 'mailer', from: 'shop@example.com' },
    });
    expect((await call('POST', `${F}/email-config/test`, { apiKey, body: { to: 'again@example.com' } })).status).toBe(
      200,
    );
    await call('POST', `${F}/email-config`, {
      apiKey,
      body: { host: '127.0.0.1', port: smtpPort, user: 'mailer', password: 'wrong', from: 'shop@example.com' },
    });
    expectError(
      await call('POST', `${F}/email-config/test`, { apiKey, body: { to: 'x@example.com' } }),
      502,
      'UPSTREAM_FAILED',
      /SMTP/,
    );
    await call('POST', `${F}/email-config`, {
      apiKey,
      body: { host: '127.0.0.1', port: smtpPort, user: 'mailer', password: 'smtp-pass', from: 'shop@example.com' },
    });
  });

  it('gives the identity domain the project SMTP settings through the internal seam only', async () => {
    const res = await w.call('POST', '/graphql', {
      apiKey: w.apiKey,
      body: { query: `{ _emailConfig(projectId: "${w.projectId}") { host password } }` },
    });
    expect(res.status).toBe(400);
    const internal = await w.p.tessera!.router.run(
      `query { _emailConfig(projectId: "${w.projectId}") { host port user password from } }`,
      {},
      { requestId: 't', principal: { kind: 'internal' } },
    );
    expect(internal.data?._emailConfig).toEqual({
      host: '127.0.0.1',
      port: smtpPort,
      user: 'mailer',
      password: 'smtp-pass',
      from: 'shop@example.com',
    });
    const asProject = await w.p.tessera!.router.run(
      `query { _emailConfig(projectId: "${w.projectId}") { host } }`,
      {},
      { requestId: 't', principal: { kind: 'project', projectId: w.projectId, tenantId: 'x' } },
    );
    expect(asProject.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('an Email step renders the template and a queued job sends it', async () => {
    const { call, apiKey } = w;
    await call('POST', `${F}/email-templates`, {
      apiKey,
      body: {
        name: 'receipt',
        subject: 'Receipt {{ order }}',
        html: '<p>Thanks {{ name }}</p>',
        text: 'Thanks {{ name }}',
      },
    });
    await call('POST', `${F}/functions`, {
      apiKey,
      body: {
        name: 'mailer',
        steps: [
          {
            name: 'mail',
            kind: 'Email',
            template: 'receipt',
            to: '{{ input.body.email }}',
            variables: { name: '{{ input.body.name }}', order: 'A-{{ input.body.order }}' },
          },
        ],
      },
    });
    const dry = await call('POST', `${F}/invoke/mailer?dry_run=true`, {
      apiKey,
      body: { email: 'dry@example.com', name: 'Dry', order: 1 },
    });
    expect(dry.body.output).toEqual({
      queued: false,
      template: 'receipt',
      to: ['dry@example.com'],
      subject: 'Receipt A-1',
    });
    const res = await call('POST', `${F}/invoke/mailer`, {
      apiKey,
      body: { email: 'ada@example.com', name: 'Ada', order: 7 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ queued: true, template: 'receipt', to: ['ada@example.com'], subject: 'Receipt A-7' });
    const mail = await waitFor(async () => mails.find((m) => m.to.includes('ada@example.com')));
    expect(mail.data).toMatch(/Subject: Receipt A-7/);
    expect(mail.data).toMatch(/Thanks Ada/);
    // Ada's mail, queued after the dry run, has arrived: the dry run's would have been queued first.
    expect(mails.some((m) => m.to.includes('dry@example.com'))).toBe(false);
    const missing = await call('POST', `${F}/functions`, {
      apiKey,
      body: { name: 'nomail', steps: [{ name: 'mail', kind: 'Email', template: 'ghost', to: 'a@example.com' }] },
    });
    expect(missing.status).toBe(201);
    expectError(
      await call('POST', `${F}/invoke/nomail`, { apiKey }),
      502,
      'FUNCTION_FAILED',
      /no e-mail template named "ghost"/,
    );
  });

  it('retries an HTTP step on 5xx with backoff, logging every attempt', async () => {
    const { call, apiKey } = w;
    await call('POST', `${F}/functions`, {
      apiKey,
      body: {
        name: 'retrying',
        steps: [{ name: 'call', kind: 'HTTP', retries: 3, request: { url: `${webUrl}/flaky` } }],
      },
    });
    const res = await call('POST', `${F}/invoke/retrying`, { apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, calls: 3 });
    const events = await call('GET', `${F}/executions/${res.headers.get('x-execution-id')}/events`, { apiKey });
    expect(events.body.events.map((e: { type: string; attempt: number }) => `${e.type}:${e.attempt}`)).toEqual([
      'started:1',
      'failed:1',
      'started:2',
      'failed:2',
      'started:3',
      'succeeded:3',
    ]);
    const gap = Date.parse(events.body.events[2].at) - Date.parse(events.body.events[1].at);
    expect(gap).toBeGreaterThanOrEqual(150);
  });

  it('answers a 4xx as the step result and fails a step past its retries', async () => {
    const { call, apiKey } = w;
    await call('POST', `${F}/functions`, {
      apiKey,
      body: {
        name: 'teapot',
        steps: [
          { name: 'call', kind: 'HTTP', request: { url: `${webUrl}/teapot` } },
          {
            name: 'out',
            kind: 'Transform',
            expression: { status: '{{ steps.call.status }}', body: '{{ steps.call.body }}' },
          },
        ],
      },
    });
    expect((await call('POST', `${F}/invoke/teapot`, { apiKey })).body).toEqual({
      status: 418,
      body: { short: 'and stout' },
    });
    flakyCalls = -100;
    await call('POST', `${F}/functions`, {
      apiKey,
      body: {
        name: 'giveup',
        steps: [{ name: 'call', kind: 'HTTP', retries: 1, request: { url: `${webUrl}/flaky` } }],
      },
    });
    expectError(await call('POST', `${F}/invoke/giveup`, { apiKey }), 502, 'FUNCTION_FAILED', /answered 503/);
  });

  it('stops a run at the function timeout with 504 and records it', async () => {
    const { call, apiKey } = w;
    await call('POST', `${F}/functions`, {
      apiKey,
      body: {
        name: 'slow',
        timeout_ms: 400,
        steps: [{ name: 'wait', kind: 'HTTP', request: { url: `${webUrl}/slow`, timeout_ms: 10000 } }],
      },
    });
    // /slow never answers while the test runs and the step would give up only after 10 s with its own error: an answer
    // naming the function's 400 ms timeout can only come from the timeout stopping the run.
    const res = await call('POST', `${F}/invoke/slow`, { apiKey });
    expectError(res, 504, 'FUNCTION_TIMEOUT', /400 ms/);
    const e = await call('GET', `${F}/executions/${res.body.error.details.execution_id}`, { apiKey });
    expect(e.body.execution).toMatchObject({ status: 'failed', error: { code: 'FUNCTION_TIMEOUT', step: 'wait' } });
  });
});
