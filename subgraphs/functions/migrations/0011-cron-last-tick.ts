// The scheduled time of the last tick each cron job claimed (issue 29): a tick runs only if it is later than the
// last claimed one, so an instance taking the job over from one that died cannot run a tick twice, and the ticks
// between the last claimed one and the current one are known (run late, or recorded as missed).
import { Migration } from '@mikro-orm/migrations';

export class FunctionsCronLastTickMigration extends Migration {
  override name = '0011-functions-cron-last-tick';

  override up(): void {
    this.addSql('alter table cron_jobs add column if not exists last_tick_at timestamptz');
  }

  override down(): void {
    this.addSql('alter table cron_jobs drop column if exists last_tick_at');
  }
}
