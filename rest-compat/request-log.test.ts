import { describe, it, expect } from '@jest/globals';
import { attributionOf, credentialKindOf } from './request-log.ts';

const P = '3a6225ed-2fa6-4fe1-b76a-6c35617f2339';
const T = '5ce67df7-a0ad-4248-be10-79838b1ca947';

describe('whose request log a request goes to', () => {
  it('names the kind of every credential, and none for the platform itself', () => {
    expect(credentialKindOf({ kind: 'project', projectId: P, tenantId: T })).toBe('secret_key');
    expect(credentialKindOf({ kind: 'project', projectId: P, tenantId: T, clientId: 'c', scopes: [] })).toBe(
      'client_token',
    );
    expect(credentialKindOf({ kind: 'publishable', projectId: P, tenantId: T })).toBe('publishable_key');
    expect(credentialKindOf({ kind: 'user', projectId: P, userId: 'u', clientId: 'c', scopes: [], mfa: false })).toBe(
      'user_token',
    );
    expect(credentialKindOf({ kind: 'tenant', tenantId: T, sessionId: 's' })).toBe('tenant_token');
    expect(credentialKindOf({ kind: 'anonymous' })).toBe('anonymous');
    expect(credentialKindOf({ kind: 'internal' })).toBeUndefined();
  });

  it('a key or an end-user token counts for its own project, whatever the path names', () => {
    expect(
      attributionOf('/webhooks/:project_id/:slug', { project_id: T }, 404, {
        kind: 'publishable',
        projectId: P,
        tenantId: T,
      }),
    ).toEqual({ projectId: P, credential: 'publishable_key' });
  });

  it('a tenant token counts for the project in its path only when it succeeded', () => {
    const tenant = { kind: 'tenant' as const, tenantId: T, sessionId: 's' };
    expect(attributionOf('/auth/api/v1/projects/:id', { id: P }, 200, tenant)).toEqual({
      projectId: P,
      credential: 'tenant_token',
    });
    expect(attributionOf('/auth/api/v1/projects/:id/cors', { id: P }, 204, tenant)?.projectId).toBe(P);
    expect(attributionOf('/auth/api/v1/projects/:id', { id: P }, 404, tenant)).toBeUndefined();
    expect(attributionOf('/auth/api/v1/projects/:id', { id: 'not-a-uuid' }, 200, tenant)).toBeUndefined();
    expect(attributionOf('/auth/api/v1/projects', {}, 200, tenant)).toBeUndefined();
    expect(attributionOf('/auth/api/v1/projectsX/:id', { id: P }, 200, tenant)).toBeUndefined();
  });

  it("an anonymous caller counts for the project its path names; the log's own reads count for none", () => {
    expect(attributionOf('/webhooks/:project_id/:slug', { project_id: P }, 404, undefined)).toEqual({
      projectId: P,
      credential: 'anonymous',
    });
    expect(attributionOf('/webhooks/:project_id/:slug', { project_id: 'x' }, 404, undefined)).toBeUndefined();
    expect(attributionOf('unmatched', {}, 404, { kind: 'anonymous' })).toBeUndefined();
    expect(
      attributionOf('/auth/api/v1/projects/:id/requests', { id: P }, 200, {
        kind: 'tenant',
        tenantId: T,
        sessionId: 's',
      }),
    ).toBeUndefined();
    expect(attributionOf('/v1/find', {}, 200, { kind: 'internal' })).toBeUndefined();
  });
});
