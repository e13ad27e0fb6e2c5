// OpenTelemetry tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Instrumenting ESM modules (graphql,
// node:http as imported here) needs a loader hook registered before the application's modules load, so the SDK
// starts in a preload module (`node --import platform/telemetry-preload.ts main.ts`): main.ts's in-place
// re-execution (platform/node-tuning.ts) adds that flag when the endpoint is set. Without the endpoint nothing of
// OpenTelemetry is loaded at all.
import { fileURLToPath } from 'node:url';

/** The preload module that starts the SDK. */
export const TELEMETRY_PRELOAD = fileURLToPath(new URL('./telemetry-preload.ts', import.meta.url));

/** The Node flags that start tracing for a process with this environment, unless already given. */
export function telemetryFlags(env: NodeJS.ProcessEnv, given: readonly string[]): string[] {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_SDK_DISABLED === 'true') return [];
  if (given.some((g) => g.includes('telemetry-preload'))) return [];
  return ['--import', TELEMETRY_PRELOAD];
}

/** The service name of a process from its command line: tessera, tessera-front-door, tessera-router, tessera-<subgraph>. */
export function serviceNameOf(argv: readonly string[]): string {
  const i = argv.indexOf('--role');
  const role = i >= 0 ? argv[i + 1] : undefined;
  if (!role || role === 'all') return 'tessera';
  return `tessera-${role.replace(/^subgraph:/, '')}`;
}
