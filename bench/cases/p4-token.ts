// P4-token: OAuth 2.0 client_credentials at /token (client_secret_basic) against oidc-provider 9.
import path from 'node:path';
import type { BenchCase } from './types.ts';
import { FORM, basic, identityProject, postForm } from './p4-setup.ts';

const PEER = path.resolve(import.meta.dirname, '..', 'peers', 'oidc.ts');
export const OIDC_CLIENT = { id: 'bench-client', secret: 'bench-client-secret-0123456789abcdef' };

/** Starts an oidc-provider peer (each one its own in-memory store) and returns its base URL. */
export async function startOidcPeer(
  ctx: Parameters<BenchCase['setup']>[0],
  env: Record<string, string> = {},
): Promise<string> {
  const peer = await ctx.spawnPeer(
    [PEER],
    { OIDC_CLIENT_ID: OIDC_CLIENT.id, OIDC_CLIENT_SECRET: OIDC_CLIENT.secret, PORT: '0', ...env },
    /listening (\d+)/,
  );
  return `http://127.0.0.1:${/listening (\d+)/.exec(peer.output())![1]}`;
}

export const p4Token: BenchCase = {
  id: 'P4-token',
  title: 'POST /token grant_type=client_credentials (client_secret_basic)',
  peer: 'oidc-provider 9 (in-memory adapter, opaque token)',
  goal: '>= 2x (issue 19)',
  async setup(ctx) {
    const project = await identityProject(ctx);
    const peer = await startOidcPeer(ctx);
    const body = new URLSearchParams({ grant_type: 'client_credentials' }).toString();
    const tessera = {
      url: `${ctx.tessera}/token`,
      method: 'POST' as const,
      headers: { 'content-type': FORM, authorization: basic(project.clientId, project.clientSecret) },
      body,
    };
    const other = {
      url: `${peer}/token`,
      method: 'POST' as const,
      headers: { 'content-type': FORM, authorization: basic(OIDC_CLIENT.id, OIDC_CLIENT.secret) },
      body,
    };
    // Both must issue a token before they are measured.
    for (const t of [tessera, other]) {
      const res = await postForm(t.url, { grant_type: 'client_credentials' }, t.headers.authorization);
      if (typeof res.access_token !== 'string') throw new Error(`${t.url}: no access_token in ${JSON.stringify(res)}`);
    }
    return { tessera, peer: other };
  },
};
