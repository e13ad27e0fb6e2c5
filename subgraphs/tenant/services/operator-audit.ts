// The operator audit log: one row per change an operator made (who: the operator key's name; what: a dotted action;
// the target; the changed fields), written in the transaction of the change, so a change without its row cannot be.
// Times are kept to the millisecond, as the paging cursors carry them.
import crypto from 'node:crypto';
import { decodeCursor, encodeCursor } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';
import { isStorableTime } from '../../../platform/input-guard.ts';
import { errors } from '../../../platform/errors.ts';
import type { SqlExecutor } from '../../../platform/events.ts';
import { checkPageSize } from './validation.ts';
import type { ServiceDeps } from './context.ts';

/** The operator acting (platform/auth.ts `operator` principal). */
export type OperatorRef = { operator: string; keyId: string };

export type AuditEntry = {
  id: string;
  at: Date;
  operator: string;
  action: string;
  targetKind: string;
  targetId: string | null;
  details: Record<string, unknown>;
};

export const ADMIN_PAGE_DEFAULT = 50;
export const ADMIN_PAGE_MAX = 100;

/** Records one operator action inside the transaction `tx` making the change. Never give it a key. */
export async function writeAudit(
  tx: SqlExecutor,
  by: OperatorRef,
  action: string,
  targetKind: string,
  targetId: string | null,
  details: Record<string, unknown>,
): Promise<void> {
  await tx.execute(
    `insert into operator_audit (id, at, operator, action, target_kind, target_id, details)
     values (?, date_trunc('milliseconds', clock_timestamp()), ?, ?, ?, ?, ?::jsonb)`,
    [crypto.randomUUID(), by.operator, action, targetKind, targetId, JSON.stringify(details)],
  );
}

const checkFilter = (field: string, value: unknown): string | undefined => {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || value.length > 200)
    throw errors.validation(field, 'must be text of at most 200 characters');
  return value;
};

/** Reads the audit log, newest first. */
export function createOperatorAuditService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    async list(opts: { first?: unknown; after?: unknown; action?: unknown; targetId?: unknown }) {
      const first = checkPageSize('first', opts.first, ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX);
      const after = decodeCursor('after', opts.after, (v) => {
        if (!Array.isArray(v) || v.length !== 2) return undefined;
        const at = typeof v[0] === 'string' ? new Date(v[0]) : undefined;
        return at && isStorableTime(at) && isUuid(v[1]) ? { at, id: v[1] as string } : undefined;
      });
      const action = checkFilter('action', opts.action);
      const targetId = checkFilter('target_id', opts.targetId);
      const where: string[] = [];
      const params: unknown[] = [];
      if (action) {
        where.push('action = ?');
        params.push(action);
      }
      if (targetId) {
        where.push('target_id = ?');
        params.push(targetId);
      }
      if (after) {
        where.push('(at, id) < (?, ?)');
        params.push(after.at, after.id);
      }
      const rows = await db.em().execute<
        {
          id: string;
          at: Date;
          operator: string;
          action: string;
          target_kind: string;
          target_id: string | null;
          details: Record<string, unknown>;
        }[]
      >(
        `select id, at, operator, action, target_kind, target_id, details from operator_audit
         ${where.length ? `where ${where.join(' and ')}` : ''} order by at desc, id desc limit ?`,
        [...params, first + 1],
      );
      const items: AuditEntry[] = rows.slice(0, first).map((r) => ({
        id: r.id,
        at: new Date(r.at),
        operator: r.operator,
        action: r.action,
        targetKind: r.target_kind,
        targetId: r.target_id,
        details: r.details ?? {},
      }));
      const last = items[items.length - 1];
      return {
        items,
        nextCursor: rows.length > first && last ? encodeCursor([last.at.toISOString(), last.id]) : null,
      };
    },
  };
}
