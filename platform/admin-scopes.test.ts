import fs from 'node:fs';
import { describe, it, expect } from '@jest/globals';
import { parse } from 'graphql';
import { apiSchemaOf, SUPERGRAPH_FILE } from '../router/compose.ts';
import {
  ADMIN_SCOPES,
  ADMIN_SCOPE_NAMES,
  PUBLISHABLE_FIELDS,
  adminRefusal,
  adminScopesOf,
  currentPrincipal,
  holdsEveryAdminScope,
  publishableBlocked,
  requireAdminScope,
  rootFieldsOf,
  OPERATOR_FIELDS,
  operatorBlocked,
  operatorOnly,
  operatorRefusal,
  requireOperatorPrincipal,
  type AdminScope,
} from './admin-scopes.ts';
import type { Principal } from './auth.ts';

const api = apiSchemaOf(fs.readFileSync(SUPERGRAPH_FILE, 'utf8'));
const rootFields = [
  ...Object.keys(api.getQueryType()!.getFields()),
  ...Object.keys(api.getMutationType()!.getFields()),
];

// Public root fields that are NOT admin operations. A new root field must be put in the table of
// platform/admin-scopes.ts or here, deliberately: forgetting would leave an admin operation open to every client token.
const NOT_ADMIN = new Set([
  // tenant management (tenant tokens only; no client token reaches them)
  'me',
  'plans',
  'projects',
  'project',
  'projectPublications',
  'signup',
  'login',
  'refreshSession',
  'logout',
  'mfaEnroll',
  'mfaVerify',
  'mfaDisable',
  'regenerateRecoveryCodes',
  'sessions',
  'requestPasswordReset',
  'resetPassword',
  'changePassword',
  'requestEmailChange',
  'confirmEmailChange',
  'revokeSession',
  'revokeSessions',
  'deleteAccount',
  'createProject',
  'renameProject',
  'deleteProject',
  'regenerateProjectKey',
  'setPublication',
  'setProjectPublication',
  'updateOidcClient',
  'rotateOidcClientSecret',
  'createOidcClient',
  'deleteOidcClient',
  'regeneratePublishableKey',
  'setProjectCors',
  'projectRequests',
  'setProjectBranding',
  // identity: end-users' own operations
  'endUser',
  'userInfo',
  'identitySigningKeys',
  'registerEndUser',
  'endUserMfaEnroll',
  'endUserMfaVerify',
  'endUserMfaDisable',
  'changeEndUserPassword',
  'requestEndUserPasswordReset',
  'confirmEndUserPasswordReset',
  'requestEndUserEmailVerification',
  'confirmEndUserEmailVerification',
  'endUserLogout',
  // the data API's actions (rawSQL aside) under the caller's own rights
  'dataFind',
  'dataUsage', // the database's size against the plan: the secret key only (its resolver refuses every other principal)
  'dataFindOne',
  'dataAggregate',
  'dataVectorSearch',
  'dataInsert',
  'dataUpdate',
  'dataDelete',
  'dataTransaction',
  // storage objects under the project's policies
  'storageObjects',
  'storageObject',
  'storageFolders',
  'storageProject',
  'uploadStorageObject',
  'confirmStorageUpload',
  'deleteStorageObject',
  // running a function an admin defined
  'invokeEdgeFunction',
]);

const key: Principal = { kind: 'project', projectId: 'p', tenantId: 't' };
const client = (scopes: string[]): Principal => ({
  kind: 'project',
  projectId: 'p',
  tenantId: 't',
  clientId: 'tsc_x',
  scopes,
});
const user: Principal = {
  kind: 'user',
  projectId: 'p',
  userId: 'u',
  clientId: 'tsc_x',
  scopes: ['admin', 'admin:sql'],
  mfa: false,
};

describe('admin scopes', () => {
  it('names only root fields of the supergraph, each in one scope', () => {
    const all = Object.values(ADMIN_SCOPES).flatMap((s) => [...s.fields]);
    expect(new Set(all).size).toBe(all.length);
    for (const f of all) expect(rootFields).toContain(f);
  });

  it('classifies every public root field as admin or not', () => {
    const admin = new Set<string>(Object.values(ADMIN_SCOPES).flatMap((s) => [...s.fields]));
    const unclassified = rootFields.filter((f) => !admin.has(f) && !NOT_ADMIN.has(f) && !OPERATOR_FIELDS.has(f));
    expect(unclassified).toEqual([]);
  });

  it('finds the admin fields of a document: aliased, in fragments and inline fragments, in every operation', () => {
    const scopes = (q: string) => adminScopesOf(parse(q)).sort();
    expect(scopes('{ dataFind(table: "t") { rows } }')).toEqual([]);
    expect(scopes('mutation { x: dataRawSql(sql: "select 1") { rowCount } }')).toEqual(['admin:sql']);
    expect(
      scopes(
        'mutation { ...F } fragment F on Mutation { ... on Mutation { setFunctionSecret(input: {name: "a", value: "b"}) { name } } }',
      ),
    ).toEqual(['admin:secrets']);
    expect(scopes('query A { storagePolicies { items { id } } } query B { projectEndUsers { items { id } } }')).toEqual(
      ['admin:storage', 'admin:users'],
    );
    // A fragment spread twice (or spreading itself) is walked once.
    expect(scopes('query { ...F ...F } fragment F on Query { edgeFunctions { items { id } } }')).toEqual([
      'admin:functions',
    ]);
  });

  it('lets the platform, the secret key and granted client tokens through; refuses everyone else', () => {
    const scope: AdminScope = 'admin:sql';
    expect(adminRefusal({ kind: 'internal' }, scope)).toBeNull();
    expect(adminRefusal(key, scope)).toBeNull();
    expect(adminRefusal(client(['admin:sql']), scope)).toBeNull();
    expect(adminRefusal(client(['admin']), scope)).toBeNull();
    expect(adminRefusal(client([]), scope)?.code).toBe('FORBIDDEN');
    expect(adminRefusal(client(['admin:functions', 'orders:read']), scope)?.code).toBe('FORBIDDEN');
    // An end-user never passes, whatever its token says.
    expect(adminRefusal(user, scope)?.code).toBe('FORBIDDEN');
    expect(adminRefusal({ kind: 'tenant', tenantId: 't', sessionId: 's' }, scope)?.code).toBe('FORBIDDEN');
    expect(adminRefusal({ kind: 'anonymous' }, scope)?.code).toBe('UNAUTHENTICATED');
  });

  it("checks the running operation's principal where a root field cannot tell (rawSQL inside a transaction)", () => {
    expect(() => currentPrincipal.run(client([]), () => requireAdminScope('admin:sql'))).toThrow(/admin operation/);
    expect(() => currentPrincipal.run(user, () => requireAdminScope('admin:sql'))).toThrow(/end-user/);
    expect(() => currentPrincipal.run(client(['admin:sql']), () => requireAdminScope('admin:sql'))).not.toThrow();
    expect(() => currentPrincipal.run(key, () => requireAdminScope('admin:sql'))).not.toThrow();
  });

  it('refuses the publishable key every admin operation, naming the key kind', () => {
    const pk: Principal = { kind: 'publishable', projectId: 'p', tenantId: 't' };
    for (const scope of Object.keys(ADMIN_SCOPES) as AdminScope[]) {
      const refusal = adminRefusal(pk, scope);
      expect(refusal?.code).toBe('FORBIDDEN');
      expect(refusal?.details).toEqual({ key_kind: 'publishable' });
    }
    expect(() => currentPrincipal.run(pk, () => requireAdminScope('admin:sql'))).toThrow(/publishable key/);
  });

  it('opens to the publishable key only root fields of the supergraph that are no admin operations', () => {
    const admin = new Set<string>(Object.values(ADMIN_SCOPES).flatMap((s) => [...s.fields]));
    const internal = new Set(['_entities', '_service', '_beginStorageUpload', '_completeStorageUpload']);
    for (const f of PUBLISHABLE_FIELDS) {
      expect(admin.has(f)).toBe(false);
      if (!internal.has(f)) expect(rootFields).toContain(f);
    }
    // What a visitor's page needs, and nothing that manages the project.
    expect(publishableBlocked(rootFieldsOf(parse('{ dataFind(table: "t") { rows } __typename }')))).toBeUndefined();
    expect(
      publishableBlocked(
        rootFieldsOf(parse('mutation { registerEndUser(input: {email: "a", password: "b"}) { id } }')),
      ),
    ).toBeUndefined();
    expect(
      publishableBlocked(
        rootFieldsOf(
          parse('{ a: dataFind(table: "t") { rows } ...F } fragment F on Query { projects { items { id } } }'),
        ),
      ),
    ).toBe('projects');
    for (const f of [
      'projectPublications',
      'storageProject',
      'storagePolicies',
      'endUser',
      'setProjectPublication',
      'dataRawSql',
      'edgeFunctions',
    ]) {
      expect(PUBLISHABLE_FIELDS.has(f)).toBe(false);
    }
  });

  it('lists every scope a tenant may grant', () => {
    expect(ADMIN_SCOPE_NAMES).toEqual([
      'admin',
      'admin:sql',
      'admin:functions',
      'admin:secrets',
      'admin:email',
      'admin:storage',
      'admin:users',
    ]);
  });
});

describe('the scope table in the docs', () => {
  const expected = [
    '| Scope | Admin operations it opens |',
    '|---|---|',
    '| `admin` | every admin operation below |',
    ...Object.entries(ADMIN_SCOPES).map(([scope, def]) => `| \`${scope}\` | ${def.operations} |`),
  ];
  for (const file of ['README.md', 'docs/architecture.md']) {
    it(`matches platform/admin-scopes.ts in ${file}`, () => {
      const text = fs.readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
      const table = text.split('<!-- admin-scopes:start -->')[1]!.split('<!-- admin-scopes:end -->')[0]!;
      expect(table.split('\n').filter((l) => l.startsWith('|'))).toEqual(expected);
    });
  }
});

describe('who holds every admin scope (no principal is kept for them while an operation runs)', () => {
  it('is the platform, the secret key and a client granted `admin`', () => {
    expect(holdsEveryAdminScope({ kind: 'internal' })).toBe(true);
    expect(holdsEveryAdminScope(key)).toBe(true);
    expect(holdsEveryAdminScope(client(['admin']))).toBe(true);
    expect(holdsEveryAdminScope(client(['admin:sql']))).toBe(false);
    expect(holdsEveryAdminScope(user)).toBe(false);
    expect(holdsEveryAdminScope({ kind: 'anonymous' })).toBe(false);
  });
});

describe('operator fields', () => {
  it('names only root fields of the supergraph, none of them an admin-scope field', () => {
    const admin = new Set<string>(Object.values(ADMIN_SCOPES).flatMap((s) => [...s.fields]));
    for (const f of OPERATOR_FIELDS) {
      expect(rootFields).toContain(f);
      expect(admin.has(f)).toBe(false);
    }
  });

  it('opens the operator fields to the operator (and the platform) only', () => {
    const operator: Principal = { kind: 'operator', operator: 'alice', keyId: 'k' };
    expect(operatorRefusal(operator)).toBeNull();
    expect(operatorRefusal({ kind: 'internal' })).toBeNull();
    expect(operatorRefusal({ kind: 'anonymous' })?.code).toBe('UNAUTHENTICATED');
    for (const p of [key, client(['admin']), user, { kind: 'tenant', tenantId: 't', sessionId: 's' } as Principal])
      expect(operatorRefusal(p)?.code).toBe('FORBIDDEN');
    expect(operatorRefusal({ kind: 'publishable', projectId: 'p', tenantId: 't' })?.code).toBe('FORBIDDEN');
  });

  it("guards the fields other subgraphs add to an operator's tenant row (usage totals) the same way", () => {
    expect(() => requireOperatorPrincipal({ kind: 'operator', operator: 'alice', keyId: 'k' })).not.toThrow();
    expect(() => requireOperatorPrincipal({ kind: 'internal' })).not.toThrow();
    expect(() => requireOperatorPrincipal({ kind: 'anonymous' })).toThrow(
      expect.objectContaining({ code: 'UNAUTHENTICATED' }),
    );
    for (const p of [key, client(['admin']), user, { kind: 'tenant', tenantId: 't', sessionId: 's' } as Principal])
      expect(() => requireOperatorPrincipal(p)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });

  it('lets the operator run nothing but the operator fields (and federation plumbing)', () => {
    const fields = (q: string) => rootFieldsOf(parse(q));
    expect(operatorOnly(fields('{ adminPlans { id } }'))).toBe(true);
    expect(operatorBlocked(fields('{ adminPlans { id } __typename }'))).toBeUndefined();
    expect(operatorBlocked(fields('{ _entities(representations: []) { __typename } }'))).toBeUndefined();
    expect(operatorBlocked(fields('{ adminPlans { id } me { id } }'))).toBe('me');
    expect(operatorBlocked(fields('{ dataFind(table: "t") { rows } }'))).toBe('dataFind');
    expect(operatorOnly(fields('{ ...F } fragment F on Query { x: operatorKeys { id } }'))).toBe(true);
  });
});
