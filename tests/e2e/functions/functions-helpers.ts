// Shared set-up of the edge-functions end-to-end tests: a started platform, a tenant with projects,
// and small helpers. Not a test file itself.
import { expect } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';

export type Call = ReturnType<typeof client>;
export type EdgeWorld = {
  p: TestPlatform;
  call: Call;
  token: string;
  projectId: string;
  apiKey: string;
  other: { projectId: string; apiKey: string };
};

let counter = 0;

/** Starts one-process Tessera and makes a tenant with two projects. */
export async function startEdgeWorld(env: Record<string, string> = {}): Promise<EdgeWorld> {
  const p = await startOneProcess(env);
  const call = client(p.url);
  const email = `edge${++counter}-${Date.now()}@example.com`;
  await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'a long password' } });
  const token = (await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'a long password' } })).body
    .access_token as string;
  const mk = async (name: string) => {
    const res = await call('POST', '/auth/api/v1/projects', { token, body: { name } });
    expect(res.status).toBe(201);
    return { projectId: res.body.project.id as string, apiKey: res.body.project.api_key as string };
  };
  const main = await mk('Main');
  const other = await mk('Other');
  return { p, call, token, ...main, other };
}

/** Asserts the REST error shape and status. */
export function expectError(res: Res, status: number, code: string, mentions?: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  if (mentions) expect(res.body.error.message).toMatch(mentions);
}
