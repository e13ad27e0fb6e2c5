// P4-introspect: RFC 7662 introspection of an active client_credentials access token (client_secret_basic)
// against oidc-provider 9. The peer is a provider of its own, so P4-token's stream of new tokens cannot
// evict the introspected one from its in-memory store.
import type { BenchCase } from './types.ts';
import { FORM, basic, identityProject, postForm } from './p4-setup.ts';
import { OIDC_CLIENT, startOidcPeer } from './p4-token.ts';

export const p4Introspect: BenchCase = {
  id: 'P4-introspect',
  title: 'POST /introspect token=<active client_credentials access token> (client_secret_basic)',
  peer: 'oidc-provider 9 (POST /token/introspection, in-memory adapter)',
  goal: '>= 2x (issue 19)',
  async setup(ctx) {
    const project = await identityProject(ctx);
    const tesseraAuth = basic(project.clientId, project.clientSecret);
    const issued = await postForm(`${ctx.tessera}/token`, { grant_type: 'client_credentials' }, tesseraAuth);
    // The peer's token lives as long as Tessera's, so both stay active (or expire) together.
    const peer = await startOidcPeer(ctx, { OIDC_TOKEN_TTL: String(issued.expires_in) });
    const peerAuth = basic(OIDC_CLIENT.id, OIDC_CLIENT.secret);
    const peerIssued = await postForm(`${peer}/token`, { grant_type: 'client_credentials' }, peerAuth);
    const tessera = {
      url: `${ctx.tessera}/introspect`,
      method: 'POST' as const,
      headers: { 'content-type': FORM, authorization: tesseraAuth },
      body: new URLSearchParams({ token: String(issued.access_token) }).toString(),
    };
    const other = {
      url: `${peer}/token/introspection`,
      method: 'POST' as const,
      headers: { 'content-type': FORM, authorization: peerAuth },
      body: new URLSearchParams({ token: String(peerIssued.access_token) }).toString(),
    };
    for (const t of [tessera, other]) {
      const res = await postForm(t.url, Object.fromEntries(new URLSearchParams(t.body)), t.headers.authorization);
      if (res.active !== true) throw new Error(`${t.url}: token not active: ${JSON.stringify(res)}`);
    }
    return { tessera, peer: other };
  },
};
