// The identity provider's small hosted pages: plain HTML forms that work without JavaScript.
import escapeHtml from 'escape-html';
import type { FastifyReply } from 'fastify';

const STYLE = `body{font-family:system-ui,sans-serif;background:#f5f5f7;margin:0;display:flex;justify-content:center}
main{background:#fff;margin:4rem 1rem;padding:2rem;border-radius:8px;max-width:22rem;width:100%;box-shadow:0 1px 4px #0002}
h1{font-size:1.25rem;margin-top:0}label{display:block;margin:.75rem 0 .25rem}input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
.actions{display:flex;gap:.5rem;margin-top:1.25rem}button{padding:.5rem 1rem;font-size:1rem}.error{color:#b00020}`;

/** Sends a page; the headers keep it out of frames and caches. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  return reply
    .code(status)
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(html);
}

const hidden = (fields: Record<string, string | undefined>) =>
  Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v as string)}">`)
    .join('');

/** The sign-in form of /authorize; the request's parameters travel in hidden fields. */
export function signInPage(
  reply: FastifyReply,
  opts: {
    status?: number;
    request: Record<string, string | undefined>;
    email?: string;
    error?: string;
    askTotp?: boolean;
  },
): FastifyReply {
  const error = opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : '';
  const totp = opts.askTotp
    ? '<label for="totp_code">Authentication code</label><input id="totp_code" name="totp_code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required autofocus>'
    : '';
  const body = `${error}<form method="post" action="/authorize">${hidden(opts.request)}
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}"${opts.askTotp ? '' : ' autofocus'}>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
${totp}<div class="actions"><button type="submit" name="action" value="sign_in">Sign in</button><button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></div></form>`;
  return sendPage(reply, opts.status ?? 200, 'Sign in', body);
}

/** An error that cannot be sent back to the client (unknown client, unregistered redirect URI). */
export function errorPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  return sendPage(reply, status, 'Sign-in request refused', `<p class="error">${escapeHtml(message)}</p>`);
}

/** The form behind the link of a password reset mail (the token is not consumed by opening the link). */
export function resetPasswordPage(
  reply: FastifyReply,
  token: string,
  message?: { error?: string; done?: boolean },
  status = 200,
): FastifyReply {
  if (message?.done)
    return sendPage(reply, status, 'Password changed', '<p>Your password is changed. You can sign in with it now.</p>');
  const error = message?.error ? `<p class="error" role="alert">${escapeHtml(message.error)}</p>` : '';
  return sendPage(
    reply,
    status,
    'Choose a new password',
    `${error}<form method="post" action="/password/reset/confirm">${hidden({ token })}
<label for="new_password">New password</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="8" required autofocus>
<div class="actions"><button type="submit">Change password</button></div></form>`,
  );
}

/** The page behind the link of a verification mail: one button, so link scanners do not use the token. */
export function verifyEmailPage(
  reply: FastifyReply,
  token: string,
  message?: { error?: string; done?: boolean },
  status = 200,
): FastifyReply {
  if (message?.done) return sendPage(reply, status, 'E-mail confirmed', '<p>Your e-mail address is confirmed.</p>');
  const error = message?.error ? `<p class="error" role="alert">${escapeHtml(message.error)}</p>` : '';
  return sendPage(
    reply,
    status,
    'Confirm your e-mail address',
    `${error}<form method="post" action="/email/verify/confirm">${hidden({ token })}
<div class="actions"><button type="submit">Confirm</button></div></form>`,
  );
}

/** After RP-initiated logout without a (registered) place to go back to. */
export function signedOutPage(reply: FastifyReply): FastifyReply {
  return sendPage(reply, 200, 'Signed out', '<p>You are signed out.</p>');
}
