// `tessera admin projects move <id> --to SERVER [--wait]`, `tessera admin moves list|show` and
// `tessera admin servers drain <id> [--wait]`: online moves of project databases between project servers (issue 29).
import type { OperatorAdmin, ProjectMove } from '../../operator.ts';
import { arg, confirm, flag } from '../command.ts';
import type { Ctx } from '../context.ts';
import { CliError, EXIT, table } from '../output.ts';

export const MOVE_USAGE = [
  'admin projects move <id> --to SERVER [--wait] [--yes]',
  'admin moves list [--project ID] [--drain SERVER] [--first N]',
  'admin moves show <move-id>',
  'admin servers drain <id> [--wait] [--yes]',
];

const COLUMNS = ['id', 'project', 'from', 'to', 'state', 'phase', 'mode', 'error', 'created_at'];
const row = (m: ProjectMove) => ({
  id: m.id,
  project: m.project_id,
  from: m.from_server,
  to: m.to_server,
  state: m.state,
  phase: m.phase ?? '',
  mode: m.mode ?? '',
  error: m.error ?? '',
  created_at: m.created_at,
});

const ended = (m: ProjectMove): boolean => m.state === 'done' || m.state === 'failed';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Follows a move until it ends, printing each new phase on stderr. */
async function follow(ctx: Ctx, api: OperatorAdmin, move: ProjectMove): Promise<ProjectMove> {
  let last = '';
  let m = move;
  for (;;) {
    const now = `${m.state}${m.phase ? ` (${m.phase})` : ''}`;
    if (now !== last) ctx.out.note(`move ${m.id}: ${now}`);
    last = now;
    if (ended(m)) return m;
    await pause(500);
    m = await api.moves.get(m.id);
  }
}

/** What a move came to, for people. */
const outcome = (m: ProjectMove): string =>
  m.state === 'done'
    ? `Moved project ${m.project_id} from ${m.from_server} to ${m.to_server} (${m.mode}: ${m.reason})`
    : m.state === 'failed'
      ? `The move of project ${m.project_id} failed (${m.error_code}): ${m.error}; it stays on ${m.from_server}`
      : `Move ${m.id} of project ${m.project_id} to ${m.to_server}: ${m.state} (follow it: tessera admin moves show ${m.id})`;

/** `admin projects move <id> --to SERVER`. */
export async function moveProject(ctx: Ctx, api: OperatorAdmin, args: string[]): Promise<void> {
  const id = arg(args, 1, 'id');
  const to = flag(ctx, 'to');
  if (!to) throw new CliError('Missing --to SERVER (the id of an active project server)');
  await confirm(
    ctx,
    `Move the database of project ${id} to server ${to} (its writes are held for a moment at the switch)`,
  );
  let m = await api.moves.start(id, to);
  if (ctx.flags.wait) m = await follow(ctx, api, m);
  ctx.out.result(m, outcome(m));
  if (m.state === 'failed') throw new CliError(outcome(m), EXIT.API);
}

/** `admin moves list|show`. */
export async function moves(ctx: Ctx, api: OperatorAdmin, args: string[]): Promise<void> {
  const sub = args[0] ?? 'list';
  if (sub === 'list') {
    const first = flag(ctx, 'first');
    const list = await api.moves.list({
      project_id: flag(ctx, 'project'),
      drain_of: flag(ctx, 'drain'),
      first: first === undefined ? undefined : Number(first),
    });
    ctx.out.result(list, () => table(list.map(row), COLUMNS));
  } else if (sub === 'show') {
    const m = await api.moves.get(arg(args, 1, 'move-id'));
    ctx.out.result(m, () => `${outcome(m)}\n${table([row(m)], COLUMNS)}`);
  } else throw new CliError(`Unknown: admin moves ${sub}`);
}

/** `admin servers drain <id>`: marks it draining and moves its projects away; `--wait` follows until none is left. */
export async function drainServer(ctx: Ctx, api: OperatorAdmin, args: string[]): Promise<void> {
  const id = arg(args, 1, 'id');
  await confirm(ctx, `Drain server ${id} (no new project there; every project on it is moved to another server)`);
  const d = await api.moves.drain(id);
  if (!ctx.flags.wait) {
    ctx.out.result(d, `Draining ${d.server}: follow it with tessera admin moves list --drain ${d.server}`);
    return;
  }
  let seen = 0;
  for (;;) {
    await pause(1000);
    const list = await api.moves.list({ drain_of: id, first: 100 });
    const done = list.filter(ended);
    if (done.length !== seen) ctx.out.note(`drain ${id}: ${done.length} of ${list.length} moves ended`);
    seen = done.length;
    if (list.length > 0 && done.length === list.length) {
      const failed = list.filter((m) => m.state === 'failed');
      ctx.out.result({ drain: d, moves: list }, () => table(list.map(row), COLUMNS));
      if (failed.length > 0)
        throw new CliError(`${failed.length} project(s) could not be moved off ${id}: run the drain again`, EXIT.API);
      return;
    }
  }
}
