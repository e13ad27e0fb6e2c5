// Outbound event subscriptions: a project subscribes a URL to events; Tessera POSTs each event there, signed the
// Standard Webhooks way with the subscription's secret (event-deliveries.ts delivers). The events:
// - `row.inserted`, `row.updated`, `row.deleted` on the subscription's `tables` (data API writes, after they commit:
//   the same path as after-hooks, so a subscribed table is an after trigger in `_hookTriggers`);
// - `user.registered`, `user.signed_in` (identity) and `storage.object.created`, `storage.object.deleted` (storage),
//   which those domains publish on the platform event outbox only for projects that declared an interest
//   (`tessera_event_interest`, kept here from the enabled subscriptions);
// - `execution.failed` (this subgraph's own executions).
// The secret (`whsec_` + base64 of 24 random bytes, or the caller's own) is sealed; it is answered only when a
// subscription is created and when its secret is rotated.
import crypto from 'node:crypto';
import net from 'node:net';
import type { SecretBox } from '../../../platform/crypto.ts';
import { errors } from '../../../platform/errors.ts';
import { setEventInterest, type EventType } from '../../../platform/events.ts';
import { announceHooksChanged, type HookEvent, type HookTrigger } from './hooks.ts';
import { isNonPublicAddress } from '../../../platform/addresses.ts';
import type { Sql } from './sql.ts';
import { optionalText } from './validation.ts';
import { isUuid } from '../../../platform/ids.ts';

export const EVENT_TYPES = [
  'row.inserted',
  'row.updated',
  'row.deleted',
  'user.registered',
  'user.signed_in',
  'storage.object.created',
  'storage.object.deleted',
  'execution.failed',
] as const;
export type EventTypeName = (typeof EVENT_TYPES)[number];
/** What the test endpoint sends (never a subscribable event). */
export const TEST_EVENT = 'subscription.test';

/** Row events by the data API's write event. */
export const ROW_EVENT_OF: Record<HookEvent, EventTypeName> = {
  insert: 'row.inserted',
  update: 'row.updated',
  delete: 'row.deleted',
};
const HOOK_EVENT_OF: Record<string, HookEvent> = {
  'row.inserted': 'insert',
  'row.updated': 'update',
  'row.deleted': 'delete',
};
/** Subscription events that other domains publish on the platform outbox, by the outbox's event type. */
export const PLATFORM_EVENT_OF: Partial<Record<EventType, EventTypeName>> = {
  'identity.user.registered': 'user.registered',
  'identity.user.signed_in': 'user.signed_in',
  'storage.object.created': 'storage.object.created',
  'storage.object.deleted': 'storage.object.deleted',
};
/** The consumer name under which this subgraph declares its interest in platform events. */
export const INTEREST_CONSUMER = 'functions.event-subscriptions';

const MAX_SUBSCRIPTIONS = 100;
const MAX_TABLES = 50;
const URL_MAX = 2048;
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

export type EventSubscription = {
  id: string;
  projectId: string;
  url: string;
  events: EventTypeName[];
  tables: string[];
  description: string;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** Only in the answers of create and rotate. */
  secret?: string;
};

type Row = Record<string, unknown>;
const toSubscription = (r: Row): EventSubscription => ({
  id: r.id as string,
  projectId: r.project_id as string,
  url: r.url as string,
  events: r.events as EventTypeName[],
  tables: r.tables as string[],
  description: r.description as string,
  enabled: r.enabled === true,
  createdAt: new Date(r.created_at as string),
  updatedAt: new Date(r.updated_at as string),
});

/** A new signing secret: `whsec_` + base64 of 24 random bytes (the Standard Webhooks / Svix form). */
export function newSigningSecret(): string {
  return `whsec_${crypto.randomBytes(24).toString('base64')}`;
}

/** The URL deliveries go to: absolute http(s); an address literal must be public unless private networks are allowed. */
export function checkUrl(value: unknown, allowPrivate: boolean): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw errors.validation('url', 'is required (the http or https URL deliveries are POSTed to)');
  if (value.length > URL_MAX) throw errors.validation('url', `must be at most ${URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw errors.validation('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw errors.validation('url', 'must be an absolute http or https URL');
  if (!allowPrivate) {
    const host = url.hostname
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '')
      .toLowerCase();
    // Names are resolved and checked at each delivery (DNS may change); what is plainly local is refused now.
    if ((net.isIP(host) && isNonPublicAddress(host)) || host === 'localhost' || host.endsWith('.localhost')) {
      throw errors.validation(
        'url',
        `${host} is a loopback, private or link-local address: deliveries there are refused`,
      );
    }
  }
  return url.toString();
}

function checkEvents(value: unknown): EventTypeName[] {
  if (!Array.isArray(value) || value.length === 0)
    throw errors.validation('events', `must be a non-empty list of ${EVENT_TYPES.join(', ')}`);
  for (const [i, e] of value.entries()) {
    if (!EVENT_TYPES.includes(e as EventTypeName))
      throw errors.validation(
        `events[${i}]`,
        `must be one of ${EVENT_TYPES.join(', ')}, got ${JSON.stringify(e).slice(0, 60)}`,
      );
  }
  return EVENT_TYPES.filter((e) => value.includes(e));
}

function checkTables(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw errors.validation('tables', 'must be a list of table names');
  if (value.length > MAX_TABLES) throw errors.validation('tables', `must name at most ${MAX_TABLES} tables`);
  for (const [i, t] of value.entries()) {
    if (typeof t !== 'string' || !TABLE_NAME.test(t))
      throw errors.validation(
        `tables[${i}]`,
        'must be a table name: a letter or _, then letters, digits, _ or $ (at most 63)',
      );
  }
  return [...new Set(value as string[])].sort();
}

/** Row events need tables; tables need row events. */
function checkCombination(events: EventTypeName[], tables: string[]): void {
  const rows = events.some((e) => e.startsWith('row.'));
  if (rows && tables.length === 0)
    throw errors.validation('tables', 'is required with row events: the tables whose rows are watched');
  if (!rows && tables.length > 0)
    throw errors.validation('tables', 'is only for row events (row.inserted, row.updated, row.deleted)');
}

function checkSecret(value: unknown): string {
  if (typeof value !== 'string' || !SECRET.test(value))
    throw errors.validation('secret', 'must be whsec_ followed by the base64 of 24 to 64 random bytes');
  const bytes = Buffer.from(value.slice(6), 'base64').length;
  if (bytes < 24 || bytes > 64)
    throw errors.validation('secret', 'must be whsec_ followed by the base64 of 24 to 64 random bytes');
  return value;
}

function checkEnabled(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'boolean') throw errors.validation('enabled', 'must be true or false');
  return value;
}

export type SubscriptionInput = {
  url?: unknown;
  events?: unknown;
  tables?: unknown;
  description?: unknown;
  enabled?: unknown;
  secret?: unknown;
};

export type EventSubscriptionService = ReturnType<typeof createEventSubscriptionService>;

/**
 * Creates the subscription service. `changed` tells the data API (through the router) that the project's row-event
 * tables changed, after the commit (the broadcast `hooks.changed` sent in the transaction tells every instance).
 */
export function createEventSubscriptionService(deps: {
  sql: Sql;
  box: SecretBox;
  allowPrivate: boolean;
  changed: (projectId: string) => Promise<void>;
}) {
  const { sql, box } = deps;
  const notFound = (id: unknown) => errors.notFound('event subscription', String(id).slice(0, 100));

  /** In the transaction of a change: the platform events the project's enabled subscriptions want, and the hooks broadcast. */
  const afterChange = async (tx: Sql, projectId: string) => {
    const rows = await tx.rows<{ e: string }>(
      'select distinct unnest(events) as e from event_subscriptions where project_id = ? and enabled',
      [projectId],
    );
    const wanted = new Set(rows.map((r) => r.e));
    const types = (Object.entries(PLATFORM_EVENT_OF) as [EventType, EventTypeName][])
      .filter(([, e]) => wanted.has(e))
      .map(([t]) => t);
    await setEventInterest({ execute: async (q, p) => await tx.run(q, p) }, INTEREST_CONSUMER, projectId, types);
    await announceHooksChanged(tx, projectId);
  };

  const service = {
    /** Creates a subscription; its answer carries the signing secret (the only time besides a rotation). */
    async create(projectId: string, input: SubscriptionInput): Promise<EventSubscription> {
      const url = checkUrl(input.url, deps.allowPrivate);
      const events = checkEvents(input.events);
      const tables = checkTables(input.tables);
      checkCombination(events, tables);
      const description = optionalText('description', input.description, 1000);
      const enabled = checkEnabled(input.enabled);
      const secret =
        input.secret === undefined || input.secret === null ? newSigningSecret() : checkSecret(input.secret);
      const id = crypto.randomUUID();
      const now = new Date();
      await sql.tx(async (tx) => {
        // A plain count: concurrent creates may pass it by a few; the limit only bounds abuse.
        const [count] = await tx.rows<{ n: number }>(
          'select count(*)::int as n from event_subscriptions where project_id = ?',
          [projectId],
        );
        if ((count?.n ?? 0) >= MAX_SUBSCRIPTIONS)
          throw errors.conflict(`A project may have at most ${MAX_SUBSCRIPTIONS} event subscriptions`, {
            limit: MAX_SUBSCRIPTIONS,
          });
        await tx.run(
          `insert into event_subscriptions (id, project_id, url, events, tables, description, enabled, secret_sealed, created_at, updated_at)
           values (?, ?, ?, ?::text[], ?::text[], ?, ?, ?, ?, ?)`,
          [
            id,
            projectId,
            url,
            `{${events.join(',')}}`,
            `{${tables.join(',')}}`,
            description,
            enabled,
            box.encrypt(secret),
            now,
            now,
          ],
        );
        await afterChange(tx, projectId);
      });
      await deps.changed(projectId);
      return { ...(await service.get(projectId, id)), secret };
    },

    async list(projectId: string): Promise<EventSubscription[]> {
      return (
        await sql.rows('select * from event_subscriptions where project_id = ? order by created_at, id', [projectId])
      ).map(toSubscription);
    },

    async get(projectId: string, id: unknown): Promise<EventSubscription> {
      if (!isUuid(id)) throw notFound(id);
      const [r] = await sql.rows('select * from event_subscriptions where id = ? and project_id = ?', [id, projectId]);
      if (!r) throw notFound(id);
      return toSubscription(r);
    },

    /** Changes what is given (the secret only through `rotateSecret`). */
    async update(projectId: string, id: unknown, input: SubscriptionInput): Promise<EventSubscription> {
      const before = await service.get(projectId, id);
      if (input.secret !== undefined && input.secret !== null)
        throw errors.validation('secret', 'cannot be changed here: rotate it (POST .../rotate-secret)');
      const url = input.url === undefined || input.url === null ? before.url : checkUrl(input.url, deps.allowPrivate);
      const events = input.events === undefined || input.events === null ? before.events : checkEvents(input.events);
      const tables =
        input.tables === undefined || input.tables === null
          ? events.some((e) => e.startsWith('row.'))
            ? before.tables
            : []
          : checkTables(input.tables);
      checkCombination(events, tables);
      const description =
        input.description === undefined || input.description === null
          ? before.description
          : optionalText('description', input.description, 1000);
      const enabled =
        input.enabled === undefined || input.enabled === null ? before.enabled : checkEnabled(input.enabled);
      await sql.tx(async (tx) => {
        await tx.run(
          'update event_subscriptions set url = ?, events = ?::text[], tables = ?::text[], description = ?, enabled = ?, updated_at = ? where id = ? and project_id = ?',
          [
            url,
            `{${events.join(',')}}`,
            `{${tables.join(',')}}`,
            description,
            enabled,
            new Date(),
            before.id,
            projectId,
          ],
        );
        await afterChange(tx, projectId);
      });
      await deps.changed(projectId);
      return await service.get(projectId, before.id);
    },

    /** Deletes a subscription with its delivery log (deliveries not yet made are dropped). */
    async remove(projectId: string, id: unknown): Promise<void> {
      if (typeof id !== 'string' || id === '')
        throw errors.validation('id', 'is required (the subscription id, as ?id=, in the path or in the body)');
      if (!isUuid(id)) throw notFound(id);
      await sql.tx(async (tx) => {
        const n = await tx.run('delete from event_subscriptions where id = ? and project_id = ?', [id, projectId]);
        if (n === 0) throw notFound(id);
        await afterChange(tx, projectId);
      });
      await deps.changed(projectId);
    },

    /** A new signing secret (answered once); deliveries from now on are signed with it. */
    async rotateSecret(projectId: string, id: unknown, input: { secret?: unknown } = {}): Promise<EventSubscription> {
      const sub = await service.get(projectId, id);
      const secret =
        input.secret === undefined || input.secret === null ? newSigningSecret() : checkSecret(input.secret);
      await sql.run(
        'update event_subscriptions set secret_sealed = ?, updated_at = ? where id = ? and project_id = ?',
        [box.encrypt(secret), new Date(), sub.id, projectId],
      );
      return { ...(await service.get(projectId, sub.id)), secret };
    },

    /** The data API's question, answered with the hooks' (`_hookTriggers`): tables watched by enabled row-event subscriptions. */
    async rowTriggers(projectId: string): Promise<HookTrigger[]> {
      if (!isUuid(projectId)) return [];
      const rows = await sql.rows<{ table_name: string; events: string[] }>(
        `select t as table_name, array_agg(distinct e order by e) as events
         from event_subscriptions, unnest(tables) t, unnest(events) e where project_id = ? and enabled and e like 'row.%' group by t`,
        [projectId],
      );
      return rows.map((r) => ({
        table: r.table_name,
        timing: 'after',
        events: r.events
          .map((e) => HOOK_EVENT_OF[e]!)
          .filter(Boolean)
          .sort(),
      }));
    },

    /** The enabled subscriptions of the project that want `type` (for row events: on `table`), with their ids only. */
    async matching(projectId: string, type: string, table?: string): Promise<string[]> {
      const rows = await sql.rows<{ id: string }>(
        `select id from event_subscriptions where project_id = ? and enabled and ? = any(events) ${table === undefined ? '' : 'and ? = any(tables)'} order by created_at, id`,
        table === undefined ? [projectId, type] : [projectId, type, table],
      );
      return rows.map((r) => r.id);
    },
  };
  return service;
}
