// Wires the identity services together. Built once per running subgraph; nothing runs on import.
import { createSecretBox } from '../../../platform/crypto.ts';
import { errors } from '../../../platform/errors.ts';
import { schedulerOf } from '../../../platform/jobs.ts';
import type { SubgraphDeps } from '../../../platform/subgraph.ts';
import { createGrantService } from './grants.ts';
import { createLimiters } from './limits.ts';
import { createLimitSharing } from '../../../platform/rate-limit.ts';
import { createMailService } from './mail.ts';
import { createMfaService } from './mfa.ts';
import { createRecoveryService } from './recovery.ts';
import { createSigningKeyService } from './signing-keys.ts';
import { createTokenService } from './tokens.ts';
import { createTokenStateCache } from './token-cache.ts';
import {
  announceLocally,
  publishBroadcast,
  startBroadcastListener,
  type BroadcastListener,
} from '../../../platform/broadcast.ts';
import { createClientAuthService } from './clients.ts';
import { createUserService } from './users.ts';
import { createAdminUserService } from './admin-users.ts';

export type IdentityServices = Awaited<ReturnType<typeof createIdentityServices>>;

/** Builds every service of the identity subgraph from the platform's dependencies. */
export async function createIdentityServices(deps: SubgraphDeps) {
  const { config, db, logger, databaseUrl, router } = deps;
  if (!config.internalSecret)
    throw errors.unavailable('TESSERA_INTERNAL_SECRET is not set: the identity subgraph cannot seal secrets');
  const box = createSecretBox(config.internalSecret, 'identity:secrets');
  // Failures counted by any identity process count in every one (broadcast; checking stays a memory read).
  const limitSharing = createLimitSharing({
    url: databaseUrl,
    logger,
    publish: async (m) => await publishBroadcast(db.em(), 'rate-limits.changed', m),
  });
  const limiters = createLimiters(limitSharing);
  // The platform's scheduler for this subgraph's jobs (jobs/index.ts): the mail queue.
  const scheduler = schedulerOf(deps, 'identity');
  const tokenCache = createTokenStateCache();
  const keys = createSigningKeyService({ db, box, config });
  const users = await createUserService({ db, limiters });
  const mfa = createMfaService({ db, box, limiters });
  const tokens = createTokenService({ db, config, logger, keys, cache: tokenCache });
  const clients = createClientAuthService({ router, logger });
  const grants = createGrantService({ db, logger, users, mfa, tokens });
  const mail = createMailService({ config, logger, box, scheduler });
  const recovery = createRecoveryService({ db, config, users, tokens, mail, limiters });
  const adminUsers = createAdminUserService({ db, users, recovery, limiters });
  const issuer = {
    /** The issuer is the platform's public address (read at call time: it is set after listen when PORT=0). */
    issuerOf: () => config.issuer,
    discoveryUrlOf: () => `${config.issuer}/.well-known/openid-configuration`,
  };

  /** A deleted project: its users and their sessions and codes go; its tokens are refused from now on. */
  async function projectDeleted(projectId: string): Promise<void> {
    await db.em().transactional(async (em) => {
      await em.execute(
        'insert into identity_deleted_projects (project_id, deleted_at) values (?, now()) on conflict do nothing',
        [projectId],
      );
      await em.execute('delete from identity_authorization_codes where project_id = ?', [projectId]);
      await em.execute('delete from identity_users where project_id = ?', [projectId]);
      await publishBroadcast(em, 'access-tokens.changed', { projectId });
    });
    announceLocally('access-tokens.changed', { projectId });
  }

  /**
   * A deleted OIDC client: its sessions end, its codes go, and its client_credentials tokens are refused from now on
   * (its secret already failed: the tenant subgraph's `oidc-clients.changed`). Idempotent (events come at least once).
   */
  async function oidcClientDeleted(projectId: string, clientId: string): Promise<void> {
    await db.em().transactional(async (em) => {
      await em.execute(
        'insert into identity_deleted_clients (client_id, project_id, deleted_at) values (?, ?, now()) on conflict do nothing',
        [clientId, projectId],
      );
      await em.execute('delete from identity_authorization_codes where client_id = ? and project_id = ?', [
        clientId,
        projectId,
      ]);
      await em.execute(
        `update identity_sessions set revoked_at = now(), revoked_reason = 'client_deleted' where client_id = ? and project_id = ? and revoked_at is null`,
        [clientId, projectId],
      );
      await publishBroadcast(em, 'access-tokens.changed', { projectId });
    });
    announceLocally('access-tokens.changed', { projectId });
  }

  let listener: BroadcastListener | undefined;
  const broadcasts = {
    /** Follows what other processes announce; from then on authenticated clients and valid client tokens are remembered. */
    async start(): Promise<void> {
      if (listener) return;
      await limitSharing.start();
      const l = await startBroadcastListener({ url: databaseUrl, logger });
      listener = l;
      l.on('oidc-clients.changed', (change) => clients.drop(change));
      l.on('access-tokens.changed', (change) => {
        tokenCache.drop(change);
        // Another process retired a key: stop verifying with it now, not at the next periodic re-read.
        if (change.keys) void keys.reload().catch((err: unknown) => logger.warn({ err }, 'signing keys reload failed'));
      });
      // Messages may have been lost while the connection was down: start again from empty.
      l.onReset(() => {
        tokenCache.drop({});
        clients.drop({});
      });
      tokenCache.follow(l.listening);
      clients.follow(l.listening);
    },
    async stop(): Promise<void> {
      tokenCache.follow(() => false);
      clients.follow(() => false);
      await listener?.stop();
      listener = undefined;
      await limitSharing.stop();
    },
  };

  return {
    config,
    keys,
    users,
    adminUsers,
    mfa,
    tokens,
    clients,
    grants,
    mail,
    recovery,
    issuer,
    scheduler,
    projectDeleted,
    oidcClientDeleted,
    broadcasts,
  };
}
