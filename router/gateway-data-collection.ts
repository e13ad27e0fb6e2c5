// `@apollo/gateway` collects data about the machine it runs on and sends it to Apollo unless told not to: when an
// `ApolloGateway` is constructed it probes the cloud metadata services (169.254.169.254, 100.100.100.200,
// metadata.google.internal) through OpenTelemetry's resource detectors, and its meter provider exports the
// figures to usage-reporting.api.apollographql.com every hour and once more when the gateway stops. Its only switch
// is the `APOLLO_TELEMETRY_DISABLED` environment variable, read by the constructor.
//
// A self-hosted platform reports nothing to a third party, and a process serving hostile tenants does not ask the
// cloud's metadata service about itself. So this module, imported by router.ts before `@apollo/gateway`, sets the
// switch for every router, with no way back on; and it keeps the packages that only that data collection uses from
// loading at all: the gateway's `utilities/opentelemetry.js` requires them at its top (seven packages, ~850
// modules, ~22 MB of every router process's resident size, measured on `node main.ts`). Each of those requires, and
// only from that file, answers a stand-in that loads the real package on its first use; with the switch set they
// are never used. tests/security/outbound-connections.test.ts checks that a platform opens no connection beyond
// loopback while it starts, serves and stops; tests/unit/gateway-data-collection.test.ts checks what loads.
import Module from 'node:module';

process.env.APOLLO_TELEMETRY_DISABLED = 'true';

/** The file of `@apollo/gateway` that requires them, and the packages only its data collection uses. */
const REQUIRER = /[\\/]@apollo[\\/]gateway[\\/]dist[\\/]utilities[\\/]opentelemetry\.js$/;
export const DATA_COLLECTION_PACKAGES = [
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/resources',
  '@opentelemetry/resource-detector-alibaba-cloud',
  '@opentelemetry/resource-detector-aws',
  '@opentelemetry/resource-detector-gcp',
  '@opentelemetry/resource-detector-azure',
  '@opentelemetry/exporter-metrics-otlp-http',
] as const;
const deferred = new Set<string>(DATA_COLLECTION_PACKAGES);

type Require = (this: NodeJS.Module, id: string) => unknown;
const proto = (Module as unknown as { prototype: { require: Require } }).prototype;
const original = proto.require;

/**
 * A stand-in for a package's exports that requires it on first use. The gateway's compiled code reads the exports
 * only as properties (`pkg_1.name`) inside functions, never at load.
 */
function deferredExports(requirer: NodeJS.Module, id: string): object {
  let real: Record<PropertyKey, unknown> | undefined;
  const load = () => (real ??= original.call(requirer, id) as Record<PropertyKey, unknown>);
  return new Proxy(
    {},
    {
      get: (_t, key) => load()[key],
      has: (_t, key) => key in load(),
      ownKeys: () => Reflect.ownKeys(load()),
      getOwnPropertyDescriptor: (_t, key) => {
        const d = Reflect.getOwnPropertyDescriptor(load(), key);
        return d && { ...d, configurable: true };
      },
    },
  );
}

proto.require = function require(this: NodeJS.Module, id: string): unknown {
  if (deferred.has(id) && REQUIRER.test(this.filename ?? '')) return deferredExports(this, id);
  return original.call(this, id);
};
