// P5-login: password-grant logins/s (argon2id at OWASP parameters: 19 MiB, 2 passes, 1 lane) against
// Parse Server 9's login on the same PostgreSQL. Every request is a full, successful login: password
// check plus a new session (Tessera: session row, refresh token, signed access token; Parse: _Session row).
// Only failed checks count toward Tessera's sign-in rate limit, so repeated good logins are never 429.
import path from 'node:path';
import { client } from '../../tests/support/http.ts';
import type { BenchCase } from './types.ts';
import { FORM, basic, identityProject, postForm } from './p4-setup.ts';

const PEER = path.resolve(import.meta.dirname, '..', 'peers', 'parse-login.ts');
const APP_ID = 'bench';

export const p5Login: BenchCase = {
  id: 'P5-login',
  title: 'POST /token grant_type=password (argon2id, OWASP parameters): logins/s',
  peer: 'Parse Server 9 POST /parse/login (its own bcrypt, cost 10), same PostgreSQL',
  goal: '>= 2x',
  minDurationS: 6,
  async setup(ctx) {
    const project = await identityProject(ctx);
    const email = `bench-login-${Date.now()}@example.com`;
    const password = 'bench end-user password';
    const reg = await client(ctx.tessera)('POST', '/register', { apiKey: project.apiKey, body: { email, password } });
    if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`);
    const auth = basic(project.clientId, project.clientSecret);
    const form = { grant_type: 'password', username: email, password };
    const first = await postForm(`${ctx.tessera}/token`, form, auth);
    if (typeof first.access_token !== 'string') throw new Error(`password grant: ${JSON.stringify(first)}`);

    const started = await ctx.spawnPeer(
      [PEER],
      { DATABASE_URL: ctx.databaseUrl, PARSE_APP_ID: APP_ID, PORT: '0' },
      /listening (\d+)/,
    );
    const parse = `http://127.0.0.1:${/listening (\d+)/.exec(started.output())![1]}/parse`;
    const headers = { 'content-type': 'application/json', 'x-parse-application-id': APP_ID };
    const creds = JSON.stringify({ username: email, password });
    const signup = await fetch(`${parse}/users`, { method: 'POST', headers, body: creds });
    if (signup.status !== 201) throw new Error(`parse signup: ${signup.status} ${await signup.text()}`);
    const login = await fetch(`${parse}/login`, { method: 'POST', headers, body: creds });
    const loginText = await login.text();
    if (login.status !== 200 || !JSON.parse(loginText).sessionToken)
      throw new Error(`parse login: ${login.status} ${loginText}`);

    return {
      tessera: {
        url: `${ctx.tessera}/token`,
        method: 'POST',
        headers: { 'content-type': FORM, authorization: auth },
        body: new URLSearchParams(form).toString(),
      },
      peer: { url: `${parse}/login`, method: 'POST', headers, body: creds },
    };
  },
};
