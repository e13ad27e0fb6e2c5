// Issue 17: one Idempotency-Key store for the webhook receiver and invoke (sync and async). The receivers' table
// becomes the shared one: `scope` names what the key belongs to (`webhook/<slug>`, `invoke/<name>/<caller>`),
// `fingerprint` is a digest of the request (the same key with another body is refused), `claim_id` and
// `claimed_until` let a claim abandoned by a process that died be taken over instead of answering 409 for 24 hours.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsIdempotencyMigration extends Migration {
  override name = '0006-functions-idempotency';

  override up(): void {
    this.addSql('alter table webhook_idempotency rename to function_idempotency');
    this.addSql('alter table function_idempotency rename column slug to scope');
    this.addSql(`update function_idempotency set scope = 'webhook/' || scope`);
    // Keys stored before have no fingerprint: they replay whatever the body (as they did).
    this.addSql('alter table function_idempotency add column fingerprint text');
    this.addSql('alter table function_idempotency add column claim_id uuid');
    this.addSql('alter table function_idempotency add column claimed_until timestamptz');
    this.addSql('alter index webhook_idempotency_created_at rename to function_idempotency_created_at');
    this.addSql(
      'alter table function_idempotency rename constraint webhook_idempotency_pkey to function_idempotency_pkey',
    );
  }
}
