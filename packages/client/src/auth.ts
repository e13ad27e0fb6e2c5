// End-user authentication against the project's identity provider: sign-up, sign-in with a password or with the
// authorization code flow and PKCE (a browser redirect helper included), token refresh, MFA, password reset and
// e-mail verification. The session (tokens) lives in memory, or in a `store` such as the browser's localStorage.
import { TesseraError } from './errors.ts';
import type { Http } from './http.ts';
import { pkcePair, randomString } from './pkce.ts';
import type { BodyOf, EndUser, ResponseOf, TokenSet } from './types.ts';

/** The signed-in end-user's tokens. */
export type Session = {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  scope?: string;
  expiresAt: number;
};

/** Where a session is kept between page loads: `localStorage`, `sessionStorage`, or anything with the same three methods. */
export type SessionStore = {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
};

export type AuthOptions = {
  /** The OIDC client of the app (a public client for browsers and apps: PKCE, no secret). */
  clientId?: string;
  /** Only for confidential clients on a server. */
  clientSecret?: string;
  store?: SessionStore;
  /** Key of the session in the store (default `tessera.session`). */
  storageKey?: string;
};

const DEFAULT_SCOPE = 'openid profile email offline_access';
/** Refresh this long before the access token expires. */
const EARLY_MS = 30_000;

type Pending = { state: string; verifier: string; redirectUri: string };

export class Auth {
  readonly #http: Http;
  readonly #opts: AuthOptions;
  readonly #key: string;
  #session: Session | undefined;
  #refreshing: Promise<Session> | undefined;
  readonly #listeners = new Set<(s: Session | undefined) => void>();
  readonly #memory = new Map<string, string>();

  constructor(http: Http, opts: AuthOptions = {}) {
    this.#http = http;
    this.#opts = opts;
    this.#key = opts.storageKey ?? 'tessera.session';
    const saved = this.#store().getItem(this.#key);
    if (saved) {
      try {
        this.#session = JSON.parse(saved) as Session;
      } catch {
        this.#store().removeItem(this.#key);
      }
    }
  }

  #store(): SessionStore {
    return (
      this.#opts.store ?? {
        getItem: (k) => this.#memory.get(k) ?? null,
        setItem: (k, v) => void this.#memory.set(k, v),
        removeItem: (k) => void this.#memory.delete(k),
      }
    );
  }

  #clientAuth(): Record<string, string | undefined> {
    if (!this.#opts.clientId)
      throw new TesseraError({
        code: 'CLIENT_ID_REQUIRED',
        status: 0,
        message: 'Pass clientId (the OIDC client of your app) to createClient to sign in',
      });
    return { client_id: this.#opts.clientId, client_secret: this.#opts.clientSecret };
  }

  /** The current session, if signed in. */
  get session(): Session | undefined {
    return this.#session;
  }

  /** Replaces the session (undefined signs out locally) and tells the listeners. */
  setSession(session: Session | undefined): void {
    this.#session = session;
    if (session) this.#store().setItem(this.#key, JSON.stringify(session));
    else this.#store().removeItem(this.#key);
    for (const l of this.#listeners) l(session);
  }

  /** Calls `listener` whenever the session changes (sign-in, refresh, sign-out); answers a function that stops it. */
  onChange(listener: (s: Session | undefined) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #fromTokens(t: TokenSet): Session {
    return {
      accessToken: t.access_token,
      refreshToken: t.refresh_token ?? this.#session?.refreshToken,
      idToken: t.id_token,
      scope: t.scope,
      expiresAt: Date.now() + t.expires_in * 1000,
    };
  }

  async #token(form: Record<string, string | undefined>): Promise<Session> {
    const t = await this.#http.request<TokenSet>('POST', '/token', {
      form: { ...this.#clientAuth(), ...form },
      anonymous: true,
    });
    const session = this.#fromTokens(t);
    this.setSession(session);
    return session;
  }

  /** The access token to send, refreshed first when it is about to expire (and a refresh token is there). */
  async accessToken(): Promise<string | undefined> {
    const s = this.#session;
    if (!s) return undefined;
    if (s.expiresAt - EARLY_MS > Date.now() || !s.refreshToken || !this.#opts.clientId) return s.accessToken;
    return (await this.refresh().catch(() => undefined))?.accessToken;
  }

  /** Registers an end-user (with the project key: the publishable key in browsers). */
  async signUp(input: BodyOf<'/register', 'post'>): Promise<EndUser> {
    return (
      await this.#http.request<ResponseOf<'/register', 'post'>>('POST', '/register', { body: input, keyOnly: true })
    ).user;
  }

  /** Signs in with e-mail and password (password grant); `totpCode` when the user has MFA on (else `mfa_required`). */
  async signInWithPassword(input: {
    email: string;
    password: string;
    totpCode?: string;
    scope?: string;
  }): Promise<Session> {
    return await this.#token({
      grant_type: 'password',
      username: input.email,
      password: input.password,
      totp_code: input.totpCode,
      scope: input.scope ?? DEFAULT_SCOPE,
    });
  }

  /** The authorization URL of the code flow with PKCE, and the state and verifier to keep until the redirect comes back. */
  async authorizeUrl(opts: {
    redirectUri: string;
    scope?: string;
    state?: string;
    nonce?: string;
    prompt?: string;
  }): Promise<{ url: string; state: string; verifier: string }> {
    const { verifier, challenge } = await pkcePair();
    const state = opts.state ?? randomString(16);
    const url = this.#http.href('/authorize', {
      response_type: 'code',
      client_id: this.#clientAuth().client_id,
      redirect_uri: opts.redirectUri,
      scope: opts.scope ?? DEFAULT_SCOPE,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      nonce: opts.nonce,
      prompt: opts.prompt,
    });
    return { url, state, verifier };
  }

  /**
   * Browser: sends the page to the hosted sign-in page. The state and verifier wait in the store (or sessionStorage)
   * for `handleRedirect` on the page at `redirectUri`.
   */
  async signInWithRedirect(opts: { redirectUri: string; scope?: string }): Promise<void> {
    const { url, state, verifier } = await this.authorizeUrl(opts);
    this.#pendingStore().setItem(
      `${this.#key}.pkce`,
      JSON.stringify({ state, verifier, redirectUri: opts.redirectUri } satisfies Pending),
    );
    browser().location.assign(url);
  }

  /** Browser: on the page the sign-in came back to, trades the code for a session (checking the state); undefined when the URL carries none. */
  async handleRedirect(url: string = browser().location.href): Promise<Session | undefined> {
    const params = new URL(url).searchParams;
    const store = this.#pendingStore();
    const pending = store.getItem(`${this.#key}.pkce`);
    if (!params.has('code') && !params.has('error')) return undefined;
    store.removeItem(`${this.#key}.pkce`);
    if (params.has('error'))
      throw new TesseraError({
        code: params.get('error')!,
        status: 0,
        message: params.get('error_description') ?? params.get('error')!,
      });
    const p = pending ? (JSON.parse(pending) as Pending) : undefined;
    if (!p || p.state !== params.get('state'))
      throw new TesseraError({
        code: 'STATE_MISMATCH',
        status: 0,
        message: 'The sign-in answer does not match a sign-in this page started',
      });
    return await this.exchangeCode({ code: params.get('code')!, verifier: p.verifier, redirectUri: p.redirectUri });
  }

  #pendingStore(): SessionStore {
    const w = globalThis as { sessionStorage?: SessionStore };
    return this.#opts.store ?? w.sessionStorage ?? this.#store();
  }

  /** Trades an authorization code (and its PKCE verifier) for a session. */
  async exchangeCode(input: { code: string; verifier: string; redirectUri: string }): Promise<Session> {
    return await this.#token({
      grant_type: 'authorization_code',
      code: input.code,
      code_verifier: input.verifier,
      redirect_uri: input.redirectUri,
    });
  }

  /** New tokens from the refresh token (rotated: the old one stops working). Concurrent calls share one refresh. */
  async refresh(): Promise<Session> {
    const refreshToken = this.#session?.refreshToken;
    if (!refreshToken)
      throw new TesseraError({ code: 'NOT_SIGNED_IN', status: 0, message: 'No refresh token: sign in first' });
    this.#refreshing ??= this.#token({ grant_type: 'refresh_token', refresh_token: refreshToken }).finally(
      () => (this.#refreshing = undefined),
    );
    return await this.#refreshing;
  }

  /** Ends the session on the server (tokens revoked) and here. */
  async signOut(): Promise<void> {
    if (this.#session) await this.#http.request('POST', '/logout').catch(() => undefined);
    this.setSession(undefined);
  }

  /** The signed-in user's claims (/userinfo). */
  async getUser(): Promise<Record<string, unknown>> {
    return await this.#http.request<Record<string, unknown>>('GET', '/userinfo');
  }

  /** TOTP MFA of the signed-in user: enroll (a secret for the authenticator app), verify a code to turn it on, disable. */
  readonly mfa = {
    enroll: async () => await this.#http.request<ResponseOf<'/mfa/enroll', 'post'>>('POST', '/mfa/enroll'),
    verify: async (code: string) =>
      await this.#http.request<ResponseOf<'/mfa/verify', 'post'>>('POST', '/mfa/verify', { body: { code } }),
    disable: async (code: string) =>
      await this.#http.request<ResponseOf<'/mfa/disable', 'post'>>('POST', '/mfa/disable', { body: { code } }),
  };

  /** Changes the signed-in user's password. */
  async changePassword(currentPassword: string, newPassword: string): Promise<void> {
    await this.#http.request('POST', '/password/change', {
      body: { current_password: currentPassword, new_password: newPassword },
    });
  }

  /** Mails a reset link (the answer never says whether the address is registered). */
  async requestPasswordReset(email: string): Promise<void> {
    await this.#http.request('POST', '/password/reset/request', { body: { email }, keyOnly: true });
  }

  /** Sets a new password with the token of the reset mail. */
  async confirmPasswordReset(token: string, newPassword: string): Promise<void> {
    await this.#http.request('POST', '/password/reset/confirm', {
      body: { token, new_password: newPassword },
      anonymous: true,
    });
  }

  /** Mails a verification link: to the signed-in user, or (with the project key) to `email`. */
  async requestEmailVerification(email?: string): Promise<void> {
    await this.#http.request(
      'POST',
      '/email/verify/request',
      email === undefined ? { body: {} } : { body: { email }, keyOnly: true },
    );
  }

  /** Confirms an address with the token of the verification mail. */
  async confirmEmailVerification(token: string): Promise<void> {
    await this.#http.request('POST', '/email/verify/confirm', { body: { token }, anonymous: true });
  }
}

type Browser = { location: { href: string; assign(url: string): void } };

function browser(): Browser {
  const w = globalThis as unknown as Partial<Browser>;
  if (!w.location)
    throw new TesseraError({
      code: 'NOT_A_BROWSER',
      status: 0,
      message: 'signInWithRedirect and handleRedirect need a browser page; use authorizeUrl and exchangeCode elsewhere',
    });
  return w as Browser;
}
