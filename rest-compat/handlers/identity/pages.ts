// The identity provider's small hosted pages: plain HTML forms that work without JavaScript. The pages of an
// authorization request (sign-in, sign-up, forgot password) carry the project's branding: its name, an optional logo
// (an https URL; the page's CSP allows images from that origin only) and a brand colour (#rrggbb, checked again here
// before it goes into the style sheet). Every value from a project or a request is escaped.
import escapeHtml from 'escape-html';
import type { FastifyReply } from 'fastify';
import type { ProjectBrandingFacts } from '../../../platform/internal-operations.ts';

const ACCENT = '#1f5fbf';
const STYLE = `body{font-family:system-ui,sans-serif;background:#f5f5f7;margin:0;display:flex;justify-content:center;color:#1b1f24}
main{background:#fff;margin:4rem 1rem;padding:2rem;border-radius:8px;max-width:22rem;width:100%;box-shadow:0 1px 4px #0002}
h1{font-size:1.25rem;margin-top:0}label{display:block;margin:.75rem 0 .25rem}input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
.actions{display:flex;gap:.5rem;margin-top:1.25rem;flex-wrap:wrap}button{padding:.5rem 1rem;font-size:1rem;border:1px solid #8c95a3;border-radius:4px;background:#fff;color:#1b1f24}
button.primary{background:var(--brand);border-color:var(--brand);color:var(--on-brand)}a{color:var(--link)}
.error{color:#b00020}.logo{display:block;max-width:100%;max-height:4rem;margin:0 0 1rem}.links{display:flex;gap:1rem;flex-wrap:wrap;margin:1.25rem 0 0}
.hint{color:#4f5866;font-size:.875rem;margin:.25rem 0 0}`;

const COLOR = /^#[0-9a-f]{6}$/i;

/** WCAG relative luminance of #rrggbb. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/** The page's colours from the brand colour: buttons in it with legible text, links in it when legible on white. */
function colorsOf(brand: string | null | undefined): string {
  const color = brand && COLOR.test(brand) ? brand.toLowerCase() : ACCENT;
  const l = luminance(color);
  const onBrand = contrast(l, 1) >= contrast(l, 0) ? '#ffffff' : '#000000';
  const link = contrast(l, 1) >= 4.5 ? color : ACCENT;
  return `:root{--brand:${color};--on-brand:${onBrand};--link:${link}}`;
}

/** The origin a logo URL may be loaded from (for the CSP), or undefined when it is not a plain https URL. */
function logoOrigin(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && /^[a-z0-9.:[\]-]+$/i.test(u.host) ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** What a hosted page shows of the project (undefined: the platform's own pages, unbranded). */
export type Brand = Pick<ProjectBrandingFacts, 'projectName' | 'logoUrl' | 'brandColor'> &
  Partial<Pick<ProjectBrandingFacts, 'hostedSignUp' | 'hostedPasswordReset'>>;

/** Sends a page; the headers keep it out of frames and caches, and allow no script at all. */
export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: string,
  brand?: Brand,
): FastifyReply {
  const origin = logoOrigin(brand?.logoUrl);
  const logo = origin
    ? `<img class="logo" src="${escapeHtml(brand!.logoUrl!)}" alt="${escapeHtml(brand!.projectName)}">`
    : '';
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${colorsOf(brand?.brandColor)}${STYLE}</style></head><body><main>${logo}<h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  return reply
    .code(status)
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'unsafe-inline';${origin ? ` img-src ${origin};` : ''} base-uri 'none'; frame-ancestors 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(html);
}

/** "Sign in to <project>" (or the plain words without a project). */
const titled = (words: string, brand?: Brand) => (brand ? `${words} to ${brand.projectName}` : words);

/** The query string of an authorization request (its parameters carried from page to page). */
export function requestQuery(request: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(request)) if (v !== undefined) q.set(k, v);
  return q.toString();
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
    brand?: Brand;
  },
): FastifyReply {
  const error = opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : '';
  const totp = opts.askTotp
    ? '<label for="totp_code">Authentication code</label><input id="totp_code" name="totp_code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required autofocus>'
    : '';
  const q = escapeHtml(requestQuery(opts.request));
  const links = [
    opts.brand?.hostedPasswordReset ? `<a href="/authorize/forgot-password?${q}">Forgot password?</a>` : '',
    opts.brand?.hostedSignUp ? `<a href="/authorize/sign-up?${q}">Sign up</a>` : '',
  ].filter(Boolean);
  const body = `${error}<form method="post" action="/authorize">${hidden(opts.request)}
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}"${opts.askTotp ? '' : ' autofocus'}>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
${totp}<div class="actions"><button class="primary" type="submit" name="action" value="sign_in">Sign in</button><button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></div></form>
${links.length ? `<nav class="links" aria-label="Account">${links.join('')}</nav>` : ''}`;
  return sendPage(reply, opts.status ?? 200, titled('Sign in', opts.brand), body, opts.brand);
}

/** The hosted sign-up form (`/authorize/sign-up`): the request's parameters travel in hidden fields. */
export function signUpPage(
  reply: FastifyReply,
  opts: {
    status?: number;
    request: Record<string, string | undefined>;
    email?: string;
    name?: string;
    error?: string;
    brand: Brand;
  },
): FastifyReply {
  const error = opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : '';
  const q = escapeHtml(requestQuery(opts.request));
  const body = `${error}<form method="post" action="/authorize/sign-up">${hidden(opts.request)}
<label for="name">Name (optional)</label><input id="name" name="name" autocomplete="name" maxlength="200" value="${escapeHtml(opts.name ?? '')}">
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(opts.email ?? '')}" autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required aria-describedby="password-hint">
<p class="hint" id="password-hint">At least 8 characters.</p>
<div class="actions"><button class="primary" type="submit">Create account</button></div></form>
<nav class="links" aria-label="Account"><a href="/authorize?${q}">Already have an account? Sign in</a></nav>`;
  return sendPage(reply, opts.status ?? 200, titled('Sign up', opts.brand), body, opts.brand);
}

/** The hosted forgot-password form (`/authorize/forgot-password`), and what it says once a link is on its way. */
export function forgotPasswordPage(
  reply: FastifyReply,
  opts: { status?: number; request: Record<string, string | undefined>; error?: string; sentTo?: string; brand: Brand },
): FastifyReply {
  const q = escapeHtml(requestQuery(opts.request));
  const back = `<nav class="links" aria-label="Account"><a href="/authorize?${q}">Back to sign in</a></nav>`;
  if (opts.sentTo !== undefined)
    return sendPage(
      reply,
      opts.status ?? 200,
      'Check your e-mail',
      `<p role="status">If an account exists for <strong>${escapeHtml(opts.sentTo)}</strong>, we sent it a link to choose a new password. The link works once.</p>${back}`,
      opts.brand,
    );
  const error = opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : '';
  const body = `${error}<p>Enter your account's e-mail address and we will send you a link to choose a new password.</p>
<form method="post" action="/authorize/forgot-password">${hidden(opts.request)}
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="email" required autofocus>
<div class="actions"><button class="primary" type="submit">Send the link</button></div></form>${back}`;
  return sendPage(reply, opts.status ?? 200, 'Forgot your password?', body, opts.brand);
}

/** An error that cannot be sent back to the client (unknown client, unregistered redirect URI). */
export function errorPage(reply: FastifyReply, status: number, message: string, brand?: Brand): FastifyReply {
  return sendPage(reply, status, 'Sign-in request refused', `<p class="error">${escapeHtml(message)}</p>`, brand);
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
<div class="actions"><button class="primary" type="submit">Change password</button></div></form>`,
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
<div class="actions"><button class="primary" type="submit">Confirm</button></div></form>`,
  );
}

/** After RP-initiated logout without a (registered) place to go back to. */
export function signedOutPage(reply: FastifyReply): FastifyReply {
  return sendPage(reply, 200, 'Signed out', '<p>You are signed out.</p>');
}
