// Bench set-up through the public API: a tenant on a given plan, and a project of it.
import pg from 'pg';
import { client } from '../../tests/support/http.ts';
import type { BenchContext } from '../cases/types.ts';

const PASSWORD = 'bench password 123';

/**
 * Signs up a tenant `bench-<name>-<time>@example.com`, moves it to `plan` as an operator would (plans are assigned by
 * the operator: there is no API), and logs it in; answers its email and access token.
 */
export async function planTenant(
  ctx: BenchContext,
  plan: string,
  name: string,
): Promise<{ email: string; token: string }> {
  const call = client(ctx.tessera);
  const email = `bench-${name}-${Date.now()}@example.com`;
  const signup = await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: PASSWORD } });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.body)}`);
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    const moved = await db.query(`update tenants set plan_id = $2 where email = $1`, [email, plan]);
    if (moved.rowCount !== 1) throw new Error(`no tenant ${email} to move to plan ${plan}`);
  } finally {
    await db.end();
  }
  const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: PASSWORD } });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  return { email, token: login.body.access_token as string };
}

/** A tenant on `plan` (see planTenant) with one project named `bench-<name>`; answers the project's id and API key. */
export async function planProject(
  ctx: BenchContext,
  plan: string,
  name: string,
): Promise<{ id: string; apiKey: string }> {
  const { token } = await planTenant(ctx, plan, name);
  const created = await client(ctx.tessera)('POST', '/auth/api/v1/projects', {
    token,
    body: { name: `bench-${name}` },
  });
  if (created.status !== 201) throw new Error(`project: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.project.id as string, apiKey: created.body.project.api_key as string };
}
