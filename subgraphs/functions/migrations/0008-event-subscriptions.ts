// Issue 17: outbound event webhooks. A project subscribes URLs to events (`event_subscriptions`, the Standard Webhooks
// signing secret sealed); each event becomes one delivery per subscription (`event_deliveries`, the exact JSON body
// that is signed kept as text), tried until it succeeds or its retry window closes (then `dead`), every attempt in
// `event_delivery_attempts`; a manual redelivery opens a new window (`window_started_at`, `window_attempts`). A
// delivery made from a platform event keeps the event's id (`dedupe_key`), so handling the event twice delivers it once.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsEventSubscriptionsMigration extends Migration {
  override name = '0008-functions-event-subscriptions';

  override up(): void {
    this.addSql(`create table event_subscriptions (
      id uuid primary key,
      project_id uuid not null,
      url text not null,
      events text[] not null,
      tables text[] not null default '{}',
      description text not null default '',
      enabled boolean not null default true,
      secret_sealed text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create index event_subscriptions_project on event_subscriptions (project_id, created_at)');

    this.addSql(`create table event_deliveries (
      id uuid primary key,
      subscription_id uuid not null references event_subscriptions (id) on delete cascade,
      project_id uuid not null,
      message_id text not null,
      event_type text not null,
      payload text not null,
      dedupe_key text,
      status text not null check (status in ('pending', 'delivering', 'succeeded', 'dead')),
      attempts integer not null default 0,
      next_attempt_at timestamptz,
      window_started_at timestamptz not null,
      window_attempts integer not null default 0,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_latency_ms double precision,
      last_error text,
      last_response text,
      created_at timestamptz not null,
      delivered_at timestamptz
    )`);
    this.addSql(
      'create unique index event_deliveries_dedupe on event_deliveries (subscription_id, dedupe_key) where dedupe_key is not null',
    );
    this.addSql('create index event_deliveries_log on event_deliveries (subscription_id, created_at desc, id desc)');
    this.addSql(`create index event_deliveries_due on event_deliveries (next_attempt_at) where status = 'pending'`);
    this.addSql(
      `create index event_deliveries_delivering on event_deliveries (last_attempt_at) where status = 'delivering'`,
    );
    this.addSql('create index event_deliveries_project on event_deliveries (project_id)');

    this.addSql(`create table event_delivery_attempts (
      delivery_id uuid not null references event_deliveries (id) on delete cascade,
      attempt integer not null,
      at timestamptz not null,
      status_code integer,
      latency_ms double precision,
      response_excerpt text,
      error text,
      primary key (delivery_id, attempt)
    )`);
  }
}
