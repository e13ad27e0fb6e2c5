// RP-initiated logout (OIDC RP-Initiated Logout 1.0; the discovery's end_session_endpoint): revokes the session of
// id_token_hint, then goes back to a registered URI of the client or shows the signed-out page.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_OPERATIONS } from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import {
  OAuthFailure,
  callOAuth,
  html,
  lookupClient,
  noStore,
  op,
  redirect,
  strictParams,
  type EndpointGroup,
} from './oauth.ts';
import { errorPage, signedOutPage } from './pages.ts';

async function endSession(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const { params, repeated } = strictParams(req.query);
  if (repeated) return errorPage(reply, 400, `Parameter ${repeated} is repeated.`);
  const hint = params.get('id_token_hint');
  const postLogout = params.get('post_logout_redirect_uri');
  let clientId = params.get('client_id');
  if (hint) {
    try {
      const data = await callOAuth(deps, req, INTERNAL_OPERATIONS.endSession, { idTokenHint: hint });
      if (clientId && clientId !== data._endSession.clientId)
        return errorPage(reply, 400, 'client_id does not match id_token_hint.');
      clientId = data._endSession.clientId;
    } catch (err) {
      if (err instanceof OAuthFailure && err.status < 500) return errorPage(reply, 400, err.message);
      throw err;
    }
  }
  if (!postLogout) return signedOutPage(reply);
  const client = clientId ? await lookupClient(deps, req, clientId) : null;
  // Only back to a URI registered for the client (its redirect URIs), never to an arbitrary address.
  if (!client || !client.redirectUris.includes(postLogout))
    return errorPage(reply, 400, 'post_logout_redirect_uri is not registered for this client.');
  const url = new URL(postLogout);
  const state = params.get('state');
  if (state) url.searchParams.set('state', state);
  return noStore(reply).redirect(url.toString(), 302);
}

export const logout: EndpointGroup = {
  register(scope, deps) {
    scope.get('/logout', (req, reply) => endSession(deps, req, reply));
  },
  openapi: {
    '/logout': {
      get: op('identity.logout.rp', 'RP-initiated logout (end_session_endpoint)', {
        description:
          'id_token_hint, post_logout_redirect_uri (a registered redirect URI of the client), state, client_id.',
        responses: {
          200: html('HTML: signed out'),
          302: redirect('Back to post_logout_redirect_uri'),
        },
      }),
    },
  },
};
