// Client authentication for the token, introspection and revocation endpoints. Clients live in the
// tenant subgraph (`_oidcClient`, asked through the router); what it vouched for is kept here, keyed by
// client_id and the SHA-256 of the secret presented (never the secret itself), so a client presenting the
// same credentials again costs no call: each /token or /introspect request is then one GraphQL operation.
// Only successful authentications are kept. Any change of a client (secret rotated, settings edited, the
// project deleted) drops its entries at once: in the process that made it right after its commit
// (announceLocally), in every other one through the `oidc-clients.changed` broadcast sent in the same
// transaction. Nothing is trusted while the broadcast connection is down, a reconnection empties the
// cache, and nothing is kept longer than a minute.
import { sha256Hex } from '../../../platform/crypto.ts';
import { errors } from '../../../platform/errors.ts';
import type { BroadcastTopics } from '../../../platform/broadcast.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { RouterClient } from '../../../platform/subgraph.ts';
import { INTERNAL_OPERATIONS, callInternal } from '../../../platform/internal-operations.ts';
import type { ClientFacts } from './context.ts';
import { oauthError } from './oauth-errors.ts';

export type ClientCredentials = { clientId: string; clientSecret?: string | null };

const MAX_ENTRIES = 10_000;
const TTL_MS = 60_000;

const failed = () => oauthError('invalid_client', 'Client authentication failed');
const required = () =>
  oauthError('invalid_client', 'Client authentication is required (client_secret_basic or client_secret_post)');

export type ClientAuthService = ReturnType<typeof createClientAuthService>;

export function createClientAuthService({ router, logger }: { router: RouterClient; logger: Logger }) {
  const entries = new Map<string, { facts: ClientFacts; at: number }>();
  let generation = 0;
  /** Whether broadcasts are heard right now (set by `follow`); nothing is cached otherwise. */
  let live: () => boolean = () => false;

  const keyOf = (c: ClientCredentials) =>
    `${c.clientId}\u0000${typeof c.clientSecret === 'string' ? sha256Hex(c.clientSecret) : '-'}`;

  /** What the tenant subgraph says about the client; null when unknown. */
  async function ask(
    c: ClientCredentials,
    requestId: string,
  ): Promise<(ClientFacts & { secretValid: boolean | null }) | null> {
    try {
      const data = await callInternal(
        router,
        INTERNAL_OPERATIONS.oidcClient,
        { clientId: c.clientId, clientSecret: c.clientSecret ?? null },
        { requestId, principal: { kind: 'internal' } },
      );
      return data._oidcClient;
    } catch (err) {
      logger.error({ err }, 'client lookup failed');
      throw errors.unavailable('The client registry did not answer');
    }
  }

  return {
    /**
     * The client of `credentials`: a secret must match; without one, only a public client of an endpoint
     * that allows them. `invalid_client` otherwise.
     */
    async authenticate(c: ClientCredentials, opts: { allowPublic: boolean; requestId: string }): Promise<ClientFacts> {
      if (typeof c.clientId !== 'string' || c.clientId === '' || c.clientId.length > 200) throw failed();
      const hasSecret = typeof c.clientSecret === 'string';
      const key = keyOf(c);
      const hit = live() ? entries.get(key) : undefined;
      let facts: ClientFacts;
      if (hit && Date.now() - hit.at <= TTL_MS) {
        facts = hit.facts;
      } else {
        const since = generation;
        const found = await ask(c, opts.requestId);
        if (!found) throw failed();
        if (hasSecret && found.secretValid !== true) throw failed();
        facts = Object.freeze({
          clientId: found.clientId,
          projectId: found.projectId,
          tenantId: found.tenantId,
          grantTypes: [...found.grantTypes],
          redirectUris: [...found.redirectUris],
          public: found.public,
          allowedScopes: [...found.allowedScopes],
        });
        if (since === generation && live()) {
          if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
          entries.set(key, { facts, at: Date.now() });
        }
      }
      if (!hasSecret && (!facts.public || !opts.allowPublic)) throw required();
      return facts;
    },

    /** Drops the clients named, those of a project, or (nothing named) every one. */
    drop(change: BroadcastTopics['oidc-clients.changed']): void {
      generation++;
      if (!change.clientIds && !change.projectId) return entries.clear();
      const ids = new Set(change.clientIds ?? []);
      for (const [key, e] of entries)
        if (ids.has(e.facts.clientId) || e.facts.projectId === change.projectId) entries.delete(key);
    },

    /** From now on, cache while `isLive()` says broadcasts are heard. */
    follow(isLive: () => boolean): void {
      generation++;
      entries.clear();
      live = isLive;
    },

    size: () => entries.size,
  };
}
