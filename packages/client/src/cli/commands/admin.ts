// `tessera admin plans|tenants|projects|servers|audit|keys ...`: the operator's commands over the admin API. They take the
// operator key from --operator-key or TESSERA_OPERATOR_KEY, never from the tenant's saved credentials (an operator
// key is not a tenant session, and is not written to disk by the CLI).
import {
  createOperatorClient,
  isPlanLimitKey,
  PLAN_LIMITS,
  storageUsageOf,
  databaseUsageOf,
  functionUsageOf,
  type OperatorAdmin,
  type OperatorPlan,
  type OperatorPlanLimits,
  type OperatorProject,
  type OperatorTenant,
  type ProjectServer,
  type ServerState,
  SERVER_STATES,
} from '../../operator.ts';
import { arg, confirm, flag, type Command } from '../command.ts';
import type { Ctx } from '../context.ts';
import { CliError, EXIT, table } from '../output.ts';
import { drainServer, moves, moveProject, MOVE_USAGE } from './admin-moves.ts';

const USAGE = [
  'admin plans list',
  'admin plans show <id>',
  'admin plans create <id> --name NAME [--description TEXT] [--price CENTS|none] [--limit key=value]...',
  'admin plans update <id> [--name NAME] [--description TEXT] [--price CENTS|none] [--limit key=value]...',
  'admin plans delete <id> [--yes]',
  'admin plans default [<id>]',
  'admin tenants list [--search TEXT] [--first N]',
  'admin tenants show <id>',
  'admin tenants plan <id> <plan>',
  'admin tenants suspend <id> [--reason TEXT] [--yes]',
  'admin tenants resume <id>',
  'admin projects list [--tenant ID] [--search TEXT] [--first N]',
  'admin projects show <id>',
  'admin projects suspend <id> [--reason TEXT] [--yes]',
  'admin projects resume <id>',
  'admin servers list',
  'admin servers show <id>',
  'admin servers add <id> --database-url URL [--weight N] [--state active|draining|read-only]',
  'admin servers set <id> [--state active|draining|read-only] [--weight N] [--database-url URL]',
  'admin servers remove <id> [--yes]',
  ...MOVE_USAGE,
  'admin audit [--action ACTION] [--target ID] [--first N]',
  'admin keys list',
  'admin keys create <name>',
  'admin keys revoke <id> [--yes]',
];

export const admin: Command = {
  name: 'admin',
  summary:
    "The install's operator: plans, tenants, projects, project servers, audit, operator keys (needs TESSERA_OPERATOR_KEY)",
  usage: USAGE,
  async run(ctx, args) {
    const area = args[0];
    const rest = args.slice(1);
    if (area === 'audit') return await audit(ctx, operator(ctx));
    const run = area === undefined ? undefined : AREAS[area];
    if (!run)
      throw new CliError(`Unknown: admin ${area ?? ''}\nUsage:\n${USAGE.map((u) => `  tessera ${u}`).join('\n')}`);
    await run(ctx, operator(ctx), rest);
  },
};

/** The admin API with the operator key (flag, then environment). */
function operator(ctx: Ctx): OperatorAdmin {
  const key = flag(ctx, 'operator-key') ?? ctx.env.TESSERA_OPERATOR_KEY;
  if (!key) throw new CliError('No operator key: set TESSERA_OPERATOR_KEY or pass --operator-key top_...', EXIT.AUTH);
  return createOperatorClient({ url: ctx.url(), operatorKey: key }).admin;
}

type Area = (ctx: Ctx, api: OperatorAdmin, args: string[]) => Promise<void>;

const AREAS: Record<string, Area> = {
  async plans(ctx, api, args) {
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const plans = await api.plans.list();
      ctx.out.result(plans, () =>
        table(
          plans.map((p) => ({
            id: p.id,
            name: p.name,
            default: p.default ? '*' : '',
            tenants: p.tenant_count,
            price: price(p.price_cents_per_month ?? null),
            projects: limitText('max_projects', p.limits.max_projects),
            requests_per_min: limitText('max_requests_per_minute', p.limits.max_requests_per_minute),
            storage: limitText('max_storage_bytes', p.limits.max_storage_bytes),
          })),
          ['id', 'name', 'default', 'tenants', 'price', 'projects', 'requests_per_min', 'storage'],
        ),
      );
    } else if (sub === 'show') {
      const id = arg(args, 1, 'id');
      const plan = (await api.plans.list()).find((p) => p.id === id);
      if (!plan) throw new CliError(`No plan ${id} (tessera admin plans list)`, EXIT.NOT_FOUND);
      ctx.out.result(plan, () => planText(plan));
    } else if (sub === 'create') {
      const name = flag(ctx, 'name');
      if (!name) throw new CliError('Missing --name NAME');
      const description = flag(ctx, 'description');
      const p = priceFlag(ctx);
      const plan = await api.plans.create({
        id: arg(args, 1, 'id'),
        name,
        ...(description !== undefined ? { description } : {}),
        ...(p !== undefined ? { price_cents_per_month: p } : {}),
        limits: limitFlags(ctx),
      });
      ctx.out.result(plan, () => `Created plan ${plan.id}\n${planText(plan)}`);
    } else if (sub === 'update') {
      const id = arg(args, 1, 'id');
      const change: Record<string, unknown> = {};
      const name = flag(ctx, 'name');
      if (name !== undefined) change.name = name;
      const description = flag(ctx, 'description');
      if (description !== undefined) change.description = description;
      const p = priceFlag(ctx);
      if (p !== undefined) change.price_cents_per_month = p;
      const limits = limitFlags(ctx);
      if (Object.keys(limits).length > 0) change.limits = limits;
      if (Object.keys(change).length === 0)
        throw new CliError('Nothing to change: give --limit key=value, --price, --name or --description');
      const plan = await api.plans.update(id, change);
      ctx.out.result(plan, () => `Updated plan ${plan.id}\n${planText(plan)}`);
    } else if (sub === 'delete') {
      const id = arg(args, 1, 'id');
      await confirm(ctx, `Delete plan ${id}`);
      await api.plans.remove(id);
      ctx.out.result({ deleted: id }, `Deleted plan ${id}`);
    } else if (sub === 'default') {
      const id = args[1];
      const settings = id ? await api.settings.setDefaultPlan(id) : await api.settings.get();
      ctx.out.result(
        settings,
        id
          ? `New tenants now start on ${settings.default_plan}`
          : `${settings.default_plan} (set by ${settings.default_plan_source === 'operator' ? 'an operator' : 'TESSERA_DEFAULT_PLAN'})`,
      );
    } else throw new CliError(`Unknown: admin plans ${sub}`);
  },

  async tenants(ctx, api, args) {
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const page = await api.tenants.list({
        search: flag(ctx, 'search'),
        first: firstFlag(ctx),
        after: flag(ctx, 'after'),
      });
      ctx.out.result(page, () => withCursor(table(page.tenants.map(tenantRow), TENANT_COLUMNS), page.next_cursor));
    } else if (sub === 'show') {
      const t = await api.tenants.get(arg(args, 1, 'id'));
      ctx.out.result(t, () => props(tenantRow(t)));
    } else if (sub === 'plan') {
      const t = await api.tenants.setPlan(arg(args, 1, 'id'), arg(args, 2, 'plan'));
      ctx.out.result(t, `Tenant ${t.email} is now on ${t.plan.name} (${t.plan.id})`);
    } else if (sub === 'suspend') {
      const id = arg(args, 1, 'id');
      await confirm(ctx, `Suspend tenant ${id} (its sign-in and every call to its projects are refused; data kept)`);
      const t = await api.tenants.suspend(id, flag(ctx, 'reason'));
      ctx.out.result(t, `Suspended tenant ${t.email}`);
    } else if (sub === 'resume') {
      const t = await api.tenants.resume(arg(args, 1, 'id'));
      ctx.out.result(t, `Resumed tenant ${t.email}`);
    } else throw new CliError(`Unknown: admin tenants ${sub}`);
  },

  async projects(ctx, api, args) {
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const page = await api.projects.list({
        search: flag(ctx, 'search'),
        tenant_id: flag(ctx, 'tenant'),
        first: firstFlag(ctx),
        after: flag(ctx, 'after'),
      });
      ctx.out.result(page, () => withCursor(table(page.projects.map(projectRow), PROJECT_COLUMNS), page.next_cursor));
    } else if (sub === 'show') {
      const p = await api.projects.get(arg(args, 1, 'id'));
      ctx.out.result(p, () => props(projectRow(p)));
    } else if (sub === 'suspend') {
      const id = arg(args, 1, 'id');
      await confirm(ctx, `Suspend project ${id} (every call for it is refused; data kept)`);
      const p = await api.projects.suspend(id, flag(ctx, 'reason'));
      ctx.out.result(p, `Suspended project ${p.name} (${p.id})`);
    } else if (sub === 'resume') {
      const p = await api.projects.resume(arg(args, 1, 'id'));
      ctx.out.result(p, `Resumed project ${p.name} (${p.id})`);
    } else if (sub === 'move') await moveProject(ctx, api, args);
    else throw new CliError(`Unknown: admin projects ${sub}`);
  },

  // Online moves of project databases (admin-moves.ts).
  moves,
  async servers(ctx, api, args) {
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const servers = await api.servers.list();
      ctx.out.result(servers, () => table(servers.map(serverRow), SERVER_COLUMNS));
    } else if (sub === 'show') {
      const s = await api.servers.get(arg(args, 1, 'id'));
      ctx.out.result(s, () => props({ ...serverRow(s), url: s.url, max_connections: s.health.max_connections ?? '' }));
    } else if (sub === 'add') {
      // --url is Tessera's own address (every command's): the server's is --database-url.
      const url = flag(ctx, 'database-url');
      if (!url) throw new CliError('Missing --database-url postgres://user:password@host:port/postgres');
      const weight = weightFlag(ctx);
      const state = stateFlag(ctx);
      const s = await api.servers.add({
        id: arg(args, 1, 'id'),
        url,
        ...(weight !== undefined ? { weight } : {}),
        ...(state !== undefined ? { state } : {}),
      });
      ctx.out.result(s, () => `Registered project server ${s.id} (${s.url})\n${props(serverRow(s))}`);
    } else if (sub === 'set') {
      const id = arg(args, 1, 'id');
      const weight = weightFlag(ctx);
      const state = stateFlag(ctx);
      const url = flag(ctx, 'database-url');
      if (weight === undefined && state === undefined && url === undefined)
        throw new CliError('Nothing to change: give --state, --weight or --database-url');
      const s = await api.servers.update(id, {
        ...(weight !== undefined ? { weight } : {}),
        ...(state !== undefined ? { state } : {}),
        ...(url !== undefined ? { url } : {}),
      });
      ctx.out.result(s, () => `Updated project server ${s.id}\n${props(serverRow(s))}`);
    } else if (sub === 'remove') {
      const id = arg(args, 1, 'id');
      await confirm(ctx, `Remove project server ${id} (only a server holding no project can be removed)`);
      await api.servers.remove(id);
      ctx.out.result({ removed: id }, `Removed project server ${id}`);
    } else if (sub === 'drain') await drainServer(ctx, api, args);
    else throw new CliError(`Unknown: admin servers ${sub}`);
  },

  async keys(ctx, api, args) {
    const sub = args[0] ?? 'list';
    if (sub === 'list') {
      const keys = await api.operatorKeys.list();
      ctx.out.result(keys, () =>
        table(
          keys.map((k) => ({ ...k, revoked_at: k.revoked_at ?? '' })),
          ['id', 'name', 'key_prefix', 'created_by', 'created_at', 'last_used_at', 'revoked_at'],
        ),
      );
    } else if (sub === 'create') {
      const k = await api.operatorKeys.create(arg(args, 1, 'name'));
      ctx.out.result(
        k,
        `Created operator key ${k.name} (${k.id})\n  key: ${k.key}\nIt is shown this once: keep it safe.`,
      );
    } else if (sub === 'revoke') {
      const id = arg(args, 1, 'id');
      await confirm(ctx, `Revoke operator key ${id} (it stops working at once)`);
      await api.operatorKeys.revoke(id);
      ctx.out.result({ revoked: id }, `Revoked operator key ${id}`);
    } else throw new CliError(`Unknown: admin keys ${sub}`);
  },
};

async function audit(ctx: Ctx, api: OperatorAdmin): Promise<void> {
  const page = await api.audit.list({
    action: flag(ctx, 'action'),
    target_id: flag(ctx, 'target'),
    first: firstFlag(ctx),
    after: flag(ctx, 'after'),
  });
  ctx.out.result(page, () =>
    withCursor(
      table(
        page.entries.map((e) => ({ ...e, target: `${e.target_kind}${e.target_id ? ` ${e.target_id}` : ''}` })),
        ['at', 'operator', 'action', 'target', 'details'],
      ),
      page.next_cursor,
    ),
  );
}

// A tenant's usage is all its projects' together.
const TENANT_COLUMNS = [
  'id',
  'email',
  'name',
  'plan',
  'projects',
  'storage',
  'database',
  'functions',
  'suspended',
  'created_at',
];
const tenantRow = (t: OperatorTenant) => ({
  id: t.id,
  email: t.email,
  name: t.name ?? '',
  plan: t.plan.id,
  projects: t.project_count,
  storage: storageText(t),
  database: databaseText(t),
  functions: functionsText(t),
  suspended: suspension(t.suspended_at ?? null, t.suspended_reason ?? null),
  created_at: t.created_at,
});

const PROJECT_COLUMNS = [
  'id',
  'name',
  'tenant',
  'plan',
  'server',
  'storage',
  'database',
  'functions',
  'suspended',
  'created_at',
];
const projectRow = (p: OperatorProject) => ({
  id: p.id,
  name: p.name,
  tenant: p.tenant?.email ?? '',
  plan: p.plan?.id ?? '',
  server: p.server ?? '',
  storage: storageText(p),
  database: databaseText(p),
  functions: functionsText(p),
  suspended: suspension(p.suspended_at ?? null, p.suspended_reason ?? null),
  created_at: p.created_at,
});

const SERVER_COLUMNS = ['id', 'state', 'weight', 'projects', 'health', 'connections', 'databases', 'host'];
const serverRow = (s: ProjectServer) => ({
  id: s.id,
  state: s.state,
  weight: s.weight,
  projects: s.projects,
  health: s.health.reachable ? `up (PostgreSQL ${s.health.version})` : `DOWN: ${s.health.error ?? ''}`,
  connections: s.health.reachable
    ? `${s.health.project_connections}/${s.health.connections} of ${s.health.max_connections}`
    : '',
  databases:
    s.health.database_bytes === null || s.health.database_bytes === undefined ? '' : bytes(s.health.database_bytes),
  host: `${s.host}:${s.port}`,
});

/** --weight N: a whole number 0-1000. */
function weightFlag(ctx: Ctx): number | undefined {
  const raw = flag(ctx, 'weight');
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new CliError(`--weight takes a whole number from 0 to 1000 (got "${raw}")`);
  return Number(raw);
}

/** --state active|draining|read-only. */
function stateFlag(ctx: Ctx): ServerState | undefined {
  const raw = flag(ctx, 'state');
  if (raw === undefined) return undefined;
  if (!(SERVER_STATES as readonly string[]).includes(raw))
    throw new CliError(`--state takes one of ${SERVER_STATES.join(', ')} (got "${raw}")`);
  return raw as ServerState;
}

function suspension(at: string | null, reason: string | null): string {
  if (!at) return '';
  return reason ? `since ${at}: ${reason}` : `since ${at}`;
}

function storageText(p: OperatorProject | OperatorTenant): string {
  const s = storageUsageOf(p);
  if (!s) return '';
  const pending = s.pending_objects ? ` (+${s.pending_objects} pending, ${bytes(s.pending_bytes)})` : '';
  return `${bytes(s.bytes)} in ${s.objects} files${pending}`;
}

function databaseText(p: OperatorProject | OperatorTenant): string {
  const d = databaseUsageOf(p);
  if (!d) return '';
  // A tenant's databases on a server that could not be reached are left out of its sums: say so.
  const unmeasured = 'unmeasured' in d && d.unmeasured ? ` (${d.unmeasured} not measured)` : '';
  return `${d.rows} rows, ${bytes(d.bytes)}${unmeasured}`;
}

function functionsText(p: OperatorProject | OperatorTenant): string {
  const f = functionUsageOf(p);
  return f ? `${f.runs_this_month} runs/month, ${f.running_now} running, ${f.cron_jobs} cron` : '';
}

function withCursor(text: string, cursor: string | null): string {
  return cursor ? `${text}\n(more: --after ${cursor})` : text;
}

function props(row: Record<string, unknown>, indent = ''): string {
  const width = Math.max(...Object.keys(row).map((k) => k.length));
  return Object.entries(row)
    .map(
      ([k, v]) =>
        `${indent}${`${k}:`.padEnd(width + 2)}${v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
    )
    .join('\n');
}

/** A plan for people: every limit by name, "unlimited" for none, the price only when it has one. */
function planText(plan: OperatorPlan): string {
  const lines = [
    `id:          ${plan.id}${plan.default ? ' (default for new tenants)' : ''}`,
    `name:        ${plan.name}`,
    `description: ${plan.description}`,
    `tenants:     ${plan.tenant_count}`,
  ];
  if (plan.price_cents_per_month !== null && plan.price_cents_per_month !== undefined)
    lines.push(`price:       ${price(plan.price_cents_per_month)} a month`);
  lines.push('limits:');
  const width = Math.max(...PLAN_LIMITS.map((l) => l.key.length));
  for (const l of PLAN_LIMITS) lines.push(`  ${l.key.padEnd(width)}  ${limitText(l.key, plan.limits[l.key])}`);
  return lines.join('\n');
}

function price(cents: number | null | undefined): string {
  return cents === null || cents === undefined ? '' : `$${(cents / 100).toFixed(2)}`;
}

function limitText(key: keyof OperatorPlanLimits, value: number | null | undefined): string {
  if (value === null || value === undefined) return 'unlimited';
  const unit = PLAN_LIMITS.find((l) => l.key === key)?.unit;
  if (unit === 'bytes') return bytes(value);
  if (unit === 'seconds') return `${value} s`;
  return String(value);
}

function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1 && v % 1024 === 0) {
    v /= 1024;
    i++;
  }
  return `${v} ${units[i]}`;
}

const SIZE = /^(\d+)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)?$/i;
const FACTOR: Record<string, number> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KIB: 1024,
  MIB: 1024 ** 2,
  GIB: 1024 ** 3,
  TIB: 1024 ** 4,
};

/** The --limit key=value flags: a whole number (bytes may say 500MiB, 1GB), or none/unlimited for no limit. */
function limitFlags(ctx: Ctx): Partial<OperatorPlanLimits> {
  const given = ctx.flags.limit;
  const list = given === undefined ? [] : Array.isArray(given) ? given : [String(given)];
  const limits: Partial<OperatorPlanLimits> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    if (eq < 1) throw new CliError(`--limit takes key=value (got "${item}")`);
    const key = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    if (!isPlanLimitKey(key))
      throw new CliError(`Unknown limit "${key}": the limits are ${PLAN_LIMITS.map((l) => l.key).join(', ')}`);
    if (/^(none|null|unlimited)$/i.test(raw)) {
      limits[key] = null;
      continue;
    }
    const unit = PLAN_LIMITS.find((l) => l.key === key)!.unit;
    if (key === 'database_cpu_seconds_per_minute' && /^\d+(\.\d+)?$/.test(raw)) {
      limits[key] = Number(raw);
      continue;
    }
    const m = SIZE.exec(raw);
    if (!m || (m[2] && unit !== 'bytes'))
      throw new CliError(
        `--limit ${key}: "${raw}" is not ${unit === 'bytes' ? 'a size (a whole number of bytes, or e.g. 500MiB, 1GB)' : 'a whole number'}, or none for no limit`,
      );
    const value = Number(m[1]) * FACTOR[(m[2] ?? 'B').toUpperCase()]!;
    if (!Number.isSafeInteger(value)) throw new CliError(`--limit ${key}: ${raw} is too large`);
    limits[key] = value;
  }
  return limits;
}

/** --price CENTS (a whole number of cents), or none to show no price. */
function priceFlag(ctx: Ctx): number | null | undefined {
  const raw = flag(ctx, 'price');
  if (raw === undefined) return undefined;
  if (/^(none|null)$/i.test(raw)) return null;
  if (!/^\d+$/.test(raw)) throw new CliError(`--price takes a whole number of cents, or none (got "${raw}")`);
  return Number(raw);
}

function firstFlag(ctx: Ctx): number | undefined {
  const raw = flag(ctx, 'first');
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new CliError(`--first takes a whole number (got "${raw}")`);
  return Number(raw);
}
