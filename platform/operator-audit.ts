// The operator audit log's writer for subgraphs that reach the platform database with `pg` (tenant management writes
// its own rows through MikroORM: subgraphs/tenant/services/operator-audit.ts, the same table and columns). The row is
// written by the caller inside the transaction of the change, so a change without its row cannot be. Never give it a
// secret: a URL goes in redacted (host, port, database and user only).
import crypto from 'node:crypto';

/** The operator acting (platform/auth.ts `operator` principal). */
export type OperatorActor = { operator: string };

/** Records one operator action (`server.add`, ...) on `db`, a connection inside the change's transaction. */
export async function writeOperatorAudit(
  db: { query: (text: string, values: unknown[]) => Promise<unknown> },
  by: OperatorActor,
  action: string,
  targetKind: string,
  targetId: string | null,
  details: Record<string, unknown>,
): Promise<void> {
  await db.query(
    `insert into operator_audit (id, at, operator, action, target_kind, target_id, details)
     values ($1, date_trunc('milliseconds', clock_timestamp()), $2, $3, $4, $5, $6::jsonb)`,
    [crypto.randomUUID(), by.operator, action, targetKind, targetId, JSON.stringify(details)],
  );
}
