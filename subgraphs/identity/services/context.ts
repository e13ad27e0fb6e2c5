// What every identity service is built from.
import type { Config } from '../../../platform/config.ts';
import type { SubgraphDatabase } from '../../../platform/database.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { OidcClientFactsInput } from '../../../platform/internal-operations.ts';

export type ServiceDeps = { config: Config; db: SubgraphDatabase; logger: Logger; box: SecretBox };

/** The OIDC client as the tenant subgraph vouched for it (client authentication done by the caller). */
export type ClientFacts = OidcClientFactsInput;
