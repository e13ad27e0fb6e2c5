// Objects: the upload life cycle (begin → bytes → complete → confirm), listings, folders, deletion,
// and the clean-ups (unconfirmed uploads past their time, deleted projects). Bytes live in the blob
// store under keys made from ids (platform/blob-store), so no name a caller sends reaches a file path.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Principal } from '../../../platform/auth.ts';
import type { Config } from '../../../platform/config.ts';
import type { SubgraphDatabase } from '../../../platform/database.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import { publishEventIfWanted, type StorageObjectEvent } from '../../../platform/events.ts';
import { decodeCursor, encodeCursor } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';
import { isStorableTime, textProblem } from '../../../platform/input-guard.ts';
import type { Logger } from '../../../platform/logger.ts';
import { planLimitReached } from '../../../platform/limit-errors.ts';
import type { PlanLimitsReader } from '../../../platform/plan-limits.ts';
import { BlobTooLargeError, blobKeyOf, type BlobStore } from '../../../platform/blob-store/index.ts';
import {
  assertMayOnObject,
  assertMayWrite,
  callerOf,
  grants,
  hasFullAccess,
  listScope,
  type Caller,
  type ListScope,
} from './access.ts';
import { uploadLifetimeSeconds, type LimitService } from './limits.ts';
import { checkContentType, checkFirst, checkFolder, checkName, pathOf } from './names.ts';
import { sniffedContentType } from './sniff.ts';
import type { PolicyService } from './policies.ts';
import { uploadBytes } from '../../../platform/metrics.ts';

export type ObjectStatus = 'uploading' | 'pending' | 'ready';

export type StoredObject = {
  id: string;
  projectId: string;
  folder: string;
  name: string;
  path: string;
  contentType: string;
  size: number;
  sha256: string | null;
  status: ObjectStatus;
  ownerId: string | null;
  confirmOnComplete: boolean;
  upsert: boolean;
  maxBytes: number;
  createdAt: Date;
  updatedAt: Date;
  confirmedAt: Date | null;
};

type Row = {
  id: string;
  project_id: string;
  folder: string;
  name: string;
  path: string;
  content_type: string;
  size: string | null;
  sha256: string | null;
  status: ObjectStatus;
  owner_id: string | null;
  confirm_on_complete: boolean;
  upsert: boolean;
  max_bytes: string;
  created_at: Date | string;
  updated_at: Date | string;
  confirmed_at: Date | string | null;
};

type Sql = { execute: (sql: string, params?: unknown[]) => Promise<unknown> };

// Timestamps are kept to the millisecond, as JavaScript dates (and so cursors) carry them.
const NOW = `date_trunc('milliseconds', now())`;

const COLUMNS =
  'id, project_id, folder, name, path, content_type, size, sha256, status, owner_id, confirm_on_complete, upsert, max_bytes, created_at, updated_at, confirmed_at';

function toObject(r: Row): StoredObject {
  return {
    id: r.id,
    projectId: r.project_id,
    folder: r.folder,
    name: r.name,
    path: r.path,
    contentType: r.content_type,
    size: r.size === null ? 0 : Number(r.size),
    sha256: r.sha256,
    status: r.status,
    ownerId: r.owner_id,
    confirmOnComplete: r.confirm_on_complete,
    upsert: r.upsert,
    maxBytes: Number(r.max_bytes),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    confirmedAt: r.confirmed_at === null ? null : new Date(r.confirmed_at),
  };
}

async function rows(sql: Sql, query: string, params: unknown[]): Promise<Row[]> {
  return (await sql.execute(query, params)) as Row[];
}

/** `%`, `_` and `\` match themselves in a LIKE pattern. */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const SORTS = { name: 'path', created_at: 'created_at', updated_at: 'updated_at', size: 'size' } as const;
type SortKey = keyof typeof SORTS;

function parseSort(raw: unknown): { key: SortKey; desc: boolean } {
  if (raw === undefined || raw === null || raw === '') return { key: 'name', desc: false };
  const s = String(raw);
  const desc = s.startsWith('-');
  const key = (desc ? s.slice(1) : s) as SortKey;
  if (!Object.hasOwn(SORTS, key))
    throw errors.validation('sort', `must be one of ${Object.keys(SORTS).join(', ')}, optionally with a leading -`);
  return { key, desc };
}

function sortValue(o: StoredObject, key: SortKey): string | number {
  if (key === 'name') return o.path;
  if (key === 'size') return o.size;
  return (key === 'created_at' ? o.createdAt : o.updatedAt).toISOString();
}

/** A listing's cursor: [sort, value of the sort column, id] of the last object shown. */
function decodeObjectCursor(cursor: unknown, sort: string): { value: string | number; id: string } | undefined {
  const accept = (v: unknown) => {
    if (!Array.isArray(v) || v.length !== 3) return undefined;
    const [s, value, id] = v as unknown[];
    // A forged cursor must not reach PostgreSQL with a value its column cannot take (bad time, NUL, huge number).
    const storable =
      typeof value === 'number'
        ? Number.isSafeInteger(value)
        : typeof value === 'string' &&
          !textProblem(value) &&
          (!sort.endsWith('_at') || isStorableTime(new Date(value)));
    return s === sort && storable && isUuid(id) ? { value: value as string | number, id } : undefined;
  };
  return decodeCursor('after', cursor, accept, 'is not a cursor returned by this API for this sort');
}

/** SQL for "inside one of the caller's list scopes". */
function scopeSql(scope: ListScope, params: unknown[]): string {
  if (scope === null) return '';
  const ors = scope.map((s) => {
    const parts: string[] = [];
    if (s.folder !== '') {
      parts.push(`(folder = ? or folder like ?)`);
      params.push(s.folder, `${likeEscape(s.folder)}/%`);
    }
    if (s.ownerId !== null) {
      parts.push('owner_id = ?');
      params.push(s.ownerId);
    }
    return parts.length ? `(${parts.join(' and ')})` : 'true';
  });
  return ` and (${ors.join(' or ')})`;
}

export type BeginInput = {
  projectId?: string | null;
  folder?: unknown;
  name?: unknown;
  contentType?: unknown;
  confirm?: boolean | null;
  upsert?: boolean | null;
  sizeHint?: number | null;
};
export type UploadTicket = { id: string; projectId: string; maxBytes: number; limitedBy: 'upload' | 'quota' };

export type ObjectService = ReturnType<typeof createObjectService>;

/** Ready objects and their bytes, and uploads awaiting confirmation and theirs. */
export type UsageTotals = { objects: number; bytes: number; pendingObjects: number; pendingBytes: number };

export function createObjectService(deps: {
  db: SubgraphDatabase;
  blobs: BlobStore;
  policies: PolicyService;
  limits: LimitService;
  config: Config;
  logger: Logger;
  /** The project's plan (max_pending_uploads); without it, unconfirmed uploads are bounded by bytes only. */
  planLimits?: Pick<PlanLimitsReader, 'plan'>;
}) {
  const { db, blobs, policies, limits, logger } = deps;

  /** Uploads not confirmed yet: streaming (`uploading`, while their reservation is alive) and `pending`. */
  const pendingCount = async (sql: Sql, projectId: string): Promise<number> => {
    const [r] = (await sql.execute(
      `select count(*)::int as n from storage_objects
        where project_id = ? and (status = 'pending' or (status = 'uploading' and created_at > now() - make_interval(secs => ?)))`,
      [projectId, uploadLifetimeSeconds(deps.config)],
    )) as { n: number }[];
    return r!.n;
  };

  /**
   * Ready and pending objects and bytes of the given projects together, in one statement: a project's usage, or an
   * account's total for the operator. Ids that are not UUIDs match nothing.
   */
  const usageTotals = async (projectIds: readonly string[]): Promise<UsageTotals> => {
    const ids = projectIds.filter((id) => isUuid(id));
    if (ids.length === 0) return { objects: 0, bytes: 0, pendingObjects: 0, pendingBytes: 0 };
    const [t] = (await db.em().execute(
      `select count(*) filter (where status = 'ready')::bigint as objects, coalesce(sum(size) filter (where status = 'ready'), 0)::bigint as bytes,
              count(*) filter (where status = 'pending')::bigint as pending_objects, coalesce(sum(size) filter (where status = 'pending'), 0)::bigint as pending_bytes
       from storage_objects where project_id in (select (jsonb_array_elements_text(?::jsonb))::uuid)`,
      [JSON.stringify(ids)],
    )) as { objects: string; bytes: string; pending_objects: string; pending_bytes: string }[];
    return {
      objects: Number(t!.objects),
      bytes: Number(t!.bytes),
      pendingObjects: Number(t!.pending_objects),
      pendingBytes: Number(t!.pending_bytes),
    };
  };

  /** Deletes blobs after the rows that named them are gone; a failure leaves an orphan, logged, never an error. */
  const dropBlobs = async (objects: { projectId: string; id: string }[]) => {
    for (const o of objects) {
      await blobs
        .delete(blobKeyOf(o.projectId, o.id))
        .catch((err: unknown) => logger.warn({ err, object: o.id }, 'blob delete failed'));
    }
  };

  const load = async (id: string, sql: Sql = db.em(), lock = false): Promise<StoredObject | null> => {
    if (!isUuid(id)) return null;
    const [r] = await rows(sql, `select ${COLUMNS} from storage_objects where id = ?${lock ? ' for update' : ''}`, [
      id,
    ]);
    return r ? toObject(r) : null;
  };

  /** The object and the caller, checking the caller's project owns it (NOT_FOUND otherwise). */
  const objectFor = async (
    principal: Principal,
    id: string,
    sql: Sql = db.em(),
    lock = false,
  ): Promise<{ obj: StoredObject; caller: Caller }> => {
    const obj = await load(id, sql, lock);
    if (!obj) throw errors.notFound('object', String(id).slice(0, 100));
    const caller = callerOf(principal, undefined, obj.projectId);
    return { obj, caller };
  };

  /** An object as its events (storage.object.created / deleted) describe it. */
  function eventOf(o: StoredObject): StorageObjectEvent {
    return {
      id: o.id,
      folder: o.folder,
      name: o.name,
      contentType: o.contentType,
      size: o.size,
      sha256: o.sha256,
      ownerId: o.ownerId,
    };
  }

  /**
   * Makes a pending object ready in `em`'s transaction; returns objects whose blobs must go after commit. The object's
   * creation (and the deletion of one it replaces) is an event for the project's outbound event subscriptions, when it
   * has any, committed with the change.
   */
  const promote = async (
    em: Sql,
    obj: StoredObject,
    caller: Caller,
  ): Promise<{ obj: StoredObject; replaced: StoredObject[] }> => {
    const replaced: StoredObject[] = [];
    const [existing] = await rows(
      em,
      `select ${COLUMNS} from storage_objects where project_id = ? and path = ? and status = 'ready' for update`,
      [obj.projectId, obj.path],
    );
    if (existing) {
      if (!obj.upsert)
        throw errors.conflict(`An object "${obj.path}" already exists: delete it first or upload with upsert`, {
          path: obj.path,
          id: existing.id,
        });
      const old = toObject(existing);
      assertMayOnObject(await policies.all(obj.projectId), caller, 'delete', old);
      await em.execute('delete from storage_objects where id = ?', [old.id]);
      await publishEventIfWanted(em, 'storage.object.deleted', { projectId: old.projectId, object: eventOf(old) });
      replaced.push(old);
    }
    const [r] = await rows(
      em,
      `update storage_objects set status = 'ready', confirmed_at = ${NOW}, updated_at = ${NOW} where id = ? returning ${COLUMNS}`,
      [obj.id],
    );
    const ready = toObject(r!);
    await publishEventIfWanted(em, 'storage.object.created', { projectId: ready.projectId, object: eventOf(ready) });
    return { obj: ready, replaced };
  };

  const inTx = async <T>(fn: (em: Sql) => Promise<T>): Promise<T> => {
    try {
      return await db.em().transactional(async (em) => await fn(em));
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw errors.conflict('An object with this folder and name was just confirmed by another upload');
      throw err;
    }
  };

  const service = {
    load,

    /** One object the caller may read. Callers without full access only see ready objects. */
    async get(principal: Principal, id: string): Promise<StoredObject> {
      const { obj, caller } = await objectFor(principal, id);
      if (!hasFullAccess(caller) && obj.status !== 'ready') throw errors.notFound('object', id);
      assertMayOnObject(await policies.all(obj.projectId), caller, 'read', obj);
      return obj;
    },

    /** A page of objects in the caller's list scopes. */
    async list(
      principal: Principal,
      args: {
        projectId?: string | null;
        folder?: string | null;
        recursive?: boolean | null;
        prefix?: string | null;
        status?: string | null;
        sort?: string | null;
        first?: number | null;
        after?: string | null;
      },
    ): Promise<{ items: StoredObject[]; nextCursor: string | null }> {
      const caller = callerOf(principal, args.projectId);
      const status = args.status ?? 'ready';
      if (status !== 'ready' && status !== 'pending') throw errors.validation('status', 'must be ready or pending');
      if (status === 'pending' && !hasFullAccess(caller))
        throw errors.forbidden('Only the project API key may list unconfirmed uploads');
      const scope = listScope(await policies.all(caller.projectId), caller);
      const first = checkFirst(args.first);
      const sort = parseSort(args.sort);
      const sortName = `${sort.desc ? '-' : ''}${sort.key}`;
      const params: unknown[] = [caller.projectId, status];
      let where = 'project_id = ? and status = ?';
      if (args.folder !== undefined && args.folder !== null) {
        const folder = checkFolder(args.folder);
        if (args.recursive) {
          if (folder !== '') {
            where += ' and (folder = ? or folder like ?)';
            params.push(folder, `${likeEscape(folder)}/%`);
          }
        } else {
          where += ' and folder = ?';
          params.push(folder);
        }
      }
      if (args.prefix !== undefined && args.prefix !== null && args.prefix !== '') {
        if (typeof args.prefix !== 'string' || args.prefix.length > 255 || args.prefix.includes('\u0000'))
          throw errors.validation('prefix', 'must be a string of at most 255 characters');
        where += ' and name like ?';
        params.push(`${likeEscape(args.prefix)}%`);
      }
      where += scopeSql(scope, params);
      const col = SORTS[sort.key];
      const cast =
        sort.key === 'created_at' || sort.key === 'updated_at'
          ? '::timestamptz'
          : sort.key === 'size'
            ? '::bigint'
            : '';
      const c = decodeObjectCursor(args.after, sortName);
      if (c) {
        where += ` and (${col}, id) ${sort.desc ? '<' : '>'} (?${cast}, ?)`;
        params.push(c.value, c.id);
      }
      const dir = sort.desc ? 'desc' : 'asc';
      params.push(first + 1);
      const found = (
        await rows(
          db.em(),
          `select ${COLUMNS} from storage_objects where ${where} order by ${col} ${dir}, id ${dir} limit ?`,
          params,
        )
      ).map(toObject);
      const items = found.slice(0, first);
      const last = items[items.length - 1];
      return {
        items,
        nextCursor: found.length > first && last ? encodeCursor([sortName, sortValue(last, sort.key), last.id]) : null,
      };
    },

    /** Folders with ready objects in the caller's list scopes, by name. */
    async folders(
      principal: Principal,
      args: { projectId?: string | null; prefix?: string | null; first?: number | null; after?: string | null },
    ) {
      const caller = callerOf(principal, args.projectId);
      const scope = listScope(await policies.all(caller.projectId), caller);
      const first = checkFirst(args.first);
      const params: unknown[] = [caller.projectId];
      let where = `project_id = ? and status = 'ready'`;
      if (args.prefix) {
        if (typeof args.prefix !== 'string' || args.prefix.length > 512)
          throw errors.validation('prefix', 'must be a string of at most 512 characters');
        where += ' and folder like ?';
        params.push(`${likeEscape(args.prefix)}%`);
      }
      where += scopeSql(scope, params);
      // The top-level folder is '' — the cursor marks it with NUL, which no folder contains.
      const after = decodeCursor('after', args.after, (v) =>
        v === '\u0000' ? '' : typeof v === 'string' && v !== '' && !textProblem(v) ? v : undefined,
      );
      if (after !== undefined) {
        where += ' and folder > ?';
        params.push(after);
      }
      params.push(first + 1);
      const found = (await db
        .em()
        .execute(
          `select folder, count(*)::int as objects, coalesce(sum(size), 0)::bigint as bytes from storage_objects where ${where} group by folder order by folder limit ?`,
          params,
        )) as { folder: string; objects: number; bytes: string }[];
      const items = found
        .slice(0, first)
        .map((f) => ({ folder: f.folder, objects: f.objects, bytes: Number(f.bytes) }));
      const last = items[items.length - 1];
      return {
        items,
        nextCursor: found.length > first && last ? encodeCursor(last.folder === '' ? '\u0000' : last.folder) : null,
      };
    },

    /** Usage of a project: totals and per folder. */
    async usage(projectId: string) {
      const totals = await usageTotals([projectId]);
      const folders = (await db
        .em()
        .execute(
          `select folder, count(*)::int as objects, coalesce(sum(size), 0)::bigint as bytes from storage_objects where project_id = ? and status = 'ready' group by folder order by folder`,
          [projectId],
        )) as { folder: string; objects: number; bytes: string }[];
      return {
        ...totals,
        folders: folders.map((f) => ({ folder: f.folder, objects: f.objects, bytes: Number(f.bytes) })),
      };
    },

    /** Usage summed over several projects (an account's, for the operator): the totals of `usage`, in one query. */
    usageTotals,

    /**
     * Checks an upload may start (names, policy, name clash, quota) and records it as `uploading`.
     * The ticket says how many bytes it may carry and which limit that is.
     */
    async begin(principal: Principal, input: BeginInput, requestId: string): Promise<UploadTicket> {
      const caller = callerOf(principal, input.projectId);
      const folder = checkFolder(input.folder);
      const name = checkName(input.name);
      const contentType = checkContentType(input.contentType);
      const path = pathOf(folder, name);
      const projectPolicies = await policies.all(caller.projectId);
      assertMayWrite(projectPolicies, caller, folder, contentType);
      const [existing] = await rows(
        db.em(),
        `select ${COLUMNS} from storage_objects where project_id = ? and path = ? and status = 'ready'`,
        [caller.projectId, path],
      );
      if (existing) {
        if (!input.upsert)
          throw errors.conflict(`An object "${path}" already exists: delete it first or upload with upsert`, {
            path,
            id: existing.id,
          });
        assertMayOnObject(projectPolicies, caller, 'delete', toObject(existing));
      }
      const plan = await limits.current(caller.projectId, requestId);
      const projectPlan = await deps.planLimits?.plan(caller.projectId);
      const maxPending = projectPlan?.limits.maxPendingUploads ?? null;
      const maxUpload = limits.maxUpload(plan);
      const hint =
        typeof input.sizeHint === 'number' && Number.isSafeInteger(input.sizeHint) && input.sizeHint >= 0
          ? input.sizeHint
          : Infinity;
      const id = crypto.randomUUID();
      // The upload reserves what it may carry against the quota while it streams (concurrent uploads cannot each be
      // handed the whole remainder): the check and the reservation are one step under the project's quota lock.
      return await inTx(async (em) => {
        await em.execute(`select pg_advisory_xact_lock(hashtext('storage-quota:' || ?))`, [caller.projectId]);
        const remaining = (plan.maxStorageBytes ?? Infinity) - (await limits.used(caller.projectId, em));
        if (remaining <= 0)
          throw new AppError(
            'QUOTA_EXCEEDED',
            `The project's storage quota of ${plan.maxStorageBytes} bytes is used up (uploads in progress included)`,
            { quota_bytes: plan.maxStorageBytes },
          );
        // Unconfirmed objects (each a row and a blob kept for the pending TTL) are counted too, under the same lock:
        // zero-byte uploads cost no quota but are not free.
        if (maxPending !== null && (await pendingCount(em, caller.projectId)) >= maxPending)
          throw planLimitReached(projectPlan!.planId, 'max_pending_uploads', maxPending, 'unconfirmed uploads');
        const limitedBy = remaining < maxUpload ? 'quota' : 'upload';
        const maxBytes = Math.min(remaining, maxUpload, hint);
        await em.execute(
          `insert into storage_objects (id, project_id, folder, name, path, content_type, status, owner_id, confirm_on_complete, upsert, max_bytes, created_at, updated_at)
           values (?, ?, ?, ?, ?, ?, 'uploading', ?, ?, ?, ?, ${NOW}, ${NOW})`,
          [
            id,
            caller.projectId,
            folder,
            name,
            path,
            contentType,
            caller.kind === 'user' ? caller.userId : null,
            input.confirm === true,
            input.upsert === true,
            maxBytes,
          ],
        );
        return { id, projectId: caller.projectId, maxBytes, limitedBy } as UploadTicket;
      });
    },

    /**
     * Records the bytes of an upload (checked against the blob store), within the quota: the object
     * becomes `pending`, or `ready` when the upload asked to be confirmed at once.
     */
    async complete(principal: Principal, id: string, size: number, sha256: string): Promise<StoredObject> {
      if (!Number.isSafeInteger(size) || size < 0) throw errors.validation('size', 'must be a whole number of bytes');
      if (!/^[0-9a-f]{64}$/.test(sha256)) throw errors.validation('sha256', 'must be a hex SHA-256');
      const before = await load(id);
      if (!before || before.status !== 'uploading') throw errors.notFound('upload', String(id).slice(0, 100));
      const caller = callerOf(principal, undefined, before.projectId);
      const stat = await blobs.stat(blobKeyOf(before.projectId, before.id));
      if (!stat || stat.size !== size) throw errors.conflict('The bytes of this upload are not in the blob store');
      const dropped: StoredObject[] = [];
      try {
        // A write policy limited to content types is checked against what the bytes are, not what was declared.
        let contentType = before.contentType;
        if (!hasFullAccess(caller)) {
          const projectPolicies = await policies.all(before.projectId);
          if (grants(projectPolicies, caller, 'write', before.folder).some((p) => (p.contentTypes?.length ?? 0) > 0)) {
            contentType = await sniffedContentType(blobs, {
              projectId: before.projectId,
              id: before.id,
              size,
              contentType: before.contentType,
            });
            assertMayWrite(projectPolicies, caller, before.folder, contentType);
          }
        }
        const result = await inTx(async (em) => {
          await em.execute(`select pg_advisory_xact_lock(hashtext('storage-quota:' || ?))`, [before.projectId]);
          const obj = await load(id, em, true);
          if (!obj || obj.status !== 'uploading') throw errors.notFound('upload', id);
          if (size > obj.maxBytes)
            throw new AppError('PAYLOAD_TOO_LARGE', `The upload exceeds ${obj.maxBytes} bytes`, {
              max_bytes: obj.maxBytes,
            });
          const plan = await limits.of(obj.projectId, em);
          // Other uploads' reservations count, this upload's own does not (its bytes are `size` now).
          const used = await limits.used(obj.projectId, em, obj.id);
          if (plan.maxStorageBytes !== null && used + size > plan.maxStorageBytes) {
            throw new AppError(
              'QUOTA_EXCEEDED',
              `The upload would take the project past its storage quota of ${plan.maxStorageBytes} bytes`,
              {
                quota_bytes: plan.maxStorageBytes,
                used_bytes: used,
                size,
              },
            );
          }
          const [r] = await rows(
            em,
            `update storage_objects set status = 'pending', size = ?, sha256 = ?, content_type = ?, updated_at = ${NOW} where id = ? returning ${COLUMNS}`,
            [size, sha256, contentType, id],
          );
          const pending = toObject(r!);
          if (!pending.confirmOnComplete) return pending;
          const { obj: ready, replaced } = await promote(em, pending, caller);
          dropped.push(...replaced);
          return ready;
        });
        await dropBlobs(dropped);
        uploadBytes.inc(size);
        return result;
      } catch (err) {
        // A refused upload leaves nothing behind.
        await service.abort(id);
        throw err;
      }
    },

    /** Forgets an upload and its bytes (stream failed or refused). */
    async abort(id: string): Promise<boolean> {
      if (!isUuid(id)) return false;
      const gone = (await db
        .em()
        .execute(`delete from storage_objects where id = ? and status = 'uploading' returning project_id`, [id])) as {
        project_id: string;
      }[];
      if (gone[0]) await dropBlobs([{ projectId: gone[0].project_id, id }]);
      return gone.length > 0;
    },

    /** Streams a file in (GraphQL uploads): begin, bytes, complete, as the front door does for REST. */
    async upload(principal: Principal, input: BeginInput, body: Readable, requestId: string): Promise<StoredObject> {
      const ticket = await service.begin(principal, input, requestId);
      let stored;
      try {
        stored = await blobs.put(blobKeyOf(ticket.projectId, ticket.id), body, { maxBytes: ticket.maxBytes });
      } catch (err) {
        await service.abort(ticket.id);
        if (err instanceof BlobTooLargeError) throw errors.uploadTooLarge(ticket);
        // The transport's own size cap (graphql-upload's maxFileSize) ends the stream with a 413.
        if ((err as { status?: number }).status === 413)
          throw new AppError('PAYLOAD_TOO_LARGE', (err as Error).message);
        throw err;
      }
      return await service.complete(principal, ticket.id, stored.size, stored.sha256);
    },

    /** Confirms a pending upload (write permission; an owner-only policy: the uploader). Ready objects: no-op. */
    async confirm(principal: Principal, id: unknown): Promise<StoredObject> {
      if (typeof id !== 'string' || id === '') throw errors.validation('id', 'is required');
      const { obj, caller } = await objectFor(principal, id);
      if (obj.status === 'uploading') throw errors.conflict('The upload is still in progress');
      const projectPolicies = await policies.all(obj.projectId);
      if (!hasFullAccess(caller)) {
        assertMayWrite(projectPolicies, caller, obj.folder, obj.contentType);
        const ownOnly = grants(projectPolicies, caller, 'write', obj.folder).every((p) => p.principal === 'owner');
        if (ownOnly && !(caller.kind === 'user' && obj.ownerId === caller.userId))
          throw errors.forbidden('Only the uploader may confirm this upload');
      }
      if (obj.status === 'ready') return obj;
      const dropped: StoredObject[] = [];
      const result = await inTx(async (em) => {
        const locked = await load(id, em, true);
        if (!locked) throw errors.notFound('object', id);
        if (locked.status === 'ready') return locked;
        const { obj: ready, replaced } = await promote(em, locked, caller);
        dropped.push(...replaced);
        return ready;
      });
      await dropBlobs(dropped);
      return result;
    },

    /** Deletes an object and its bytes. Deleting it again is NOT_FOUND. */
    async remove(principal: Principal, id: string): Promise<void> {
      const { obj, caller } = await objectFor(principal, id);
      if (!hasFullAccess(caller) && obj.status !== 'ready') throw errors.notFound('object', id);
      assertMayOnObject(await policies.all(obj.projectId), caller, 'delete', obj);
      // A ready object's deletion is an event (storage.object.deleted), committed with it.
      const gone = await inTx(async (em) => {
        const deleted = (await em.execute('delete from storage_objects where id = ? returning id', [
          obj.id,
        ])) as unknown[];
        if (deleted.length > 0 && obj.status === 'ready')
          await publishEventIfWanted(em, 'storage.object.deleted', { projectId: obj.projectId, object: eventOf(obj) });
        return deleted;
      });
      if (gone.length === 0) throw errors.notFound('object', id);
      await dropBlobs([obj]);
    },

    /**
     * Removes uploads never confirmed within `ttlSeconds`, and uploads whose stream died (still `uploading` past the
     * longest a request may last: a slow upload outliving the TTL is still streaming), with their bytes.
     */
    async sweep(ttlSeconds: number, batch = 500): Promise<number> {
      const streamSeconds = uploadLifetimeSeconds(deps.config);
      let total = 0;
      for (;;) {
        const gone = (await db.em().execute(
          `delete from storage_objects where id in (
             select id from storage_objects
              where status <> 'ready'
                and ((status = 'pending' and created_at < now() - make_interval(secs => ?))
                  or (status = 'uploading' and created_at < now() - make_interval(secs => ?)))
              limit ?)
           returning id, project_id`,
          [ttlSeconds, streamSeconds, batch],
        )) as { id: string; project_id: string }[];
        await dropBlobs(gone.map((g) => ({ id: g.id, projectId: g.project_id })));
        total += gone.length;
        if (gone.length < batch) return total;
      }
    },

    /** Removes every object of a deleted project with its bytes (idempotent). */
    async purgeProject(projectId: string): Promise<number> {
      let total = 0;
      for (;;) {
        const gone = (await db
          .em()
          .execute(
            'delete from storage_objects where id in (select id from storage_objects where project_id = ? limit 500) returning id, project_id',
            [projectId],
          )) as { id: string; project_id: string }[];
        await dropBlobs(gone.map((g) => ({ id: g.id, projectId: g.project_id })));
        total += gone.length;
        if (gone.length < 500) return total;
      }
    },
  };
  return service;
}
