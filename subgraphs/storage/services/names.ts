// Input checks for object names, folders, content types and policies. Bad names are refused, never
// rewritten: a caller who sent `../x` learns so instead of finding the file somewhere else.
import { errors } from '../../../platform/errors.ts';

export const MAX_NAME_BYTES = 255;
export const MAX_FOLDER_BYTES = 512;
export const MAX_FOLDER_DEPTH = 16;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const TOKEN = '[A-Za-z0-9!#$&^_.+-]+';
const CONTENT_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\r\\n]*"))*$`);
const ALLOW_PATTERN = new RegExp(`^(${TOKEN}/${TOKEN}|${TOKEN}/\\*|\\*/\\*)$`);
export const OPERATIONS = ['read', 'write', 'delete', 'list'] as const;
export type Operation = (typeof OPERATIONS)[number];

function bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** One path segment (an object name, or one folder of a folder path). */
function checkSegment(field: string, s: string, max: number): void {
  if (s === '') throw errors.validation(field, 'must not be empty (no `//`, no leading or trailing `/`)');
  if (s === '.' || s === '..') throw errors.validation(field, '`.` and `..` are not allowed (no relative paths)');
  if (s.includes('\u0000')) throw errors.validation(field, 'must not contain NUL bytes');
  if (CONTROL.test(s)) throw errors.validation(field, 'must not contain control characters');
  if (s.includes('\\')) throw errors.validation(field, 'must not contain `\\`');
  if (s.trim() === '') throw errors.validation(field, 'must not be blank');
  if (bytes(s) > max) throw errors.validation(field, `must be at most ${max} bytes`);
}

/** A folder path `a/b/c`; '' (or omitted) is the top level. Absolute and relative paths are refused. */
export function checkFolder(raw: unknown, field = 'folder'): string {
  if (raw === undefined || raw === null || raw === '') return '';
  if (typeof raw !== 'string') throw errors.validation(field, 'must be a string');
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw))
    throw errors.validation(field, 'must be relative (absolute paths are not allowed)');
  if (bytes(raw) > MAX_FOLDER_BYTES) throw errors.validation(field, `must be at most ${MAX_FOLDER_BYTES} bytes`);
  const folder = raw.endsWith('/') ? raw.slice(0, -1) : raw;
  const parts = folder.split('/');
  if (parts.length > MAX_FOLDER_DEPTH)
    throw errors.validation(field, `must be at most ${MAX_FOLDER_DEPTH} levels deep`);
  for (const part of parts) checkSegment(field, part, MAX_NAME_BYTES);
  return folder;
}

/** An object name: one segment, no `/`. */
export function checkName(raw: unknown, field = 'name'): string {
  if (raw === undefined || raw === null || raw === '')
    throw errors.validation(field, 'is required (send a name or a file name)');
  if (typeof raw !== 'string') throw errors.validation(field, 'must be a string');
  if (raw.startsWith('/') || /^[A-Za-z]:[\\/]/.test(raw))
    throw errors.validation(field, 'must not be an absolute path');
  if (raw.includes('/')) throw errors.validation(field, 'must not contain `/` (put folders in `folder`)');
  checkSegment(field, raw, MAX_NAME_BYTES);
  return raw;
}

/** A content type `type/subtype` with optional parameters; default application/octet-stream. */
export function checkContentType(raw: unknown, field = 'content_type'): string {
  if (raw === undefined || raw === null || raw === '') return 'application/octet-stream';
  if (typeof raw !== 'string' || raw.length > 255 || !CONTENT_TYPE.test(raw))
    throw errors.validation(field, 'must be a media type such as `image/png`');
  return raw.toLowerCase();
}

/** The object's path: folder and name joined. */
export function pathOf(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`;
}

/** True when `folder` is `scope` or inside it ('' covers everything). */
export function folderWithin(folder: string, scope: string): boolean {
  return scope === '' || folder === scope || folder.startsWith(`${scope}/`);
}

/** True when a content type (parameters ignored) matches an allow-list entry (`image/png`, `image/*`, `*\/*`). */
export function contentTypeAllowed(contentType: string, allowed: readonly string[] | null): boolean {
  if (!allowed) return true;
  const base = contentType.split(';')[0]!.trim().toLowerCase();
  return allowed.some((a) => a === '*/*' || a === base || (a.endsWith('/*') && base.startsWith(a.slice(0, -1))));
}

export type PolicyInput = {
  name: string;
  folder: string;
  operations: Operation[];
  principal: string;
  contentTypes: string[] | null;
};

/** Checks a policy body (REST: `{name, folder, operations, principal, content_types}`). */
export function checkPolicy(input: {
  name?: unknown;
  folder?: unknown;
  operations?: unknown;
  principal?: unknown;
  contentTypes?: unknown;
}): PolicyInput {
  const name = input.name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 100 || CONTROL.test(name))
    throw errors.validation('name', 'must be 1 to 100 characters');
  const folder = checkFolder(input.folder);
  const ops = input.operations;
  if (!Array.isArray(ops) || ops.length === 0)
    throw errors.validation('operations', `must list one or more of ${OPERATIONS.join(', ')}`);
  for (const op of ops) {
    if (!(OPERATIONS as readonly string[]).includes(op as string))
      throw errors.validation('operations', `"${String(op).slice(0, 40)}" is not one of ${OPERATIONS.join(', ')}`);
  }
  const principal = input.principal;
  if (typeof principal !== 'string' || !/^(public|authenticated|owner|role:[A-Za-z0-9_.:-]{1,64})$/.test(principal)) {
    throw errors.validation('principal', 'must be public, authenticated, owner or role:<name>');
  }
  let contentTypes: string[] | null = null;
  if (input.contentTypes !== undefined && input.contentTypes !== null) {
    if (!Array.isArray(input.contentTypes) || input.contentTypes.length === 0 || input.contentTypes.length > 50) {
      throw errors.validation('content_types', 'must be a list of 1 to 50 media types');
    }
    contentTypes = input.contentTypes.map((t) => {
      if (typeof t !== 'string' || !ALLOW_PATTERN.test(t))
        throw errors.validation(
          'content_types',
          `"${String(t).slice(0, 60)}" is not a media type or pattern such as image/*`,
        );
      return t.toLowerCase();
    });
  }
  return { name: name.trim(), folder, operations: [...new Set(ops as Operation[])], principal, contentTypes };
}

/** Page size: 1 to 1000, default 100. */
export function checkFirst(first: unknown): number {
  if (first === undefined || first === null) return 100;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1 || first > 1000)
    throw errors.validation('first', 'must be a whole number from 1 to 1000');
  return first;
}
