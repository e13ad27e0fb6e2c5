// What every identity service is built from.
import type { Config } from '../../../platform/config.ts';
import type { SubgraphDatabase } from '../../../platform/database.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { SecretBox } from '../../../platform/crypto.ts';

export type ServiceDeps = { config: Config; db: SubgraphDatabase; logger: Logger; box: SecretBox };

/** The OIDC client as the tenant subgraph vouched for it (client authentication done by the caller). */
export type ClientFacts = {
  clientId: string;
  projectId: string;
  tenantId: string;
  grantTypes: string[];
  redirectUris: string[];
  /** A public client has no secret: PKCE is required, client_credentials is refused. */
  public: boolean;
  /** Scopes the client may be issued (`role:*`: role scopes, each for a role the end-user holds). */
  allowedScopes: string[];
};
