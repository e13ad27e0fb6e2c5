// The end-user admin API of a project (`/admin/users`): needs the secret key (or a token granted an admin scope).
// What a project's dashboard or back office does: add users or invite them by e-mail, list and search users, read one,
// change roles and app metadata, disable and enable, end every session, reset MFA, delete.
import type { Http } from './http.ts';
import type { BodyOf, ResponseOf } from './types.ts';

const BASE = '/admin/users';
const u = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

/** A user as the admin API shows it (with roles, app metadata and whether it is disabled). */
export type AdminUser = ResponseOf<'/admin/users/{id}', 'get'>['user'];

export class Admin {
  readonly #http: Http;
  constructor(http: Http) {
    this.#http = http;
  }

  readonly users = {
    /** Adds a user with a password (`email_verified`: whether the project vouches for the address). */
    create: async (user: BodyOf<'/admin/users', 'post'>): Promise<AdminUser> =>
      (await this.#http.request<{ user: AdminUser }>('POST', BASE, { body: user })).user,
    /** Adds a user without a password and mails an invitation with a link to choose one (works once, for 7 days). */
    invite: async (user: BodyOf<'/admin/users/invite', 'post'>): Promise<AdminUser> =>
      (await this.#http.request<{ user: AdminUser }>('POST', `${BASE}/invite`, { body: user })).user,
    /** Mails the user's invitation again (a new set-password link, once, 7 days). */
    resendInvitation: async (id: string): Promise<void> => void (await this.#http.request('POST', `${u(id)}/invite`)),
    /** One page of users: `search` (e-mail or name), `role`, `disabled`, `first`, `after` (the previous page's next_cursor). */
    list: async (query: { search?: string; role?: string; disabled?: boolean; first?: number; after?: string } = {}) =>
      await this.#http.request<ResponseOf<'/admin/users', 'get'>>('GET', BASE, { query }),
    get: async (id: string): Promise<AdminUser> => (await this.#http.request<{ user: AdminUser }>('GET', u(id))).user,
    /** Replaces roles and/or app metadata. */
    update: async (id: string, change: BodyOf<'/admin/users/{id}', 'patch'>): Promise<AdminUser> =>
      (await this.#http.request<{ user: AdminUser }>('PATCH', u(id), { body: change })).user,
    disable: async (id: string): Promise<AdminUser> =>
      (await this.#http.request<{ user: AdminUser }>('POST', `${u(id)}/disable`)).user,
    enable: async (id: string): Promise<AdminUser> =>
      (await this.#http.request<{ user: AdminUser }>('POST', `${u(id)}/enable`)).user,
    /** Ends every session of the user (access and refresh tokens); answers how many ended. */
    revokeSessions: async (id: string): Promise<number> =>
      (await this.#http.request<{ revoked_sessions: number }>('POST', `${u(id)}/revoke-sessions`)).revoked_sessions,
    resetMfa: async (id: string): Promise<AdminUser> =>
      (await this.#http.request<{ user: AdminUser }>('POST', `${u(id)}/reset-mfa`)).user,
    remove: async (id: string): Promise<void> => void (await this.#http.request('DELETE', u(id))),
  };
}
