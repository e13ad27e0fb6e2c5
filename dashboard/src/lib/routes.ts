// Addresses of the app (under /dashboard): which project a path is in, and the same page in another project.

/** The project of the current address, if any. */
export function projectOf(location: string): { id: string; rest: string } | undefined {
  const m = /^\/p\/([^/]+)(\/.*)?$/.exec(location);
  return m ? { id: decodeURIComponent(m[1]!), rest: m[2] ?? '' } : undefined;
}

// Second segments that name a tab (kept when switching project); any other names one item (dropped).
const TABS: Record<string, string[]> = {
  settings: ['general', 'keys', 'oidc', 'cors', 'plan'],
  database: ['tables', 'sql', 'policies'],
  storage: ['files', 'policies', 'usage'],
  functions: ['list', 'executions', 'hooks', 'webhooks', 'cron', 'email', 'stats'],
  auth: [],
  requests: [],
  branding: [],
};

/** Where the same page is in another project: the area and its tab stay, one item's page goes up to its list. */
export function samePageIn(rest: string, projectId: string): string {
  const [area, tab] = rest.split('/').filter(Boolean);
  const kept = area && area in TABS ? [area, ...(tab && TABS[area]!.includes(tab) ? [tab] : [])] : [];
  return `/p/${encodeURIComponent(projectId)}${kept.length ? `/${kept.join('/')}` : ''}`;
}
