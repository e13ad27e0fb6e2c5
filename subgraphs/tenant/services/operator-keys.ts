// Operator keys (`top_...`): the credential of the install's operator, opening the admin API only. Stored as SHA-256
// hashes with a shown prefix; the key itself is answered once, at creation. The bootstrap key (TESSERA_OPERATOR_KEY)
// lives in the configuration, not in the table: it is the operator named `bootstrap`, compared in constant time.
import crypto from 'node:crypto';
import { AppError, errors } from '../../../platform/errors.ts';
import { isUuid } from '../../../platform/ids.ts';
import { randomToken, sha256Hex } from '../../../platform/crypto.ts';
import { checkName } from './validation.ts';
import { credentialChangeCommitted, publishCredentialChange } from './credentials.ts';
import { writeAudit, type OperatorRef } from './operator-audit.ts';
import type { ServiceDeps } from './context.ts';

export const OPERATOR_KEY_PREFIX = 'top_';
/** The bootstrap key's operator name and key id (it has no row). */
export const BOOTSTRAP_OPERATOR = 'bootstrap';
const SHOWN_PREFIX_LENGTH = 12;

export type OperatorKeyView = {
  id: string;
  name: string;
  keyPrefix: string;
  createdAt: Date;
  createdBy: string;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

type KeyRow = {
  id: string;
  name: string;
  key_prefix: string;
  created_at: Date;
  created_by: string;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

const view = (r: KeyRow): OperatorKeyView => ({
  id: r.id,
  name: r.name,
  keyPrefix: r.key_prefix,
  createdAt: r.created_at,
  createdBy: r.created_by,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export type OperatorKeyService = ReturnType<typeof createOperatorKeyService>;

/** Checks, lists, creates and revokes operator keys. */
export function createOperatorKeyService({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  const bootstrapHash = config.operatorKey ? crypto.hash('sha256', config.operatorKey) : undefined;
  return {
    /** Who an operator key stands for; INVALID_TOKEN for an unknown or revoked one. */
    async authenticate(key: string): Promise<{ operator: string; keyId: string }> {
      if (!key.startsWith(OPERATOR_KEY_PREFIX)) throw errors.invalidToken();
      // Hashes of equal length compared in constant time: the bootstrap key is never compared as text.
      if (bootstrapHash) {
        const given = crypto.hash('sha256', key, 'buffer');
        if (crypto.timingSafeEqual(given, Buffer.from(bootstrapHash, 'hex')))
          return { operator: BOOTSTRAP_OPERATOR, keyId: BOOTSTRAP_OPERATOR };
      }
      // The lookup is by hash (an index): no timing tells how much of a key matched.
      const [row] = await db
        .em()
        .execute<{ id: string; name: string }[]>(
          'update operator_keys set last_used_at = now() where key_hash = ? and revoked_at is null returning id, name',
          [sha256Hex(key)],
        );
      if (!row) throw errors.invalidToken('The operator key is unknown or revoked');
      return { operator: row.name, keyId: row.id };
    },

    /** Every key, newest first (revoked ones too, with when). */
    async list(): Promise<OperatorKeyView[]> {
      const rows = await db
        .em()
        .execute<KeyRow[]>(
          'select id, name, key_prefix, created_at, created_by, last_used_at, revoked_at from operator_keys order by created_at desc, id desc',
        );
      return rows.map(view);
    },

    /** A new key named `name`; the key is in the answer and nowhere else. */
    async create(by: OperatorRef, input: { name: unknown }): Promise<OperatorKeyView & { key: string }> {
      const name = checkName('name', input.name);
      const key = randomToken(OPERATOR_KEY_PREFIX);
      const row: KeyRow = {
        id: crypto.randomUUID(),
        name,
        key_prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
        created_at: new Date(),
        created_by: by.operator,
        last_used_at: null,
        revoked_at: null,
      };
      await db.em().transactional(async (em) => {
        await em.execute(
          'insert into operator_keys (id, name, key_hash, key_prefix, created_at, created_by) values (?, ?, ?, ?, ?, ?)',
          [row.id, name, sha256Hex(key), row.key_prefix, row.created_at, row.created_by],
        );
        await writeAudit(em, by, 'operator_key.create', 'operator_key', row.id, {
          name,
          key_prefix: row.key_prefix,
        });
      });
      return { ...view(row), key };
    },

    /** Revokes a key: refused at once in every process. The bootstrap key is the configuration's (CONFLICT). */
    async revoke(by: OperatorRef, id: string): Promise<void> {
      if (id === BOOTSTRAP_OPERATOR)
        throw new AppError(
          'CONFLICT',
          'The bootstrap operator key comes from the configuration: unset TESSERA_OPERATOR_KEY (and restart) to stop it',
          { id },
        );
      if (!isUuid(id)) throw errors.notFound('operator key', String(id).slice(0, 100));
      await db.em().transactional(async (em) => {
        const [row] = await em.execute<{ name: string; revoked: boolean }[]>(
          `update operator_keys set revoked_at = coalesce(revoked_at, now()) where id = ?
           returning name, revoked_at is not null as revoked`,
          [id],
        );
        if (!row) throw errors.notFound('operator key', id);
        await writeAudit(em, by, 'operator_key.revoke', 'operator_key', id, { name: row.name });
        await publishCredentialChange(em, { operatorKeyIds: [id] });
      });
      await credentialChangeCommitted({ operatorKeyIds: [id] });
    },
  };
}
