// Where a project's OIDC endpoints live.
import type { SubgraphDeps } from '../../../platform/subgraph.ts';

export type IdentityServices = { issuer: { issuerOf: (projectId: string) => string; discoveryUrlOf: (projectId: string) => string } };

/** The issuer is the platform's public address; projects are told apart by their client ids and keys. */
export function createIdentityServices({ config }: SubgraphDeps): IdentityServices {
  return {
    issuer: {
      issuerOf: () => config.issuer,
      discoveryUrlOf: () => `${config.issuer}/.well-known/openid-configuration`,
    },
  };
}
