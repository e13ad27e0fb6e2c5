// The project database's size against its plan, one line above the tables: "12,345 of 100,000 rows · 8.0 MB of
// 500.0 MB" (GET /v1/usage). Past either limit the line says writes are refused and how to get back under.
import { useQuery } from '@tanstack/react-query';
import { useProjectCtx } from '../lib/project-context.ts';
import { bytes } from '../lib/format.ts';

/** The usage line; nothing while it loads or when it cannot be read (the tables show either way). */
export function DatabaseUsageLine() {
  const { api, project } = useProjectCtx();
  const usage = useQuery({ queryKey: ['database-usage', project.id], queryFn: () => api.data.usage() });
  if (!usage.data) return null;
  const u = { ...usage.data, max_rows: usage.data.max_rows ?? null, max_bytes: usage.data.max_bytes ?? null };
  const rows = `${u.rows.toLocaleString()}${u.max_rows === null ? '' : ` of ${u.max_rows.toLocaleString()}`} rows`;
  const size = `${bytes(u.bytes)}${u.max_bytes === null ? '' : ` of ${bytes(u.max_bytes)}`}`;
  const over = (u.max_rows !== null && u.rows >= u.max_rows) || (u.max_bytes !== null && u.bytes >= u.max_bytes);
  return (
    <p className={over ? 'warning' : 'muted'} data-testid="database-usage">
      Database usage: {rows} · {size}
      {over && (
        <> — the plan&apos;s limit is reached: writes are refused until rows are deleted or the operator raises it.</>
      )}
    </p>
  );
}
