// Who is calling storage, for which project, and what the project's policies let them do.
// The API key may do everything; end-users, the publishable key and anonymous callers get exactly what a policy
// grants (the publishable key and anonymous callers: `public` policies only).
import type { Principal } from '../../../platform/auth.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import { publishableRefusal } from '../../../platform/admin-scopes.ts';
import type { StoragePolicy } from '../entities/index.ts';
import { contentTypeAllowed, folderWithin, type Operation } from './names.ts';
import { isUuid } from '../../../platform/ids.ts';

export type Caller =
  | { kind: 'key'; projectId: string }
  | { kind: 'internal'; projectId: string }
  | { kind: 'user'; projectId: string; userId: string; roles: string[] }
  | { kind: 'anonymous'; projectId: string }
  /** The project's publishable key: a visitor of its web page or app, who gets what `public` policies grant. */
  | { kind: 'publishable'; projectId: string };

/** Roles of an end-user: scopes written `role:<name>` (and a `roles` claim, should the token carry one). */
function rolesOf(p: Extract<Principal, { kind: 'user' }>): string[] {
  const extra = (p as { roles?: unknown }).roles;
  const fromClaim = Array.isArray(extra) ? extra.filter((r): r is string => typeof r === 'string') : [];
  return [...fromClaim, ...p.scopes.filter((s) => s.startsWith('role:')).map((s) => s.slice(5))];
}

/**
 * The caller and its project. Credentials name their project; anonymous callers name it with
 * `projectId` (or the object they ask for does: `objectProjectId`). A credential of another project is
 * answered like an unknown object or project (NOT_FOUND).
 */
export function callerOf(principal: Principal, projectId?: string | null, objectProjectId?: string): Caller {
  const named = objectProjectId ?? projectId ?? undefined;
  switch (principal.kind) {
    case 'project':
    case 'user': {
      if (named !== undefined && named !== principal.projectId) {
        throw objectProjectId ? errors.notFound('object') : errors.notFound('project', String(named).slice(0, 100));
      }
      return principal.kind === 'project'
        ? { kind: 'key', projectId: principal.projectId }
        : { kind: 'user', projectId: principal.projectId, userId: principal.userId, roles: rolesOf(principal) };
    }
    case 'internal':
      if (!isUuid(named)) throw errors.validation('projectId', 'is required for internal calls');
      return { kind: 'internal', projectId: named };
    case 'anonymous':
      if (named === undefined)
        throw errors.unauthenticated(
          'Send the project API key (X-Api-Key) or an end-user token, or name the project (project_id) for public access',
        );
      if (!isUuid(named)) throw errors.validation('project_id', 'must be a project id (a UUID)');
      return { kind: 'anonymous', projectId: named };
    case 'publishable':
      if (named !== undefined && named !== principal.projectId) {
        throw objectProjectId ? errors.notFound('object') : errors.notFound('project', String(named).slice(0, 100));
      }
      return { kind: 'publishable', projectId: principal.projectId };
    case 'operator':
      throw errors.forbidden("An operator key opens the admin API only, not a project's storage");
    case 'tenant':
      throw errors.forbidden(
        "Storage is reached with the project's API key (X-Api-Key) or an end-user token, not a tenant token",
      );
  }
}

/** The API key (or the router itself): management operations. */
export function requireKey(principal: Principal, what: string): { projectId: string } {
  if (principal.kind === 'project') return { projectId: principal.projectId };
  if (principal.kind === 'anonymous') throw errors.unauthenticated(`${what} needs the project API key (X-Api-Key)`);
  if (principal.kind === 'publishable') throw publishableRefusal(`do this (${what.toLowerCase()})`);
  throw errors.forbidden(`${what} needs the project API key (X-Api-Key)`);
}

export function hasFullAccess(c: Caller): boolean {
  return c.kind === 'key' || c.kind === 'internal';
}

/** Does the policy's `principal` cover this caller (ownership is checked by the caller of this function)? */
function coversCaller(policy: Pick<StoragePolicy, 'principal'>, c: Caller): boolean {
  const p = policy.principal;
  if (p === 'public') return true;
  if (c.kind !== 'user') return false;
  if (p === 'authenticated' || p === 'owner') return true;
  return p.startsWith('role:') && c.roles.includes(p.slice(5));
}

/** The policies granting `op` on `folder` to the caller (owner policies included: check ownership after). */
export function grants(policies: readonly StoragePolicy[], c: Caller, op: Operation, folder: string): StoragePolicy[] {
  return policies.filter((p) => p.operations.includes(op) && folderWithin(folder, p.folder) && coversCaller(p, c));
}

function denied(c: Caller, op: Operation, folder: string): AppError {
  const where = folder === '' ? 'the top-level folder' : `folder "${folder}"`;
  if (c.kind === 'anonymous')
    return errors.unauthenticated(`No public policy allows ${op} in ${where}: send credentials`);
  return errors.forbidden(`No policy allows ${op} in ${where} for this caller`);
}

/** Throws unless the caller may `op` the object (read, delete; write for confirming). */
export function assertMayOnObject(
  policies: readonly StoragePolicy[],
  c: Caller,
  op: Operation,
  obj: { folder: string; ownerId: string | null },
): void {
  if (hasFullAccess(c)) return;
  const ok = grants(policies, c, op, obj.folder).some(
    (p) => p.principal !== 'owner' || (c.kind === 'user' && obj.ownerId === c.userId),
  );
  if (!ok) throw denied(c, op, obj.folder);
}

/** Throws unless the caller may write a new object of `contentType` into `folder` (UNSUPPORTED_MEDIA_TYPE when only the type is refused). */
export function assertMayWrite(
  policies: readonly StoragePolicy[],
  c: Caller,
  folder: string,
  contentType: string,
): void {
  if (hasFullAccess(c)) return;
  const candidates = grants(policies, c, 'write', folder);
  if (candidates.length === 0) throw denied(c, 'write', folder);
  if (!candidates.some((p) => contentTypeAllowed(contentType, p.contentTypes ?? null))) {
    const allowed = [...new Set(candidates.flatMap((p) => p.contentTypes ?? []))];
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content type ${contentType} may not be written to ${folder === '' ? 'the top-level folder' : `folder "${folder}"`}`,
      { allowed },
    );
  }
}

/** What a caller may list: null = everything; otherwise any of these scopes (folder subtree, optionally only own objects). */
export type ListScope = { folder: string; ownerId: string | null }[] | null;

/** The scopes the caller may list, or an error when none. */
export function listScope(policies: readonly StoragePolicy[], c: Caller): ListScope {
  if (hasFullAccess(c)) return null;
  const scopes = policies
    .filter((p) => p.operations.includes('list') && coversCaller(p, c))
    .map((p) => ({ folder: p.folder, ownerId: p.principal === 'owner' ? (c as { userId: string }).userId : null }));
  if (scopes.length === 0) {
    if (c.kind === 'anonymous')
      throw errors.unauthenticated('No public policy allows list in this project: send credentials');
    throw errors.forbidden('No policy allows list for this caller');
  }
  return scopes;
}
