// The step log becomes one JSON value on its execution's row (`step_log`: the lines in order, as the API answers
// them) instead of one row per line in `function_execution_events`. A synchronous run used to write its execution
// and then ~6 indexed rows, each a tuple, an index entry and WAL of its own; the log is written and read whole, never
// searched by line, so one value does the same work in one tuple (TOAST-compressed when it is large). Reading a log
// is one indexed row fetch by id and project (the old read looked up the execution, then its lines). Existing lines
// are moved over, then their table goes.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsStepLogColumnMigration extends Migration {
  override name = '0009-functions-step-log-column';

  override up(): void {
    this.addSql('alter table function_executions add column step_log jsonb');
    this.addSql(`update function_executions e set step_log = l.lines
      from (
        select execution_id, jsonb_agg(jsonb_build_object(
          'seq', seq, 'step', step, 'kind', kind, 'type', type, 'attempt', attempt, 'input', input,
          'output', output, 'error', error, 'durationMs', duration_ms, 'at', at) order by seq) as lines
        from function_execution_events group by execution_id
      ) l
      where l.execution_id = e.id`);
    this.addSql('drop table function_execution_events');
  }
}
