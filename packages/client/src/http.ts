// The one place requests are made: base URL, credentials (the project key as X-Api-Key, a bearer token), JSON in and
// out, and errors turned into TesseraError. Every other module goes through `Http.request`.
import { errorOf, TesseraError } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type RequestOptions = {
  /** A JSON body. */
  body?: unknown;
  /** A form body (OAuth endpoints). */
  form?: Record<string, string | undefined>;
  /** A body sent as is (uploads). */
  raw?: BodyInit;
  query?: Record<string, string | number | boolean | undefined | null>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Send no credentials (the OAuth endpoints authenticate the client themselves). */
  anonymous?: boolean;
  /** Send the project key but no bearer token (what a visitor does: sign-up, password reset, even when signed in). */
  keyOnly?: boolean;
  /** Leave the answer unread (downloads, streams): the Response is returned as is once it is a success. */
  stream?: boolean;
};

/** Where the bearer token comes from: fixed, or the signed-in end-user's session (refreshed when needed). */
export type TokenSource = () => Promise<string | undefined>;

export type HttpOptions = {
  url: string;
  /** The project key sent as X-Api-Key: the publishable key (`tpk_...`) in browsers, the secret key (`tsk_...`) on servers. */
  key?: string;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
};

/** The answer of a successful JSON call, with the response's request id and headers. */
export type Answer<T> = { data: T; status: number; headers: Headers; requestId: string | undefined };

export class Http {
  readonly url: string;
  readonly key: string | undefined;
  readonly fetch: typeof fetch;
  readonly headers: Record<string, string>;
  /** The bearer token of the calls, when there is one (a tenant token, or the end-user session). */
  token: TokenSource = async () => undefined;
  /** Called once when a call with a token answered 401: may refresh it; true when the call should be retried. */
  onUnauthorized: (() => Promise<boolean>) | undefined;

  constructor(opts: HttpOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.key = opts.key;
    this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.headers = opts.headers ?? {};
  }

  /** The absolute URL of a path with its query. */
  href(path: string, query?: RequestOptions['query']): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) q.set(k, String(v));
    const s = q.toString();
    return `${this.url}${path}${s ? `?${s}` : ''}`;
  }

  /** The credential headers of a call. */
  async credentials(anonymous = false, keyOnly = false): Promise<Record<string, string>> {
    if (anonymous) return {};
    const h: Record<string, string> = {};
    if (this.key) h['x-api-key'] = this.key;
    if (keyOnly) return h;
    const token = await this.token();
    if (token) h.authorization = `Bearer ${token}`;
    return h;
  }

  /** Makes a call; answers the parsed JSON body (undefined for 204) or throws a TesseraError. */
  async request<T>(method: HttpMethod, path: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.call<T>(method, path, opts)).data;
  }

  /** Like `request`, with the status, headers and request id of the answer. */
  async call<T>(method: HttpMethod, path: string, opts: RequestOptions = {}, retried = false): Promise<Answer<T>> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.headers,
      ...(await this.credentials(opts.anonymous, opts.keyOnly)),
      ...opts.headers,
    };
    let body: BodyInit | undefined;
    if (opts.form) {
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.form)) if (v !== undefined) form.set(k, v);
      body = form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    } else if (opts.raw !== undefined) body = opts.raw;
    let res: Response;
    try {
      res = await this.fetch(this.href(path, opts.query), {
        method,
        headers,
        body,
        signal: opts.signal,
        ...(isStream(body) ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (err) {
      throw new TesseraError({
        code: 'NETWORK_ERROR',
        status: 0,
        message: `${method} ${path}: ${(err as Error).message}`,
        cause: err,
      });
    }
    const requestId = res.headers.get('x-request-id') ?? undefined;
    if (opts.stream && res.ok) return { data: res as T, status: res.status, headers: res.headers, requestId };
    const text = await res.text();
    let parsed: unknown = text;
    if (text && (res.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON after all: keep the text
      }
    }
    // Only a 401 about the token itself is worth a refresh: a wrong TOTP code or password (INVALID_MFA_CODE,
    // INVALID_CREDENTIALS, MFA_REQUIRED) is the caller's answer, and must not rotate the session or end it.
    if (
      res.status === 401 &&
      headers.authorization &&
      !retried &&
      this.onUnauthorized &&
      !isStream(body) &&
      isSessionError(parsed)
    ) {
      if (await this.onUnauthorized()) return await this.call<T>(method, path, opts, true);
      throw errorOf(401, { error: { code: 'INVALID_TOKEN', message: 'The session ended: sign in again' } }, requestId);
    }
    if (!res.ok) throw errorOf(res.status, parsed, requestId);
    return { data: (text === '' ? undefined : parsed) as T, status: res.status, headers: res.headers, requestId };
  }
}

/** The codes of a 401 that mean the bearer token itself is no good (expired, revoked, unknown, missing). */
export const SESSION_ERROR_CODES: ReadonlySet<string> = new Set(['INVALID_TOKEN', 'UNAUTHENTICATED']);

/** Whether a 401's body says the token is no good (a body without a code is taken as such, as before). */
function isSessionError(body: unknown): boolean {
  const error = (body as { error?: unknown } | null)?.error;
  const code =
    typeof error === 'object' && error !== null
      ? (error as { code?: unknown }).code
      : typeof error === 'string'
        ? error
        : undefined;
  return typeof code !== 'string' || SESSION_ERROR_CODES.has(code) || code === 'invalid_token';
}

function isStream(body: unknown): boolean {
  return typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;
}
