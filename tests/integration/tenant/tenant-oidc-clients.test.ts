// Several OIDC clients per project: create, update (grant types and scopes checked as at creation), delete, the cap
// per project, and what a hostile caller tries (another tenant's project or client, a project key, anonymous).
// Driven through the tenant subgraph on a real PostgreSQL; what the identity provider does with a deleted client is
// in tests/e2e/identity/identity-caches.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ANONYMOUS, startTenantHarness, type Harness, type SignedIn } from '../../../subgraphs/tenant/testing.ts';
import { MAX_OIDC_CLIENTS_PER_PROJECT } from '../../../subgraphs/tenant/services/oidc-clients.ts';

const FIELDS = 'clientId clientSecret name redirectUris grantTypes allowedScopes public default';
const CREATE_PROJECT = `mutation($name: String!) { createProject(input: { name: $name }) { id apiKey oidcClients { ${FIELDS} } } }`;
const CLIENTS = `query($id: ID!) { project(id: $id) { oidcClients { ${FIELDS} } } }`;
const CREATE = `mutation($id: ID!, $input: CreateOidcClientInput!) { createOidcClient(projectId: $id, input: $input) { ${FIELDS} } }`;
const UPDATE = `mutation($id: ID!, $clientId: String!, $input: UpdateOidcClientInput!) { updateOidcClient(projectId: $id, clientId: $clientId, input: $input) { ${FIELDS} } }`;
const DELETE = 'mutation($id: ID!, $clientId: String!) { deleteOidcClient(projectId: $id, clientId: $clientId) }';
const INTERNAL_CLIENT =
  'query($clientId: String!, $secret: String) { _oidcClient(clientId: $clientId, clientSecret: $secret) { clientId grantTypes secretValid } }';

type Client = {
  clientId: string;
  clientSecret: string;
  name: string;
  redirectUris: string[];
  grantTypes: string[];
  allowedScopes: string[];
  public: boolean;
  default: boolean;
};

let h: Harness;
let db: pg.Client;

beforeAll(async () => {
  h = await startTenantHarness();
  db = new pg.Client({ connectionString: h.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await h?.close();
});

type Made = { id: string; apiKey: string; oidcClients: Client[]; tenant: SignedIn; as: SignedIn['principal'] };

/** A project of a new tenant (the free plan allows three projects per tenant). */
async function project(): Promise<Made> {
  const tenant = await h.newTenant();
  const made = (await h.data(CREATE_PROJECT, { name: 'Shop' }, tenant.principal)).createProject;
  return { ...made, tenant, as: tenant.principal };
}

/** The error of an operation that must fail: its code and the field it names. */
async function failure(query: string, variables: Record<string, unknown>, as: SignedIn['principal']) {
  const result = await h.run(query, variables, as);
  const err = result.errors?.[0];
  return { code: err?.extensions?.code, field: (err?.extensions?.details as { field?: string } | undefined)?.field };
}

describe('creating a client', () => {
  it('adds a confidential client with the defaults, and a public one without client_credentials', async () => {
    const p = await project();
    expect(p.oidcClients).toEqual([expect.objectContaining({ name: 'Default client', default: true })]);
    const made: Client = (await h.data(CREATE, { id: p.id, input: { name: ' Server ' } }, p.as)).createOidcClient;
    expect(made).toEqual({
      clientId: expect.stringMatching(/^tsc_/),
      clientSecret: expect.stringMatching(/^tss_/),
      name: 'Server',
      redirectUris: [],
      grantTypes: ['password', 'authorization_code', 'client_credentials', 'refresh_token'],
      allowedScopes: ['openid', 'profile', 'email', 'phone', 'offline_access', 'role:*'],
      public: false,
      default: false,
    });
    const spa: Client = (
      await h.data(
        CREATE,
        { id: p.id, input: { name: 'SPA', public: true, redirectUris: ['https://app.example.com/cb'] } },
        p.as,
      )
    ).createOidcClient;
    expect(spa).toMatchObject({
      public: true,
      grantTypes: ['password', 'authorization_code', 'refresh_token'],
      redirectUris: ['https://app.example.com/cb'],
    });
    const listed: Client[] = (await h.data(CLIENTS, { id: p.id }, p.as)).project.oidcClients;
    expect(listed.map((c) => c.name)).toEqual(['Default client', 'Server', 'SPA']);
    // The identity provider sees the new client and its secret at once.
    const seen = (
      await h.data(INTERNAL_CLIENT, { clientId: made.clientId, secret: made.clientSecret }, { kind: 'internal' })
    )._oidcClient;
    expect(seen).toEqual({ clientId: made.clientId, grantTypes: made.grantTypes, secretValid: true });
  });

  it('takes the chosen grant types and scopes', async () => {
    const p = await project();
    const made: Client = (
      await h.data(
        CREATE,
        {
          id: p.id,
          input: { name: 'Worker', grantTypes: ['client_credentials'], allowedScopes: ['admin:sql', 'orders:read'] },
        },
        p.as,
      )
    ).createOidcClient;
    expect(made).toMatchObject({ grantTypes: ['client_credentials'], allowedScopes: ['admin:sql', 'orders:read'] });
  });

  it.each([
    ['an unknown grant type', { name: 'X', grantTypes: ['implicit'] }, 'grantTypes[0]'],
    ['no grant type', { name: 'X', grantTypes: [] }, 'grantTypes'],
    [
      'a public client with client_credentials',
      { name: 'X', public: true, grantTypes: ['client_credentials'] },
      'grantTypes',
    ],
    ['a public client with an admin scope', { name: 'X', public: true, allowedScopes: ['admin'] }, 'allowedScopes'],
    ['a redirect URI with a fragment', { name: 'X', redirectUris: ['https://a.example.com/#x'] }, 'redirectUris[0]'],
    ['a redirect URI that is not http(s)', { name: 'X', redirectUris: ['javascript:alert(1)'] }, 'redirectUris[0]'],
    ['an unknown admin scope', { name: 'X', allowedScopes: ['admin:everything'] }, 'allowedScopes[0]'],
    ['an empty name', { name: '  ' }, 'name'],
  ])('refuses %s with 400 naming the field', async (_what, input, field) => {
    const p = await project();
    expect(await failure(CREATE, { id: p.id, input }, p.as)).toEqual({ code: 'VALIDATION_FAILED', field });
    expect((await h.data(CLIENTS, { id: p.id }, p.as)).project.oidcClients).toHaveLength(1);
  });

  it(`stops at ${MAX_OIDC_CLIENTS_PER_PROJECT} clients per project, also when asked for all at once`, async () => {
    const p = await project();
    const results = await Promise.all(
      Array.from({ length: MAX_OIDC_CLIENTS_PER_PROJECT + 3 }, (_, i) =>
        h.run(CREATE, { id: p.id, input: { name: `c${i}` } }, p.as),
      ),
    );
    const refused = results.filter((r) => r.errors?.[0]?.extensions?.code === 'PLAN_LIMIT_REACHED');
    expect(refused).toHaveLength(4); // the default client counts
    expect(results.filter((r) => !r.errors)).toHaveLength(MAX_OIDC_CLIENTS_PER_PROJECT - 1);
    expect((await h.data(CLIENTS, { id: p.id }, p.as)).project.oidcClients).toHaveLength(MAX_OIDC_CLIENTS_PER_PROJECT);
  });
});

describe('updating a client', () => {
  it('changes grant types and scopes, and checks the result as at creation', async () => {
    const p = await project();
    const c = p.oidcClients[0]!;
    const updated: Client = (
      await h.data(
        UPDATE,
        {
          id: p.id,
          clientId: c.clientId,
          input: { grantTypes: ['authorization_code', 'refresh_token'], allowedScopes: ['openid'] },
        },
        p.as,
      )
    ).updateOidcClient;
    expect(updated).toMatchObject({ grantTypes: ['authorization_code', 'refresh_token'], allowedScopes: ['openid'] });
    // Now it may become public (no client_credentials left)...
    expect(
      (await h.data(UPDATE, { id: p.id, clientId: c.clientId, input: { public: true } }, p.as)).updateOidcClient.public,
    ).toBe(true);
    // ...and a public client cannot be given client_credentials or admin scopes afterwards.
    expect(
      await failure(UPDATE, { id: p.id, clientId: c.clientId, input: { grantTypes: ['client_credentials'] } }, p.as),
    ).toEqual({ code: 'VALIDATION_FAILED', field: 'grantTypes' });
    expect(
      await failure(UPDATE, { id: p.id, clientId: c.clientId, input: { allowedScopes: ['admin:users'] } }, p.as),
    ).toEqual({
      code: 'VALIDATION_FAILED',
      field: 'allowedScopes',
    });
    expect(
      await failure(UPDATE, { id: p.id, clientId: c.clientId, input: { grantTypes: ['device_code'] } }, p.as),
    ).toEqual({
      code: 'VALIDATION_FAILED',
      field: 'grantTypes[0]',
    });
    const after: Client[] = (await h.data(CLIENTS, { id: p.id }, p.as)).project.oidcClients;
    expect(after[0]).toMatchObject({
      public: true,
      grantTypes: ['authorization_code', 'refresh_token'],
      allowedScopes: ['openid'],
    });
  });

  it('drops client_credentials from a client made public without grant types, and refuses it given with them', async () => {
    const p = await project();
    const c = p.oidcClients[0]!;
    expect(
      await failure(
        UPDATE,
        { id: p.id, clientId: c.clientId, input: { public: true, grantTypes: ['password', 'client_credentials'] } },
        p.as,
      ),
    ).toEqual({ code: 'VALIDATION_FAILED', field: 'grantTypes' });
    const made: Client = (await h.data(UPDATE, { id: p.id, clientId: c.clientId, input: { public: true } }, p.as))
      .updateOidcClient;
    expect(made).toMatchObject({ public: true, grantTypes: ['password', 'authorization_code', 'refresh_token'] });
    const worker: Client = (
      await h.data(CREATE, { id: p.id, input: { name: 'Worker', grantTypes: ['client_credentials'] } }, p.as)
    ).createOidcClient;
    expect(await failure(UPDATE, { id: p.id, clientId: worker.clientId, input: { public: true } }, p.as)).toEqual({
      code: 'VALIDATION_FAILED',
      field: 'grantTypes',
    });
  });
});

describe('deleting a client', () => {
  it('deletes any client, the default one too, but never the last; the deleted client is unknown to the identity provider', async () => {
    const p = await project();
    const extra: Client = (await h.data(CREATE, { id: p.id, input: { name: 'Second' } }, p.as)).createOidcClient;
    const def = p.oidcClients[0]!;
    expect((await h.data(DELETE, { id: p.id, clientId: def.clientId }, p.as)).deleteOidcClient).toBe(true);
    expect(
      (await h.data(INTERNAL_CLIENT, { clientId: def.clientId, secret: def.clientSecret }, { kind: 'internal' }))
        ._oidcClient,
    ).toBeNull();
    expect(await failure(DELETE, { id: p.id, clientId: extra.clientId }, p.as)).toEqual({
      code: 'CONFLICT',
      field: undefined,
    });
    expect(await failure(DELETE, { id: p.id, clientId: def.clientId }, p.as)).toEqual({
      code: 'NOT_FOUND',
      field: undefined,
    });
    expect((await h.data(CLIENTS, { id: p.id }, p.as)).project.oidcClients).toEqual([
      expect.objectContaining({ clientId: extra.clientId }),
    ]);
    // The identity provider is told to end what it issued to the client (in the transaction of the delete).
    const { rows } = await db.query(
      `select payload from tessera_events where type = 'oidc-client.deleted' and payload->>'clientId' = $1`,
      [def.clientId],
    );
    expect(rows).toEqual([{ payload: { projectId: p.id, clientId: def.clientId } }]);
  });
});

describe('what a hostile caller tries', () => {
  it("cannot create, update, delete or list clients of another tenant's project, nor reach its client through its own project", async () => {
    const victim = await project();
    const mine = await project();
    const theirs = victim.oidcClients[0]!.clientId;
    const as = mine.as;
    expect((await failure(CREATE, { id: victim.id, input: { name: 'Mine now' } }, as)).code).toBe('NOT_FOUND');
    expect(
      (
        await failure(
          UPDATE,
          { id: victim.id, clientId: theirs, input: { redirectUris: ['https://evil.example.com/'] } },
          as,
        )
      ).code,
    ).toBe('NOT_FOUND');
    expect((await failure(DELETE, { id: victim.id, clientId: theirs }, as)).code).toBe('NOT_FOUND');
    expect((await failure(CLIENTS, { id: victim.id }, as)).code).toBe('NOT_FOUND');
    // The other tenant's client named under the caller's own project: not found either.
    expect((await failure(UPDATE, { id: mine.id, clientId: theirs, input: { name: 'x' } }, as)).code).toBe('NOT_FOUND');
    expect((await failure(DELETE, { id: mine.id, clientId: theirs }, as)).code).toBe('NOT_FOUND');
    // Malformed ids are the same NOT_FOUND.
    expect((await failure(CREATE, { id: 'not-a-uuid', input: { name: 'x' } }, as)).code).toBe('NOT_FOUND');
    // Nothing changed for the victim.
    expect((await h.data(CLIENTS, { id: victim.id }, victim.as)).project.oidcClients).toEqual(victim.oidcClients);
  });

  it("refuses the project's own API key and anonymous callers", async () => {
    const p = await project();
    const asKey = { kind: 'project' as const, projectId: p.id, tenantId: p.tenant.tenantId };
    expect((await failure(CREATE, { id: p.id, input: { name: 'x' } }, asKey)).code).toBe('FORBIDDEN');
    expect((await failure(DELETE, { id: p.id, clientId: p.oidcClients[0]!.clientId }, ANONYMOUS)).code).toBe(
      'UNAUTHENTICATED',
    );
  });
});
