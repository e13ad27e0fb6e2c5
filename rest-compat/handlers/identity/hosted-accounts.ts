// The hosted end-user pages beside the sign-in page of an authorization request: sign-up (`/authorize/sign-up`),
// which registers the user and then finishes the authorization as a sign-in would (the code goes back to the client),
// and forgot password (`/authorize/forgot-password`), which mails a reset link whose page already exists
// (`/password/reset/confirm`). Each checks the authorization request as /authorize does, so it acts only for a known
// client and a registered redirect URI, and each is offered only while the project allows it (its branding's
// `hostedSignUp`, `hostedPasswordReset`). They act for the client's project with the powers of its publishable key
// (what any browser of the project's users may do): the identity domain's own rules and rate limits apply.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../../platform/auth.ts';
import { INTERNAL_OPERATIONS, callInternal, isAnswerError } from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import { checkAuthorizationRequest, redirectTo, type CheckedRequest } from './authorize.ts';
import { brandingOf } from './branding.ts';
import {
  form,
  html,
  htmlOrOAuthError,
  internalContext,
  oauthFailureOf,
  op,
  redirect,
  strictParams,
  type EndpointGroup,
} from './oauth.ts';
import { errorPage, forgotPasswordPage, signUpPage, type Brand } from './pages.ts';

type Page = 'sign-up' | 'forgot-password';

/** The request checked as /authorize checks it, and the project's branding, when the project offers `page`; else answered. */
async function opened(
  deps: RawHandlerDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  source: unknown,
  page: Page,
): Promise<{ checked: CheckedRequest; brand: Brand; params: ReturnType<typeof strictParams>['params'] } | null> {
  const { params, repeated } = strictParams(source);
  const checked = await checkAuthorizationRequest(deps, req, reply, params);
  if (!checked) return null;
  if (repeated) {
    redirectTo(reply, deps, checked.redirectUri, checked.state, {
      error: 'invalid_request',
      error_description: `Parameter ${repeated} is repeated`,
    });
    return null;
  }
  const brand = await brandingOf(deps, req, checked.client.projectId);
  const offered = page === 'sign-up' ? brand?.hostedSignUp : brand?.hostedPasswordReset;
  if (!brand || !offered) {
    errorPage(
      reply,
      404,
      page === 'sign-up' ? 'This app does not offer sign-up here.' : 'This app does not offer password reset here.',
      brand,
    );
    return null;
  }
  return { checked, brand, params };
}

/** The client's project acting as its publishable key would. */
function publishableContext(req: FastifyRequest, checked: CheckedRequest): RequestContext {
  return {
    requestId: String(req.id),
    principal: { kind: 'publishable', projectId: checked.client.projectId, tenantId: checked.client.tenantId },
    ip: req.ip,
  };
}

async function signUpGet(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const open = await opened(deps, req, reply, req.query, 'sign-up');
  if (!open) return reply;
  return signUpPage(reply, { request: open.checked.request, brand: open.brand });
}

async function signUpPost(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const open = await opened(deps, req, reply, req.body, 'sign-up');
  if (!open) return reply;
  const { checked, brand, params } = open;
  const email = params.get('email');
  const password = params.get('password');
  const name = params.get('name')?.trim() || undefined;
  const again = (status: number, error: string) =>
    signUpPage(reply, { status, request: checked.request, email, name, error, brand });
  if (!email || !password) return again(400, 'Enter your e-mail address and a password.');
  try {
    await callInternal(
      deps,
      INTERNAL_OPERATIONS.hostedSignUp,
      { input: { email, password, name: name ?? null } },
      publishableContext(req, checked),
    );
  } catch (e) {
    if (!isAnswerError(e)) throw e;
    switch (e.code) {
      case 'EMAIL_TAKEN':
        return again(409, 'An account with this e-mail address already exists: sign in, or reset its password.');
      case 'VALIDATION_FAILED':
        return again(400, e.message);
      case 'RATE_LIMITED': {
        const retry = (e.details as { retry_after?: number } | undefined)?.retry_after ?? 60;
        void reply.header('retry-after', String(retry));
        return again(429, `Too many attempts. Try again in ${retry} seconds.`);
      }
      default:
        throw e;
    }
  }
  // Registered: finish the authorization as the sign-in page does (the code goes back to the client).
  const back = (values: Record<string, string>) => redirectTo(reply, deps, checked.redirectUri, checked.state, values);
  try {
    const code = (
      await callInternal(
        deps,
        INTERNAL_OPERATIONS.authorize,
        { client: checked.client, input: { ...checked.input, email, password, totpCode: null } },
        internalContext(req),
      )
    )._authorize.code;
    return back({ code });
  } catch (e) {
    if (!isAnswerError(e)) throw e;
    const failure = oauthFailureOf(e, req.log);
    return back({ error: failure.status >= 500 ? 'server_error' : failure.error, error_description: failure.message });
  }
}

async function forgotGet(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const open = await opened(deps, req, reply, req.query, 'forgot-password');
  if (!open) return reply;
  return forgotPasswordPage(reply, { request: open.checked.request, brand: open.brand });
}

async function forgotPost(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  const open = await opened(deps, req, reply, req.body, 'forgot-password');
  if (!open) return reply;
  const { checked, brand, params } = open;
  const email = params.get('email')?.trim();
  const again = (status: number, error: string) =>
    forgotPasswordPage(reply, { status, request: checked.request, error, brand });
  if (!email) return again(400, 'Enter your e-mail address.');
  try {
    await callInternal(deps, INTERNAL_OPERATIONS.hostedPasswordReset, { email }, publishableContext(req, checked));
  } catch (e) {
    if (!isAnswerError(e)) throw e;
    if (e.code === 'VALIDATION_FAILED') return again(400, e.message);
    if (e.code === 'RATE_LIMITED') {
      const retry = (e.details as { retry_after?: number } | undefined)?.retry_after ?? 60;
      void reply.header('retry-after', String(retry));
      return again(429, `Too many attempts. Try again in ${retry} seconds.`);
    }
    throw e;
  }
  // The same answer whether or not the address has an account (no enumeration).
  return forgotPasswordPage(reply, { request: checked.request, sentTo: email, brand });
}

const REQUEST_QUERY =
  'The authorization request of /authorize (response_type, client_id, redirect_uri, scope, state, ...), carried from its page.';

export const hostedAccounts: EndpointGroup = {
  register(scope, deps) {
    scope.get('/authorize/sign-up', (req, reply) => signUpGet(deps, req, reply));
    scope.post('/authorize/sign-up', (req, reply) => signUpPost(deps, req, reply));
    scope.get('/authorize/forgot-password', (req, reply) => forgotGet(deps, req, reply));
    scope.post('/authorize/forgot-password', (req, reply) => forgotPost(deps, req, reply));
  },
  openapi: {
    '/authorize/sign-up': {
      get: op('identity.authorize.signUp', 'Hosted sign-up page of an authorization request', {
        description: `${REQUEST_QUERY} Shown when the project offers sign-up (its branding's \`hosted_sign_up\`); 404 page otherwise.`,
        responses: {
          200: html('HTML sign-up form with the project name, logo and colour'),
          400: html('HTML page: unknown client or unregistered redirect_uri'),
          404: html('HTML page: the project does not offer sign-up'),
        },
      }),
      post: op('identity.authorize.signUp.submit', 'Hosted sign-up form submission', {
        description:
          "Registers the end-user in the client's project (the rules and limits of POST /register with the publishable key), then finishes the authorization: 302 back to redirect_uri with code, state and iss.",
        requestBody: form({ email: 'E-mail', password: 'Password (8+ characters)', name: 'Name (optional)' }),
        responses: {
          302: redirect('Back to redirect_uri with code, state and iss'),
          400: htmlOrOAuthError('The form again, with the problem'),
          409: html('The form again: the e-mail address is registered'),
          429: html('The form again: too many attempts (`Retry-After`)'),
        },
      }),
    },
    '/authorize/forgot-password': {
      get: op('identity.authorize.forgotPassword', 'Hosted forgot-password page of an authorization request', {
        description: `${REQUEST_QUERY} Shown when the project offers password reset (its branding's \`hosted_password_reset\`); 404 page otherwise.`,
        responses: {
          200: html('HTML form asking for the e-mail address'),
          400: html('HTML page: unknown client or unregistered redirect_uri'),
          404: html('HTML page: the project does not offer password reset'),
        },
      }),
      post: op('identity.authorize.forgotPassword.submit', 'Hosted forgot-password form submission', {
        description:
          'Mails a reset link (to /password/reset/confirm) when the address has an account in the project; the same page either way (no enumeration). The limits of POST /password/reset/request apply.',
        requestBody: form({ email: 'E-mail' }),
        responses: {
          200: html('HTML page: check your e-mail'),
          400: htmlOrOAuthError('The form again, with the problem'),
          429: html('The form again: too many requests'),
        },
      }),
    },
  },
};
