// Test harness for the tenant subgraph: a started subgraph on a fresh database, and shortcuts to call
// it as any principal. Used by tests/integration/tenant/*.test.ts; never imported by the app.
import os from 'node:os';
import { generate } from 'otplib';
import type { Principal, RequestContext } from '../../platform/auth.ts';
import { loadConfig, type Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import {
  startSubgraph,
  type ExecutionResultJson,
  type RouterClient,
  type RunningSubgraph,
} from '../../platform/subgraph.ts';
import { createTestDatabase, stopOwnServer } from '../../tests/support/database.ts';
import { tenantSubgraph } from './index.ts';

export type Harness = {
  subgraph: RunningSubgraph;
  databaseUrl: string;
  config: Config;
  /** Runs an operation as `principal` (anonymous by default), from the client address `ip` when given. */
  run: (
    query: string,
    variables?: Record<string, unknown>,
    principal?: Principal,
    ip?: string,
  ) => Promise<ExecutionResultJson>;
  /** Runs an operation and returns its data; throws with the errors otherwise. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- results are checked by expect(), not by types
  data: <T = Record<string, any>>(
    query: string,
    variables?: Record<string, unknown>,
    principal?: Principal,
  ) => Promise<T>;
  /** The error code of the first error of an operation that must fail. */
  code: (query: string, variables?: Record<string, unknown>, principal?: Principal) => Promise<string | undefined>;
  /** The router's check of a credential, as the internal principal. */
  authenticate: (credential: { apiKey?: string; token?: string }) => Promise<ExecutionResultJson>;
  /**
   * The tables each project's database has, as the data domain would answer `_projectTables` (the tenant subgraph asks
   * it before turning a realtime switch on). This harness has no data domain: the test says which tables exist; the
   * real answer is checked end to end (tests/e2e/tenant/tenant-scenario.ts, tests/e2e/data/data-realtime.test.ts).
   */
  projectTables: Map<string, string[]>;
  /** Signs up and logs in a fresh tenant; returns its tokens and its principal. */
  newTenant: (email?: string) => Promise<SignedIn>;
  close: () => Promise<void>;
};

export type SignedIn = {
  email: string;
  password: string;
  tenantId: string;
  accessToken: string;
  refreshToken: string;
  principal: Principal;
};

export const INTERNAL: Principal = { kind: 'internal' };
export const ANONYMOUS: Principal = { kind: 'anonymous' };

export const SIGNUP =
  'mutation($input: SignupInput!) { signup(input: $input) { tenant { id email name mfaEnabled createdAt plan { id } } } }';
export const LOGIN =
  'mutation($input: LoginInput!) { login(input: $input) { accessToken refreshToken tokenType expiresIn tenant { id email mfaEnabled } } }';
export const AUTHENTICATE =
  'query($apiKey: String, $token: String) { _authenticate(apiKey: $apiKey, token: $token) { kind tenantId projectId sessionId } }';

let counter = 0;

/** Starts the tenant subgraph on a new database of the test server. */
export async function startTenantHarness(): Promise<Harness> {
  const db = await createTestDatabase();
  const config = loadConfig({
    TESSERA_INTERNAL_SECRET: 'x'.repeat(40),
    TESSERA_DATA_DIR: os.tmpdir(),
    TESSERA_DEFAULT_PLAN: process.env.TESSERA_DEFAULT_PLAN ?? 'free',
  });
  const projectTables = new Map<string, string[]>();
  // Only the operation the tenant subgraph asks of another domain is answered; anything else is a test's mistake.
  const router: RouterClient = {
    run: async (query, variables) => {
      if (!query.includes('TenantProjectTables')) throw new Error(`the tenant harness has no router for: ${query}`);
      return { data: { _projectTables: projectTables.get(variables.projectId as string) ?? [] } };
    },
  };
  const subgraph = await startSubgraph(tenantSubgraph, {
    config,
    databaseUrl: db.url,
    logger: createLogger('silent'),
    router,
  });

  const run: Harness['run'] = async (query, variables, principal = ANONYMOUS, ip) => {
    const ctx: RequestContext = { requestId: `test-${++counter}`, principal, ...(ip ? { ip } : {}) };
    return await subgraph.execute(query, variables, ctx);
  };
  const data: Harness['data'] = async (query, variables, principal) => {
    const result = await run(query, variables, principal);
    if (result.errors?.length) throw new Error(`operation failed: ${JSON.stringify(result.errors)}`);
    return result.data as never;
  };
  const code: Harness['code'] = async (query, variables, principal) => {
    const result = await run(query, variables, principal);
    return result.errors?.[0]?.extensions?.code as string | undefined;
  };
  const authenticate: Harness['authenticate'] = async (credential) => await run(AUTHENTICATE, credential, INTERNAL);

  const newTenant: Harness['newTenant'] = async (email = `dev${++counter}-${Date.now()}@example.com`) => {
    const password = 'correct horse battery';
    await data(SIGNUP, { input: { email, password, name: 'Dev' } });
    const { login } = await data(LOGIN, { input: { email, password } });
    const auth = await data(AUTHENTICATE, { token: login.accessToken }, INTERNAL);
    const p = auth._authenticate;
    return {
      email,
      password,
      tenantId: p.tenantId,
      accessToken: login.accessToken,
      refreshToken: login.refreshToken,
      principal: { kind: 'tenant', tenantId: p.tenantId, sessionId: p.sessionId },
    };
  };

  return {
    subgraph,
    databaseUrl: db.url,
    config,
    run,
    data,
    code,
    authenticate,
    projectTables,
    newTenant,
    async close() {
      await subgraph.close();
      await db.drop();
      await stopOwnServer();
    },
  };
}

const STEP = 30;

/** Waits, if needed, so that the next few seconds stay inside one TOTP time step. */
export async function awayFromStepBoundary(margin = 5): Promise<void> {
  const into = (Date.now() / 1000) % STEP;
  if (into > STEP - margin) await new Promise((r) => setTimeout(r, (STEP - into + 0.2) * 1000));
}

/** The TOTP code of `secret` for the time step `offset` steps from now (-1, 0 or +1 are accepted). */
export async function totp(secret: string, offset = 0): Promise<string> {
  return await generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * STEP });
}
