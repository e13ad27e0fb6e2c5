// Project secrets for functions (`{{secrets.NAME}}`): values sealed with the platform secret box,
// never returned by the API, opened only while a function runs.
import { errors } from '../../../platform/errors.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import { announceFunctionsChanged, publishFunctionsChanged } from './receiver-cache.ts';
import type { Sql } from './sql.ts';

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
export const SECRET_VALUE_MAX = 16_384;

export type SecretService = ReturnType<typeof createSecretService>;

/** A column of every sealed secret of the project `projectColumn` names, as one JSON object (for `open`). */
export const sealedSecretsOf = (projectColumn: string) =>
  `(select coalesce(jsonb_object_agg(s.name, s.value_sealed), '{}'::jsonb) from function_secrets s where s.project_id = ${projectColumn})`;

/** Creates the secret service. */
export function createSecretService({ sql, box }: { sql: Sql; box: SecretBox }) {
  const checkName = (value: unknown): string => {
    const name = typeof value === 'string' ? value.trim() : '';
    if (!SECRET_NAME.test(name))
      throw errors.validation(
        'name',
        'must be an identifier: letters, digits and _, not starting with a digit (at most 64 characters)',
      );
    return name;
  };
  return {
    /** Creates or replaces a secret. */
    async set(projectId: string, input: { name?: unknown; value?: unknown }) {
      const name = checkName(input.name);
      if (typeof input.value !== 'string' || input.value === '')
        throw errors.validation('value', 'is required (a non-empty string)');
      if (input.value.length > SECRET_VALUE_MAX)
        throw errors.validation('value', `must be at most ${SECRET_VALUE_MAX} characters`);
      const now = new Date();
      const sealed = box.encrypt(input.value);
      // Cached webhook receivers hold the project's sealed secrets: dropped everywhere when this commits.
      const rows = await sql.tx(async (tx) => {
        const saved = await tx.rows<{ name: string; created_at: Date; updated_at: Date }>(
          `insert into function_secrets (project_id, name, value_sealed, created_at, updated_at) values (?, ?, ?, ?, ?)
           on conflict (project_id, name) do update set value_sealed = excluded.value_sealed, updated_at = excluded.updated_at
           returning name, created_at, updated_at`,
          [projectId, name, sealed, now, now],
        );
        await publishFunctionsChanged(tx, projectId);
        return saved;
      });
      announceFunctionsChanged(projectId);
      return {
        name: rows[0]!.name,
        createdAt: new Date(rows[0]!.created_at),
        updatedAt: new Date(rows[0]!.updated_at),
      };
    },

    /** Names and dates only. */
    async list(projectId: string) {
      const rows = await sql.rows<{ name: string; created_at: Date; updated_at: Date }>(
        'select name, created_at, updated_at from function_secrets where project_id = ? order by name',
        [projectId],
      );
      return rows.map((r) => ({ name: r.name, createdAt: new Date(r.created_at), updatedAt: new Date(r.updated_at) }));
    },

    async remove(projectId: string, name: unknown): Promise<void> {
      const n = checkName(name);
      const count = await sql.tx(async (tx) => {
        const deleted = await tx.run('delete from function_secrets where project_id = ? and name = ?', [projectId, n]);
        if (deleted > 0) await publishFunctionsChanged(tx, projectId);
        return deleted;
      });
      if (count === 0) throw errors.notFound('secret', n);
      announceFunctionsChanged(projectId);
    },

    /** Every secret of the project in clear, for one execution. */
    async reveal(projectId: string): Promise<Record<string, string>> {
      const rows = await sql.rows<{ name: string; value_sealed: string }>(
        'select name, value_sealed from function_secrets where project_id = ?',
        [projectId],
      );
      return this.open(Object.fromEntries(rows.map((r) => [r.name, r.value_sealed])));
    },

    /** Opens sealed values read along with something else (a `sealedSecretsOf` column): name → value in clear. */
    open(sealed: Record<string, string>): Record<string, string> {
      const out = Object.create(null) as Record<string, string>;
      for (const [name, value] of Object.entries(sealed)) out[name] = box.decrypt(value);
      return out;
    },
  };
}
