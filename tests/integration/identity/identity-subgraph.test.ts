// The identity subgraph on its own (real PostgreSQL): who may call the internal operations, the public
// operations' guards, and the mail job's fallback when no SMTP server is configured.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import os from 'node:os';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Principal } from '../../../platform/auth.ts';
import { loadConfig } from '../../../platform/config.ts';
import { startSubgraph, type RunningSubgraph } from '../../../platform/subgraph.ts';
import { identitySubgraph } from '../../../subgraphs/identity/index.ts';
import { createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/wait-for.ts';

const PROJECT = '6c1e3a52-8f7e-4d0b-9a43-2d7f0c1b9e01';
const TENANT = '0b5b2f8e-2f9a-4c1e-8d3b-6a7c9e0f1a2b';
const CLIENT = {
  clientId: 'tsc_test',
  projectId: PROJECT,
  tenantId: TENANT,
  grantTypes: ['password', 'client_credentials', 'refresh_token', 'authorization_code'],
  redirectUris: ['https://app.example.com/cb'],
  public: false,
  allowedScopes: ['openid', 'profile', 'email', 'offline_access'],
};

let db: { url: string; drop: () => Promise<void> };
let sub: RunningSubgraph;
const logLines: Record<string, unknown>[] = [];
let n = 0;

const run = (query: string, variables: Record<string, unknown> = {}, principal: Principal = { kind: 'anonymous' }) =>
  sub.execute(query, variables, { requestId: `t${++n}`, principal, ip: '127.0.0.1' });

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({
    TESSERA_INTERNAL_SECRET: 'y'.repeat(40),
    TESSERA_DATA_DIR: os.tmpdir(),
    LOG_LEVEL: 'info',
  });
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        logLines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  sub = await startSubgraph(identitySubgraph, { config, databaseUrl: db.url, logger: pino({ level: 'info' }, sink) });
});

afterAll(async () => {
  await sub?.close();
  await db?.drop();
});

describe('the identity subgraph', () => {
  it('lets only the internal principal issue tokens or authenticate them', async () => {
    const issue =
      'mutation($c: OidcClientFactsInput!) { _issueTokens(client: $c, grant: { grantType: "client_credentials" }) { accessToken } }';
    for (const principal of [
      { kind: 'anonymous' },
      { kind: 'project', projectId: PROJECT, tenantId: TENANT },
    ] as Principal[]) {
      const res = await run(issue, { c: CLIENT }, principal);
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    const ok = await run(issue, { c: CLIENT }, { kind: 'internal' });
    const token = (ok.data as { _issueTokens: { accessToken: string } })._issueTokens.accessToken;
    const auth = 'query($t: String!) { _authenticateUser(token: $t) { kind projectId tenantId clientId scopes } }';
    expect((await run(auth, { t: token })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await run(auth, { t: token }, { kind: 'internal' })).data).toEqual({
      _authenticateUser: { kind: 'project', projectId: PROJECT, tenantId: TENANT, clientId: 'tsc_test', scopes: [] },
    });
    expect((await run(auth, { t: `${token}x` }, { kind: 'internal' })).errors?.[0]?.extensions?.code).toBe(
      'INVALID_TOKEN',
    );
  });

  it('refuses end-user operations to the wrong principals', async () => {
    expect((await run('{ endUser { id } }')).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(
      (await run('{ endUser { id } }', {}, { kind: 'project', projectId: PROJECT, tenantId: TENANT })).errors?.[0]
        ?.extensions?.code,
    ).toBe('FORBIDDEN');
    const register =
      'mutation { registerEndUser(input: { email: "a@example.com", password: "long enough pw" }) { id } }';
    expect((await run(register)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('logs a mail at info level, link included, when no SMTP server is configured', async () => {
    const project = { kind: 'project', projectId: PROJECT, tenantId: TENANT } as Principal;
    await run(
      'mutation { registerEndUser(input: { email: "mail@example.com", password: "long enough pw" }) { id } }',
      {},
      project,
    );
    const res = await run('mutation { requestEndUserPasswordReset(email: "mail@example.com") }', {}, project);
    expect(res.data).toEqual({ requestEndUserPasswordReset: true });
    const logged = await waitFor(
      () => logLines.find((l) => typeof l.msg === 'string' && l.msg.includes('mail logged instead of sent')),
      { timeoutMs: 10_000, intervalMs: 100, message: 'the logged mail' },
    );
    expect(logged).toMatchObject({ level: 30, to: 'mail@example.com', kind: 'password_reset' });
    expect(logged!.text).toMatch(/\/password\/reset\/confirm\?token=tpr_/);
  }, 20_000);
});
