// Projects, API keys, publications, OIDC clients and plan limits, driven through the tenant subgraph
// on a real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Principal } from '../../../platform/auth.ts';
import { startTenantHarness, type Harness, type SignedIn } from '../../../subgraphs/tenant/testing.ts';

const PROJECT_FIELDS = 'id name apiKey apiKeyPrefix createdAt updatedAt plan { id }';
const CREATE = `mutation($name: String!) { createProject(input: { name: $name }) { ${PROJECT_FIELDS} oidcClients { clientId clientSecret name redirectUris grantTypes } } }`;
const GET = `query($id: ID!) { project(id: $id) { ${PROJECT_FIELDS} } }`;
const LIST = `query($first: Int, $after: String) { projects(first: $first, after: $after) { items { id name } nextCursor } }`;
const RENAME = `mutation($id: ID!, $name: String!) { renameProject(id: $id, input: { name: $name }) { ${PROJECT_FIELDS} } }`;
const DELETE = 'mutation($id: ID!) { deleteProject(id: $id) }';
const REGENERATE = `mutation($id: ID!) { regenerateProjectKey(id: $id) { ${PROJECT_FIELDS} } }`;
const SET_PUBLICATION =
  'mutation($id: ID!, $table: String!, $enabled: Boolean!) { setPublication(projectId: $id, input: { table: $table, enabled: $enabled }) { table enabled updatedAt } }';
const PUBLICATIONS = 'query($id: ID!) { project(id: $id) { publications { table enabled updatedAt } } }';
const CLIENTS =
  'query($id: ID!) { project(id: $id) { oidcClients { clientId clientSecret name redirectUris grantTypes createdAt } } }';
const UPDATE_CLIENT =
  'mutation($id: ID!, $clientId: String!, $input: UpdateOidcClientInput!) { updateOidcClient(projectId: $id, clientId: $clientId, input: $input) { clientId clientSecret name redirectUris grantTypes } }';
const ROTATE_SECRET =
  'mutation($id: ID!, $clientId: String!) { rotateOidcClientSecret(projectId: $id, clientId: $clientId) { clientId clientSecret } }';
const INTERNAL_CLIENT =
  'query($clientId: String!, $secret: String) { _oidcClient(clientId: $clientId, clientSecret: $secret) { clientId projectId grantTypes secretValid } }';
const ENTITIES = 'query($reps: [_Any!]!) { _entities(representations: $reps) { ... on Project { id name apiKey } } }';

let h: Harness;
let owner: SignedIn;
let stranger: SignedIn;

beforeAll(async () => {
  h = await startTenantHarness();
  owner = await h.newTenant();
  stranger = await h.newTenant();
});

afterAll(async () => {
  await h?.close();
});

type CreatedProject = {
  id: string;
  name: string;
  apiKey: string;
  apiKeyPrefix: string;
  updatedAt: string;
  oidcClients: { clientId: string; clientSecret: string }[];
};

async function createProject(as: SignedIn, name = 'Shop'): Promise<CreatedProject> {
  return (await h.data(CREATE, { name }, as.principal)).createProject;
}

describe('projects', () => {
  it('creates a project with an API key and a default OIDC client', async () => {
    const p = await createProject(owner, '  My Shop  ');
    expect(p).toMatchObject({ name: 'My Shop', plan: { id: 'free' } });
    expect(p.apiKey).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
    expect(p.apiKey.startsWith(p.apiKeyPrefix)).toBe(true);
    expect(p.oidcClients).toHaveLength(1);
    expect(p.oidcClients[0]).toMatchObject({
      name: 'Default client',
      redirectUris: [],
      grantTypes: ['password', 'authorization_code', 'client_credentials', 'refresh_token'],
    });
    expect(p.oidcClients[0].clientSecret).toMatch(/^tss_/);
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it('stores the API key and the client secret sealed, never in clear', async () => {
    const p = await createProject(owner, 'Sealed');
    const { Client } = (await import('pg')).default;
    const c = new Client({ connectionString: h.databaseUrl });
    await c.connect();
    try {
      const project = await c.query('select * from projects where id = $1', [p.id]);
      const client = await c.query('select * from project_oidc_clients where project_id = $1', [p.id]);
      expect(JSON.stringify(project.rows)).not.toContain(p.apiKey);
      expect(JSON.stringify(client.rows)).not.toContain(p.oidcClients[0].clientSecret);
      expect(project.rows[0].api_key_sealed).toMatch(/^v1\./);
    } finally {
      await c.end();
      await h.data(DELETE, { id: p.id }, owner.principal);
    }
  });

  it('renames, reads, lists and deletes a project', async () => {
    const p = await createProject(owner, 'Before');
    const { renameProject } = await h.data(RENAME, { id: p.id, name: 'After' }, owner.principal);
    expect(renameProject).toMatchObject({ id: p.id, name: 'After', apiKey: p.apiKey });
    expect(new Date(renameProject.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(p.updatedAt).getTime());
    expect((await h.data(GET, { id: p.id }, owner.principal)).project).toMatchObject({
      id: p.id,
      name: 'After',
      apiKey: p.apiKey,
    });
    expect((await h.data(LIST, {}, owner.principal)).projects.items.map((x: { id: string }) => x.id)).toContain(p.id);
    expect(await h.data(DELETE, { id: p.id }, owner.principal)).toEqual({ deleteProject: true });
    expect(await h.code(GET, { id: p.id }, owner.principal)).toBe('NOT_FOUND');
    expect(await h.code(DELETE, { id: p.id }, owner.principal)).toBe('NOT_FOUND');
    expect((await h.authenticate({ apiKey: p.apiKey })).errors?.[0]?.extensions?.code).toBe('INVALID_API_KEY');
  });

  it('pages through projects oldest first with a cursor', async () => {
    const t = await h.newTenant();
    const made = [await createProject(t, 'One'), await createProject(t, 'Two'), await createProject(t, 'Three')];
    const first = (await h.data(LIST, { first: 2 }, t.principal)).projects;
    expect(first.items.map((x: { name: string }) => x.name)).toEqual(['One', 'Two']);
    expect(typeof first.nextCursor).toBe('string');
    const second = (await h.data(LIST, { first: 2, after: first.nextCursor }, t.principal)).projects;
    expect(second).toEqual({ items: [{ id: made[2].id, name: 'Three' }], nextCursor: null });
    expect(await h.code(LIST, { first: 0 }, t.principal)).toBe('VALIDATION_FAILED');
    expect(await h.code(LIST, { first: 101 }, t.principal)).toBe('VALIDATION_FAILED');
    expect(await h.code(LIST, { after: 'not-a-cursor' }, t.principal)).toBe('VALIDATION_FAILED');
  });

  it('refuses empty and overlong names, naming the field', async () => {
    const result = await h.run(CREATE, { name: '   ' }, owner.principal);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'name' } });
    expect(await h.code(CREATE, { name: 'x'.repeat(101) }, owner.principal)).toBe('VALIDATION_FAILED');
    expect(await h.data(CREATE, { name: 'x'.repeat(100) }, owner.principal)).toBeTruthy();
  });
});

describe('ownership', () => {
  it("answers NOT_FOUND for another tenant's project, on every operation", async () => {
    const p = await createProject(owner, 'Private');
    expect(await h.code(GET, { id: p.id }, stranger.principal)).toBe('NOT_FOUND');
    expect(await h.code(RENAME, { id: p.id, name: 'Mine now' }, stranger.principal)).toBe('NOT_FOUND');
    expect(await h.code(DELETE, { id: p.id }, stranger.principal)).toBe('NOT_FOUND');
    expect(await h.code(REGENERATE, { id: p.id }, stranger.principal)).toBe('NOT_FOUND');
    expect(await h.code(SET_PUBLICATION, { id: p.id, table: 'orders', enabled: true }, stranger.principal)).toBe(
      'NOT_FOUND',
    );
    expect(await h.code(PUBLICATIONS, { id: p.id }, stranger.principal)).toBe('NOT_FOUND');
    expect(await h.code(ROTATE_SECRET, { id: p.id, clientId: p.oidcClients[0].clientId }, stranger.principal)).toBe(
      'NOT_FOUND',
    );
    expect((await h.data(LIST, {}, stranger.principal)).projects.items).toEqual([]);
    expect((await h.data(GET, { id: p.id }, owner.principal)).project.name).toBe('Private');
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it('answers NOT_FOUND, never a 500, for unknown and malformed ids', async () => {
    for (const id of [crypto.randomUUID(), 'not-a-uuid', '1', "x' or 1=1 --", '00000000-0000-0000-0000-00000000000g']) {
      const result = await h.run(GET, { id }, owner.principal);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', http: { status: 404 } });
    }
  });

  it('refuses project management to API key principals and anonymous callers', async () => {
    const p = await createProject(owner, 'Guarded');
    const auth = await h.authenticate({ apiKey: p.apiKey });
    const asProject = auth.data?._authenticate as { projectId: string; tenantId: string };
    const projectPrincipal: Principal = {
      kind: 'project',
      projectId: asProject.projectId,
      tenantId: asProject.tenantId,
    };
    expect(await h.code(CREATE, { name: 'x' }, projectPrincipal)).toBe('FORBIDDEN');
    expect(await h.code(RENAME, { id: p.id, name: 'x' }, projectPrincipal)).toBe('FORBIDDEN');
    expect(await h.code(DELETE, { id: p.id }, projectPrincipal)).toBe('FORBIDDEN');
    expect(await h.code(REGENERATE, { id: p.id }, projectPrincipal)).toBe('FORBIDDEN');
    expect(await h.code(LIST, {}, projectPrincipal)).toBe('FORBIDDEN');
    expect(await h.code(CREATE, { name: 'x' })).toBe('UNAUTHENTICATED');
    // Its own project is readable with the key, but not the key itself.
    expect(
      (await h.data('query($id: ID!) { project(id: $id) { id name } }', { id: p.id }, projectPrincipal)).project.name,
    ).toBe('Guarded');
    expect(await h.code(GET, { id: p.id }, projectPrincipal)).toBe('FORBIDDEN');
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it('resolves Project entity references without an owner check, but keeps the API key to the owner', async () => {
    const p = await createProject(owner, 'Referenced');
    const reps = [{ __typename: 'Project', id: p.id }];
    const asRouter = await h.data(ENTITIES, { reps }, { kind: 'internal' });
    expect(asRouter._entities[0]).toEqual({ id: p.id, name: 'Referenced', apiKey: p.apiKey });
    const asStranger = await h.run(ENTITIES, { reps }, stranger.principal);
    expect(asStranger.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(
      (
        await h.run(
          'query($reps: [_Any!]!) { _entities(representations: $reps) { ... on Project { id name } } }',
          { reps },
          stranger.principal,
        )
      ).data?._entities,
    ).toEqual([{ id: p.id, name: 'Referenced' }]);
    await h.data(DELETE, { id: p.id }, owner.principal);
  });
});

describe('API keys', () => {
  it('resolves a key to its project, and refuses the old key as soon as it is regenerated', async () => {
    const p = await createProject(owner, 'Keys');
    expect((await h.authenticate({ apiKey: p.apiKey })).data?._authenticate).toEqual({
      kind: 'project',
      projectId: p.id,
      tenantId: owner.tenantId,
      sessionId: null,
    });
    const { regenerateProjectKey: r } = await h.data(REGENERATE, { id: p.id }, owner.principal);
    expect(r.apiKey).not.toBe(p.apiKey);
    expect((await h.authenticate({ apiKey: p.apiKey })).errors?.[0]?.extensions?.code).toBe('INVALID_API_KEY');
    expect((await h.authenticate({ apiKey: r.apiKey })).data?._authenticate).toMatchObject({
      kind: 'project',
      projectId: p.id,
    });
    expect((await h.data(GET, { id: p.id }, owner.principal)).project.apiKey).toBe(r.apiKey);
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it('refuses unknown and malformed keys', async () => {
    for (const apiKey of ['tsk_unknown', 'nope', '']) {
      expect((await h.authenticate({ apiKey })).errors?.[0]?.extensions?.code).toBe('INVALID_API_KEY');
    }
  });
});

describe('publications', () => {
  it('toggles realtime for a table and lists the settings', async () => {
    const p = await createProject(owner, 'Realtime');
    h.projectTables.set(p.id, ['orders', 'customers']);
    expect((await h.data(PUBLICATIONS, { id: p.id }, owner.principal)).project.publications).toEqual([]);
    const on = (await h.data(SET_PUBLICATION, { id: p.id, table: 'orders', enabled: true }, owner.principal))
      .setPublication;
    expect(on).toMatchObject({ table: 'orders', enabled: true });
    await h.data(SET_PUBLICATION, { id: p.id, table: 'customers', enabled: true }, owner.principal);
    const off = (await h.data(SET_PUBLICATION, { id: p.id, table: 'orders', enabled: false }, owner.principal))
      .setPublication;
    expect(off).toMatchObject({ table: 'orders', enabled: false });
    const list = (await h.data(PUBLICATIONS, { id: p.id }, owner.principal)).project.publications;
    expect(list.map((x: { table: string; enabled: boolean }) => [x.table, x.enabled])).toEqual([
      ['customers', true],
      ['orders', false],
    ]);
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it("refuses to turn realtime on for a table the project's database does not have, naming it", async () => {
    const p = await createProject(owner, 'Unknown table');
    h.projectTables.set(p.id, ['orders']);
    const result = await h.run(SET_PUBLICATION, { id: p.id, table: 'ordres', enabled: true }, owner.principal);
    expect(result.errors?.[0]?.message).toContain('"ordres"');
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'table' } });
    // Turning off a switch that never existed is refused the same; one whose table went away may be turned off.
    expect(
      (await h.run(SET_PUBLICATION, { id: p.id, table: 'ordres', enabled: false }, owner.principal)).errors?.[0]
        ?.extensions?.code,
    ).toBe('VALIDATION_FAILED');
    await h.data(SET_PUBLICATION, { id: p.id, table: 'orders', enabled: true }, owner.principal);
    h.projectTables.set(p.id, []);
    const off = (await h.data(SET_PUBLICATION, { id: p.id, table: 'orders', enabled: false }, owner.principal))
      .setPublication;
    expect(off).toMatchObject({ table: 'orders', enabled: false });
    expect(
      (await h.run(SET_PUBLICATION, { id: p.id, table: 'orders', enabled: true }, owner.principal)).errors?.[0]
        ?.extensions?.code,
    ).toBe('VALIDATION_FAILED');
    expect((await h.data(PUBLICATIONS, { id: p.id }, owner.principal)).project.publications).toEqual([
      expect.objectContaining({ table: 'orders', enabled: false }),
    ]);
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it('refuses table names that are not plain SQL identifiers', async () => {
    const p = await createProject(owner, 'Identifiers');
    h.projectTables.set(p.id, [`_${'x'.repeat(62)}`]);
    for (const table of ['public.orders', '1orders', 'orders;drop', 'x'.repeat(64), '', 'or ders', '"orders"']) {
      const result = await h.run(SET_PUBLICATION, { id: p.id, table, enabled: true }, owner.principal);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'table' } });
    }
    expect(
      (await h.data(SET_PUBLICATION, { id: p.id, table: `_${'x'.repeat(62)}`, enabled: true }, owner.principal))
        .setPublication.enabled,
    ).toBe(true);
    await h.data(DELETE, { id: p.id }, owner.principal);
  });
});

describe('OIDC clients', () => {
  it('updates the name and redirect URIs of a client', async () => {
    const p = await createProject(owner, 'Clients');
    const clientId = p.oidcClients[0].clientId;
    const input = { name: 'Web app', redirectUris: ['https://app.example.com/callback', 'http://localhost:3000/cb'] };
    const { updateOidcClient } = await h.data(UPDATE_CLIENT, { id: p.id, clientId, input }, owner.principal);
    expect(updateOidcClient).toMatchObject({ clientId, ...input, clientSecret: p.oidcClients[0].clientSecret });
    // Omitted fields stay.
    const renamed = (await h.data(UPDATE_CLIENT, { id: p.id, clientId, input: { name: 'Web' } }, owner.principal))
      .updateOidcClient;
    expect(renamed.redirectUris).toEqual(input.redirectUris);
    const { project } = await h.data(CLIENTS, { id: p.id }, owner.principal);
    expect(project.oidcClients[0]).toMatchObject({ clientId, name: 'Web', redirectUris: input.redirectUris });
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it('refuses redirect URIs that are relative, not http(s) or carry a fragment', async () => {
    const p = await createProject(owner, 'Redirects');
    const clientId = p.oidcClients[0].clientId;
    for (const uri of [
      '/callback',
      'ftp://example.com/cb',
      'https://example.com/cb#frag',
      'javascript:alert(1)',
      'not a url',
    ]) {
      const result = await h.run(
        UPDATE_CLIENT,
        { id: p.id, clientId, input: { redirectUris: [uri] } },
        owner.principal,
      );
      expect(result.errors?.[0]?.extensions).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: { field: 'redirectUris[0]' },
      });
    }
    expect(
      await h.code(UPDATE_CLIENT, { id: p.id, clientId: 'tsc_unknown', input: { name: 'x' } }, owner.principal),
    ).toBe('NOT_FOUND');
    await h.data(DELETE, { id: p.id }, owner.principal);
  });

  it('rotates a client secret, and the identity provider sees only the new one as valid', async () => {
    const p = await createProject(owner, 'Rotate');
    const { clientId, clientSecret: old } = p.oidcClients[0];
    const { rotateOidcClientSecret } = await h.data(ROTATE_SECRET, { id: p.id, clientId }, owner.principal);
    expect(rotateOidcClientSecret.clientSecret).not.toBe(old);
    const check = async (secret?: string) =>
      (await h.data(INTERNAL_CLIENT, { clientId, secret }, { kind: 'internal' }))._oidcClient;
    expect(await check(old)).toMatchObject({ clientId, projectId: p.id, secretValid: false });
    expect(await check(rotateOidcClientSecret.clientSecret)).toMatchObject({ secretValid: true });
    expect(await check()).toMatchObject({ secretValid: null });
    expect((await h.data(INTERNAL_CLIENT, { clientId: 'tsc_nope' }, { kind: 'internal' }))._oidcClient).toBeNull();
    expect(await h.code(INTERNAL_CLIENT, { clientId }, owner.principal)).toBe('FORBIDDEN');
    await h.data(DELETE, { id: p.id }, owner.principal);
  });
});

describe('plan limits', () => {
  it('refuses a project beyond the free plan limit with PLAN_LIMIT_REACHED', async () => {
    const t = await h.newTenant();
    const { plans } = await h.data('query { plans { id limits { maxProjects } } }');
    const max = plans.find((p: { id: string }) => p.id === 'free').limits.maxProjects as number;
    for (let i = 0; i < max; i++) await createProject(t, `P${i}`);
    const result = await h.run(CREATE, { name: 'One too many' }, t.principal);
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'PLAN_LIMIT_REACHED',
      http: { status: 409 },
      details: { max },
    });
    // Deleting one makes room again.
    const { projects } = await h.data(LIST, {}, t.principal);
    await h.data(DELETE, { id: projects.items[0].id }, t.principal);
    await createProject(t, 'Fits again');
  });

  it('holds under concurrent creates', async () => {
    const t = await h.newTenant();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => h.run(CREATE, { name: `C${i}` }, t.principal)),
    );
    expect(results.filter((r) => !r.errors).length).toBe(3);
    expect(results.filter((r) => r.errors?.[0]?.extensions?.code === 'PLAN_LIMIT_REACHED').length).toBe(3);
  });
});
