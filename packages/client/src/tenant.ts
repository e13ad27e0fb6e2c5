// Tenant management (what the CLI and a dashboard do): the developer account with MFA, projects and their keys,
// CORS rules, OIDC clients, realtime publications and plans. Calls carry the tenant's access token.
import type { Http } from './http.ts';
import type {
  BodyOf,
  OidcClient,
  Plan,
  Project,
  ProjectBranding,
  ProjectCors,
  ProjectListed,
  LoggedRequest,
  Publication,
  RequestLogQuery,
  Tenant,
  TenantSession,
  TenantSessionInfo,
} from './types.ts';

/** Re-authentication for a sensitive change: the current password, or a TOTP code when MFA is on. */
export type Reauth = { currentPassword?: string; totpCode?: string };
const reauthBody = (r: Reauth) => ({
  ...(r.currentPassword !== undefined ? { current_password: r.currentPassword } : {}),
  ...(r.totpCode !== undefined ? { totp_code: r.totpCode } : {}),
});

const BASE = '/auth/api/v1';
const p = (id: string) => `${BASE}/projects/${encodeURIComponent(id)}`;

export class TenantApi {
  readonly #http: Http;
  /** The signed-in tenant's tokens (set by `login`, `refresh`; or given to createClient as `accessToken`). */
  session: TenantSession | undefined;

  constructor(http: Http) {
    this.#http = http;
  }

  async signup(input: { email: string; password: string; name?: string }): Promise<Tenant> {
    return (
      await this.#http.request<{ tenant: Tenant }>('POST', `${BASE}/tenants/signup`, { body: input, anonymous: true })
    ).tenant;
  }
  /**
   * Signs in (with `totpCode` when MFA is on — without it the error's code is MFA_REQUIRED — or, for a lost
   * authenticator, one of the account's `recoveryCode`s).
   */
  async login(input: {
    email: string;
    password: string;
    totpCode?: string;
    recoveryCode?: string;
  }): Promise<TenantSession> {
    this.session = await this.#http.request<TenantSession>('POST', `${BASE}/tenant/login`, {
      body: {
        email: input.email,
        password: input.password,
        ...(input.totpCode ? { totp_code: input.totpCode } : {}),
        ...(input.recoveryCode ? { recovery_code: input.recoveryCode } : {}),
      },
      anonymous: true,
    });
    return this.session;
  }
  /**
   * A new pair from the refresh token (rotated: the old one stops working). Concurrent calls with the same token share
   * one request: a page that makes two calls at once when the access token has expired refreshes once, never twice
   * (the second would present a rotated token, which the server takes for theft and answers by ending the session).
   */
  async refresh(refreshToken = this.session?.refresh_token): Promise<TenantSession> {
    const key = refreshToken ?? '';
    let flight = this.#refreshing.get(key);
    if (!flight) {
      flight = this.#http
        .request<TenantSession>('POST', `${BASE}/tenant/refresh`, {
          body: { refresh_token: refreshToken },
          anonymous: true,
        })
        .then((session) => (this.session = session))
        .finally(() => this.#refreshing.delete(key));
      this.#refreshing.set(key, flight);
    }
    return await flight;
  }
  /** The refresh under way for each refresh token. */
  readonly #refreshing = new Map<string, Promise<TenantSession>>();
  async logout(): Promise<void> {
    await this.#http.request('POST', `${BASE}/tenant/logout`);
    this.session = undefined;
  }
  async me(): Promise<Tenant> {
    return (await this.#http.request<{ tenant: Tenant }>('GET', `${BASE}/tenant`)).tenant;
  }
  readonly mfa = {
    enroll: async () =>
      await this.#http.request<{ secret: string; otpauth_url: string }>('POST', `${BASE}/tenant/mfa/enroll`),
    /** Turns MFA on; answers the ten recovery codes, shown this once. */
    verify: async (code: string) =>
      await this.#http.request<{ mfa_enabled: boolean; recovery_codes: string[] }>(
        'POST',
        `${BASE}/tenant/mfa/verify`,
        { body: { code } },
      ),
    /** Turns MFA off with a TOTP code or an unused recovery code. */
    disable: async (code: string) =>
      await this.#http.request<{ mfa_enabled: boolean }>('POST', `${BASE}/tenant/mfa/disable`, { body: { code } }),
    /** Ten new recovery codes (the old ones stop working); needs a TOTP code. */
    regenerateRecoveryCodes: async (code: string): Promise<string[]> =>
      (
        await this.#http.request<{ recovery_codes: string[] }>('POST', `${BASE}/tenant/mfa/recovery-codes`, {
          body: { code },
        })
      ).recovery_codes,
  };

  /** Forgot password, reset, password and e-mail changes. */
  readonly password = {
    /** Mails a reset link; the answer is the same whether the address has an account or not. */
    forgot: async (email: string): Promise<void> =>
      void (await this.#http.request('POST', `${BASE}/tenant/password/forgot`, { body: { email }, anonymous: true })),
    /** Sets a new password with the token of the reset mail; every session of the account ends. */
    reset: async (token: string, newPassword: string): Promise<void> =>
      void (await this.#http.request('POST', `${BASE}/tenant/password/reset`, {
        body: { token, new_password: newPassword },
        anonymous: true,
      })),
    /** Changes the password (current password, or a TOTP code with MFA on); the other sessions end. */
    change: async (newPassword: string, reauth: Reauth): Promise<void> =>
      void (await this.#http.request('POST', `${BASE}/tenant/password`, {
        body: { new_password: newPassword, ...reauthBody(reauth) },
      })),
  };

  readonly email = {
    /** Mails a confirmation link to `newEmail`; the address changes when it is opened. */
    change: async (newEmail: string, reauth: Reauth): Promise<void> =>
      void (await this.#http.request('POST', `${BASE}/tenant/email`, {
        body: { new_email: newEmail, ...reauthBody(reauth) },
      })),
    /** Confirms a new address with the token of its mail (no session needed). */
    confirm: async (token: string): Promise<Tenant> =>
      (
        await this.#http.request<{ tenant: Tenant }>('POST', `${BASE}/tenant/email/confirm`, {
          body: { token },
          anonymous: true,
        })
      ).tenant,
  };

  /** The account's sessions: list, end one, sign out everywhere. */
  readonly sessions = {
    list: async (): Promise<TenantSessionInfo[]> =>
      (await this.#http.request<{ sessions: TenantSessionInfo[] }>('GET', `${BASE}/tenant/sessions`)).sessions,
    revoke: async (id: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${BASE}/tenant/sessions/${encodeURIComponent(id)}`)),
    /** Ends every session (or every other one with `keepCurrent`); answers how many ended. */
    revokeAll: async (opts: { keepCurrent?: boolean } = {}): Promise<number> =>
      (
        await this.#http.request<{ revoked: number }>('POST', `${BASE}/tenant/sessions/revoke`, {
          body: { keep_current: opts.keepCurrent ?? false },
        })
      ).revoked,
  };

  /** Deletes the account and every project it owns (no undo); `confirm` is the account's e-mail address. */
  async deleteAccount(confirm: string, reauth: Reauth): Promise<{ deleted_projects: string[] }> {
    const out = await this.#http.request<{ deleted_projects: string[] }>('POST', `${BASE}/tenant/delete`, {
      body: { confirm, ...reauthBody(reauth) },
    });
    this.session = undefined;
    return out;
  }

  async plans(): Promise<Plan[]> {
    return (await this.#http.request<{ plans: Plan[] }>('GET', `${BASE}/plans`, { anonymous: true })).plans;
  }

  readonly projects = {
    /** Every project of the tenant (all pages). */
    list: async (): Promise<ProjectListed[]> => {
      const out: ProjectListed[] = [];
      let after: string | undefined;
      do {
        const page = await this.#http.request<{ projects: ProjectListed[]; next_cursor: string | null }>(
          'GET',
          `${BASE}/projects`,
          { query: { first: 100, after } },
        );
        out.push(...page.projects);
        after = page.next_cursor ?? undefined;
      } while (after);
      return out;
    },
    get: async (id: string): Promise<Project> => (await this.#http.request<{ project: Project }>('GET', p(id))).project,
    create: async (name: string): Promise<Project> =>
      (await this.#http.request<{ project: Project }>('POST', `${BASE}/projects`, { body: { name } })).project,
    rename: async (id: string, name: string): Promise<Project> =>
      (await this.#http.request<{ project: Project }>('PUT', p(id), { body: { name } })).project,
    remove: async (id: string): Promise<void> => void (await this.#http.request('DELETE', p(id))),
    /** A new secret API key (the old one is refused at once). */
    regenerateKey: async (id: string): Promise<Project> =>
      (await this.#http.request<{ project: Project }>('POST', `${p(id)}/regenerate-key`)).project,
    /** A new publishable key (the old one is refused at once). */
    regeneratePublishableKey: async (id: string): Promise<Project> =>
      (await this.#http.request<{ project: Project }>('POST', `${p(id)}/regenerate-publishable-key`)).project,
    cors: async (id: string): Promise<ProjectCors> =>
      (await this.#http.request<{ cors: ProjectCors }>('GET', `${p(id)}/cors`)).cors,
    setCors: async (id: string, rule: BodyOf<'/auth/api/v1/projects/{id}/cors', 'put'>): Promise<ProjectCors> =>
      (await this.#http.request<{ cors: ProjectCors }>('PUT', `${p(id)}/cors`, { body: rule })).cors,
    /** How the hosted sign-in pages (`/authorize`) present the project. */
    branding: async (id: string): Promise<ProjectBranding> =>
      (await this.#http.request<{ branding: ProjectBranding }>('GET', `${p(id)}/branding`)).branding,
    /** Changes the branding (omitted fields stay; null or '' removes the logo or the colour). */
    setBranding: async (
      id: string,
      change: BodyOf<'/auth/api/v1/projects/{id}/branding', 'put'>,
    ): Promise<ProjectBranding> =>
      (await this.#http.request<{ branding: ProjectBranding }>('PUT', `${p(id)}/branding`, { body: change })).branding,
    /**
     * One page of the project's request log, newest first: filter by `status` (`2xx`...`5xx`), `route` (text it
     * contains) and `credential` (kind); pass the answer's `next_cursor` as `after` for the next page.
     */
    requests: async (
      id: string,
      query: RequestLogQuery = {},
    ): Promise<{ requests: LoggedRequest[]; next_cursor: string | null }> =>
      await this.#http.request<{ requests: LoggedRequest[]; next_cursor: string | null }>('GET', `${p(id)}/requests`, {
        query,
      }),
    publications: async (id: string): Promise<Publication[]> =>
      (await this.#http.request<{ publications: Publication[] }>('GET', `${p(id)}/publications`)).publications,
    setPublication: async (id: string, table: string, enabled: boolean): Promise<Publication> =>
      (
        await this.#http.request<{ publication: Publication }>('POST', `${p(id)}/publications`, {
          body: { table, enabled },
        })
      ).publication,
  };

  readonly clients = {
    list: async (projectId: string): Promise<OidcClient[]> =>
      (await this.#http.request<{ oidc_clients: OidcClient[] }>('GET', `${p(projectId)}/oidc-clients`)).oidc_clients,
    /** A new client (with its secret); at most 20 per project. */
    create: async (
      projectId: string,
      client: BodyOf<'/auth/api/v1/projects/{id}/oidc-clients', 'post'>,
    ): Promise<OidcClient> =>
      (
        await this.#http.request<{ oidc_client: OidcClient }>('POST', `${p(projectId)}/oidc-clients`, {
          body: client,
        })
      ).oidc_client,
    /** Deletes a client (not the project's last): its secret and the tokens issued to it stop working. */
    remove: async (projectId: string, clientId: string): Promise<void> =>
      void (await this.#http.request('DELETE', `${p(projectId)}/oidc-clients/${encodeURIComponent(clientId)}`)),
    update: async (
      projectId: string,
      clientId: string,
      change: BodyOf<'/auth/api/v1/projects/{id}/oidc-clients/{client_id}', 'put'>,
    ): Promise<OidcClient> =>
      (
        await this.#http.request<{ oidc_client: OidcClient }>(
          'PUT',
          `${p(projectId)}/oidc-clients/${encodeURIComponent(clientId)}`,
          { body: change },
        )
      ).oidc_client,
    rotateSecret: async (projectId: string, clientId: string): Promise<OidcClient> =>
      (
        await this.#http.request<{ oidc_client: OidcClient }>(
          'POST',
          `${p(projectId)}/oidc-clients/${encodeURIComponent(clientId)}/rotate-secret`,
        )
      ).oidc_client,
  };
}
