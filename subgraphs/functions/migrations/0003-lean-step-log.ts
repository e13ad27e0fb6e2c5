// A leaner step log: every run writes several step-log lines, so each line's cost counts. A line is
// identified by (execution_id, seq) — the order it is read in — instead of a sequence-numbered id with a
// second index, and the foreign key to function_executions goes (its check ran once per line): the
// statement that writes a run writes its lines only for the execution rows it wrote itself, and a
// project's removal deletes its lines explicitly.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsLeanStepLogMigration extends Migration {
  override name = '0003-functions-lean-step-log';

  override up(): void {
    // Lines are written once per execution and seq; should a duplicate ever exist, keep the first.
    this.addSql(`delete from function_execution_events a using function_execution_events b
      where a.execution_id = b.execution_id and a.seq = b.seq and a.id > b.id`);
    this.addSql(
      'alter table function_execution_events drop constraint if exists function_execution_events_execution_id_fkey',
    );
    this.addSql('alter table function_execution_events drop column id');
    this.addSql('drop index if exists function_execution_events_execution');
    this.addSql('alter table function_execution_events add primary key (execution_id, seq)');
  }
}
