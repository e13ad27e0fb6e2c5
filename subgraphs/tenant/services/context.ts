// What every tenant service is built from.
import type { Config } from '../../../platform/config.ts';
import type { SubgraphDatabase } from '../../../platform/database.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { SecretBox } from '../../../platform/crypto.ts';

export type ServiceDeps = { config: Config; db: SubgraphDatabase; logger: Logger; box: SecretBox };
