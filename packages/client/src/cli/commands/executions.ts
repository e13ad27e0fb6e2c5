// `tessera executions list|show|tail`: function runs and their step logs.
import type { Execution, ExecutionEvent } from '../../index.ts';
import { arg, flag, type Command } from '../command.ts';
import type { Ctx } from '../context.ts';
import { CliError, table } from '../output.ts';

function stepLog(events: ExecutionEvent[]): string {
  return events
    .map(
      (e) =>
        `  #${e.seq} ${e.step} (${e.kind}) ${e.type}${e.duration_ms !== null && e.duration_ms !== undefined ? ` ${e.duration_ms} ms` : ''}${e.error ? `: ${JSON.stringify(e.error)}` : ''}`,
    )
    .join('\n');
}

function summary(x: Execution): string {
  return `${x.id} ${x.function} ${x.status} (${x.trigger}) ${x.created_at ?? ''}`.trim();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function tail(ctx: Ctx): Promise<void> {
  const fns = (await ctx.project()).functions;
  const interval = Number(flag(ctx, 'interval') ?? 1000);
  const limit = flag(ctx, 'count') === undefined ? Infinity : Number(flag(ctx, 'count'));
  const timeoutMs = flag(ctx, 'timeout') === undefined ? Infinity : Number(flag(ctx, 'timeout')) * 1000;
  if (!Number.isFinite(interval) || interval < 100) throw new CliError('--interval takes milliseconds, at least 100');
  const since = flag(ctx, 'since') ?? new Date().toISOString();
  const seen = new Set<string>();
  const started = Date.now();
  let stop = false;
  process.once('SIGINT', () => (stop = true));
  ctx.out.note(
    `Waiting for executions${flag(ctx, 'function') ? ` of ${flag(ctx, 'function')}` : ''} (Ctrl-C to stop)...`,
  );
  while (!stop && seen.size < limit && Date.now() - started < timeoutMs) {
    const page = await fns.executions.list({ function: flag(ctx, 'function'), since, first: 50 });
    // Finished runs only, oldest first: a running one is shown once it is over, with its whole log.
    const done = page.executions
      .filter((x) => !seen.has(x.id) && (x.status === 'succeeded' || x.status === 'failed'))
      .reverse();
    for (const x of done) {
      if (seen.size >= limit) break;
      seen.add(x.id);
      const events = await fns.executions.events(x.id);
      ctx.out.result({ ...x, events }, `${summary(x)}\n${stepLog(events)}`);
    }
    if (seen.size < limit) await sleep(interval);
  }
}

export const executions: Command = {
  name: 'executions',
  summary: 'Function runs: list, show one with its step log, follow new ones',
  usage: [
    'executions list [--function NAME] [--status queued|running|succeeded|failed] [--first N]',
    'executions show <id>',
    'executions tail [--function NAME] [--since ISO-TIME] [--interval MS] [--count N] [--timeout SECONDS]',
  ],
  async run(ctx, args) {
    const sub = args[0] ?? 'list';
    if (sub === 'tail') return await tail(ctx);
    const api = (await ctx.project()).functions.executions;
    if (sub === 'list') {
      const first = flag(ctx, 'first');
      const page = await api.list({
        function: flag(ctx, 'function'),
        status: flag(ctx, 'status'),
        first: first === undefined ? 20 : Number(first),
      });
      ctx.out.result(page.executions, () =>
        table(page.executions as unknown as Record<string, unknown>[], [
          'id',
          'function',
          'status',
          'trigger',
          'duration_ms',
          'created_at',
        ]),
      );
    } else if (sub === 'show') {
      const id = arg(args, 1, 'id');
      const [x, events] = await Promise.all([api.get(id), api.events(id)]);
      ctx.out.result(
        { ...x, events },
        () =>
          `${summary(x)}\ninput:  ${JSON.stringify(x.input)}\noutput: ${JSON.stringify(x.output)}${x.error ? `\nerror:  ${JSON.stringify(x.error)}` : ''}\nsteps:\n${stepLog(events)}`,
      );
    } else throw new CliError(`Unknown: executions ${sub}`);
  },
};
