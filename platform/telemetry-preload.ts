// Loaded with `node --import` before main.ts (see platform/telemetry.ts): registers the ESM loader hook that lets
// instrumentations patch modules as they load, then starts the OpenTelemetry SDK with OTLP/HTTP export and the
// instrumentations for HTTP (server and client), fetch (undici), Fastify, GraphQL and pg. Trace context travels
// between processes in `traceparent` headers, so one trace spans front door → router → subgraphs → PostgreSQL.
import { register } from 'node:module';
import os from 'node:os';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { serviceNameOf } from './telemetry.ts';

// Only the modules an instrumentation hooks go through import-in-the-middle's wrapping: each instrumentation's Hook()
// tells the loader thread its module names over this channel (OpenTelemetry's documented ESM set-up). With every
// module wrapped, a traced split start (seven processes one after another) took 75 s on a quiet machine, 52 s now,
// 28 s untraced; on a busy CI machine it ran past the observability test's 90 s.
const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

const [
  { NodeSDK },
  { OTLPTraceExporter },
  { resourceFromAttributes },
  { HttpInstrumentation },
  { UndiciInstrumentation },
  { FastifyInstrumentation },
  { GraphQLInstrumentation },
  { PgInstrumentation },
] = await Promise.all([
  import('@opentelemetry/sdk-node'),
  import('@opentelemetry/exporter-trace-otlp-http'),
  import('@opentelemetry/resources'),
  import('@opentelemetry/instrumentation-http'),
  import('@opentelemetry/instrumentation-undici'),
  import('@opentelemetry/instrumentation-fastify'),
  import('@opentelemetry/instrumentation-graphql'),
  import('@opentelemetry/instrumentation-pg'),
]);

const sdk = new NodeSDK({
  resource: resourceFromAttributes({
    'service.name': process.env.OTEL_SERVICE_NAME || serviceNameOf(process.argv),
    'service.instance.id': `${os.hostname()}:${process.pid}`,
  }),
  traceExporter: new OTLPTraceExporter(),
  instrumentations: [
    // Probes and scrapes would be most of the spans and tell nothing.
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => /^\/(livez|readyz|metrics)(\?|$)/.test(req.url ?? ''),
    }),
    new UndiciInstrumentation(),
    new FastifyInstrumentation(),
    // Resolver spans for every field would swamp a trace; the operation's parse, validate and execute spans stay.
    new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, mergeItems: true, depth: 2 }),
    new PgInstrumentation({ enhancedDatabaseReporting: false }),
  ],
});
sdk.start();
// The loader knows every hooked module before the platform's first import.
await waitForAllMessagesAcknowledged();

// Spans still buffered are sent before the process ends (main.ts exits on SIGTERM after its own shutdown).
process.once('beforeExit', () => void sdk.shutdown().catch(() => {}));
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.prependListener(signal, () => void sdk.shutdown().catch(() => {}));
}
