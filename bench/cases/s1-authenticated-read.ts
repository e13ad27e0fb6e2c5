// S1: the front door's authenticated REST read against the same two statements run bare.
import { client } from '../../tests/support/http.ts';
import type { BenchCase } from './types.ts';

function claims(jwt: string): Record<string, string> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, string>;
}

export const s1: BenchCase = {
  id: 'S1',
  title: 'REST authenticated read: GET /auth/api/v1/projects/:id (tenant token)',
  peer: 'node:http + pg floor (same two statements)',
  goal: '>= 0.6x floor',
  async setup(ctx) {
    const call = client(ctx.tessera);
    const email = `bench-${Date.now()}@example.com`;
    await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password: 'bench password 123' } });
    const login = await call('POST', '/auth/api/v1/tenant/login', { body: { email, password: 'bench password 123' } });
    const token = login.body.access_token as string;
    const project = (await call('POST', '/auth/api/v1/projects', { token, body: { name: 'bench' } })).body.project;
    const c = claims(token);
    return {
      tessera: {
        url: `${ctx.tessera}/auth/api/v1/projects/${project.id}`,
        method: 'GET',
        headers: { authorization: `Bearer ${token}` },
      },
      peer: { url: `${ctx.floor}/project?sid=${c.sid}&tenant=${c.sub}&id=${project.id}`, method: 'GET' },
    };
  },
};
