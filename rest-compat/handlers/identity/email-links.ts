// The pages behind the links of password-reset and verification mails, and what their forms post: a JSON body
// answers JSON (the end-user API's error shape), the page's own form answers HTML. The token in the body is the
// credential: these run as the anonymous principal.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../platform/errors.ts';
import {
  INTERNAL_OPERATIONS,
  callInternal,
  isAnswerError,
  type InternalOperation,
} from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import { html, json, op, type EndpointGroup } from './oauth.ts';
import { errorPage, resetPasswordPage, verifyEmailPage } from './pages.ts';

const wantsHtml = (req: FastifyRequest) =>
  /application\/x-www-form-urlencoded/i.test(String(req.headers['content-type'] ?? ''));

/** Runs the confirmation as the anonymous principal: undefined when done, else the error the identity domain answered. */
async function confirm<V>(
  deps: RawHandlerDeps,
  req: FastifyRequest,
  operation: InternalOperation<V, unknown>,
  variables: V,
): Promise<AppError | undefined> {
  try {
    await callInternal(deps, operation, variables, {
      requestId: String(req.id),
      principal: { kind: 'anonymous' },
      ip: req.ip,
    });
    return undefined;
  } catch (err) {
    if (isAnswerError(err)) return err;
    throw err;
  }
}

/** The reset link's page (GET) and the reset itself (POST: JSON answers JSON, the page's form answers HTML). */
async function resetConfirm(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  if (req.method === 'GET') {
    const token = (req.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || !token) return errorPage(reply, 400, 'The link has no token.');
    return resetPasswordPage(reply, token);
  }
  const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  const html = wantsHtml(req);
  if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body))
    return deps.sendError(
      reply,
      new AppError('BAD_REQUEST', 'The request body must be a JSON object {token, new_password}'),
    );
  const failed = await confirm(deps, req, INTERNAL_OPERATIONS.resetConfirm, {
    input: { token: body.token, newPassword: body.new_password },
  });
  if (!html) return failed ? deps.sendError(reply, failed) : reply.code(204).send();
  if (!failed) return resetPasswordPage(reply, '', { done: true });
  return resetPasswordPage(reply, typeof body.token === 'string' ? body.token : '', { error: failed.message }, 400);
}

async function verifyConfirm(deps: RawHandlerDeps, req: FastifyRequest, reply: FastifyReply) {
  if (req.method === 'GET') {
    const token = (req.query as Record<string, unknown>).token;
    if (typeof token !== 'string' || !token) return errorPage(reply, 400, 'The link has no token.');
    return verifyEmailPage(reply, token);
  }
  if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body))
    return deps.sendError(reply, new AppError('BAD_REQUEST', 'The request body must be a JSON object {token}'));
  const body = req.body as Record<string, unknown>;
  const failed = await confirm(deps, req, INTERNAL_OPERATIONS.verifyConfirm, { token: body.token });
  if (!wantsHtml(req)) return failed ? deps.sendError(reply, failed) : reply.send({ email_verified: true });
  if (!failed) return verifyEmailPage(reply, '', { done: true });
  return verifyEmailPage(reply, typeof body.token === 'string' ? body.token : '', { error: failed.message }, 400);
}

export const emailLinks: EndpointGroup = {
  register(scope, deps) {
    scope.route({
      method: ['GET', 'POST'],
      url: '/password/reset/confirm',
      handler: (req, reply) => resetConfirm(deps, req, reply),
    });
    scope.route({
      method: ['GET', 'POST'],
      url: '/email/verify/confirm',
      handler: (req, reply) => verifyConfirm(deps, req, reply),
    });
  },
  openapi: {
    '/password/reset/confirm': {
      get: op('identity.password.reset.page', 'The page behind the reset link (query token)', {
        description:
          'The form a reset e-mail links to: it asks for the new password and posts it with the token. Public.',
        responses: { 200: html('HTML form'), 400: html('HTML page: the link has no token') },
      }),
      post: op('identity.password.reset.confirm', 'Confirm a password reset', {
        description:
          'JSON `{token, new_password}` → 204; the page form answers HTML. Every session of the user is revoked.',
        responses: {
          204: { description: 'Password changed' },
          400: { $ref: '#/components/responses/E400' },
          401: { $ref: '#/components/responses/E401' },
        },
      }),
    },
    '/email/verify/confirm': {
      get: op('identity.email.verify.page', 'The page behind the verification link (query token)', {
        description: 'The page a verification e-mail links to: one button posts the token. Public.',
        responses: { 200: html('HTML form'), 400: html('HTML page: the link has no token') },
      }),
      post: op('identity.email.verify.confirm', 'Confirm e-mail verification', {
        description: 'JSON `{token}` → `{"email_verified": true}`; the page form answers HTML.',
        responses: {
          200: json('`{"email_verified": true}`'),
          400: { $ref: '#/components/responses/E400' },
          401: { $ref: '#/components/responses/E401' },
        },
      }),
    },
  },
};
