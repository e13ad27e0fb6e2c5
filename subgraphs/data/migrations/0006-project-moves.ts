// Issue 29 item 3: online moves of a project's database between project servers. One row per move (asked by the
// operator, or by a drain): where it stands (queued, running, done, failed), its phase, the copy's mode and why, and
// what failed. At most one open move per project.
import { Migration } from '@mikro-orm/migrations';

export class DataProjectMovesMigration extends Migration {
  override name = '0006-data-project-moves';

  override up(): void {
    this.addSql(`create table if not exists data_moves (
      id uuid primary key,
      project_id uuid not null,
      from_server text not null,
      to_server text not null,
      state text not null default 'queued' check (state in ('queued', 'running', 'done', 'failed')),
      phase text,
      mode text,
      reason text,
      error_code text,
      error text,
      tables jsonb,
      drain_of text,
      attempts int not null default 0,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz not null default now()
    )`);
    this.addSql(
      `create unique index if not exists data_moves_one_open on data_moves (project_id) where state in ('queued', 'running')`,
    );
    this.addSql(
      'create index if not exists data_moves_drain on data_moves (drain_of, created_at) where drain_of is not null',
    );
  }

  override down(): void {
    this.addSql('drop table if exists data_moves');
  }
}
