// Small formatting helpers shared by the pages.

/** Bytes as B, KB, MB, GB (1024-based). */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** A timestamp in the reader's locale (or in a given IANA time zone). */
export function when(iso: string | null | undefined, timeZone?: string): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  // dateStyle/timeStyle cannot be combined with timeZoneName: spell the fields out when a zone is named.
  const opts: Intl.DateTimeFormatOptions = timeZone
    ? {
        timeZone,
        timeZoneName: 'short',
        year: 'numeric',
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }
    : { dateStyle: 'medium', timeStyle: 'medium' };
  return new Intl.DateTimeFormat(undefined, opts).format(d);
}

/** Any JSON value as indented text. */
export function json(v: unknown): string {
  if (v === undefined) return '';
  return JSON.stringify(v, null, 2);
}

/** A cell of the table browser as text. */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A SQL identifier, double-quoted. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A plan limit for people: "unlimited" when there is none (null), else bytes, seconds or a count. */
export function limitValue(unit: 'count' | 'bytes' | 'seconds', n: number | null | undefined): string {
  if (n === null || n === undefined || n < 0) return 'unlimited';
  if (unit === 'bytes') return bytes(n);
  if (unit === 'seconds') return `${n.toLocaleString()} s`;
  return n.toLocaleString();
}

/** A monthly price in cents as dollars; empty when the operator set none. */
export function price(cents: number | null | undefined): string {
  return cents === null || cents === undefined ? '' : `$${(cents / 100).toFixed(2)}`;
}
