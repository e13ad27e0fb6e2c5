// The oidc-provider peer of P4: one confidential client (client_credentials, client_secret_basic) on an
// in-memory provider (its own MemoryAdapter), with the clientCredentials and introspection features on,
// listening on loopback without TLS. Prints `listening <port>` once it answers.
// Endpoints: POST /token (client_credentials) and POST /token/introspection (oidc-provider's defaults).
import http from 'node:http';

type ProviderLike = { callback: () => http.RequestListener; proxy: boolean };
type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => ProviderLike;

// oidc-provider ships no type declarations: import it through a computed specifier and type what we use.
const specifier = 'oidc-provider';
const { Provider } = (await import(specifier)) as { Provider: ProviderClass };

const clientId = process.env.OIDC_CLIENT_ID ?? 'bench-client';
const clientSecret = process.env.OIDC_CLIENT_SECRET ?? 'bench-client-secret-0123456789abcdef';

// The issuer URL needs the port: listen first, then hand requests to the provider.
const server = http.createServer();
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
  },
  // P4-introspect passes Tessera's access-token lifetime, so both introspected tokens expire together
  // (oidc-provider's default is 10 minutes).
  ttl: { ClientCredentials: Number(process.env.OIDC_TOKEN_TTL ?? 900) },
  scopes: ['openid'],
});
server.on('request', provider.callback());
process.stdout.write(`listening ${port}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
