// A project as the dashboard works on it: its record (with both keys, read by the owning tenant) and a client that
// acts for it with its secret key, as a server of the tenant's would. Everything goes through @tessera/client.
import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { createClient, type Project, type TesseraClient } from '@tessera/client';
import { API_URL, platform } from './session.ts';

const clients = new Map<string, TesseraClient>();

/** A client acting with the project's secret key (a new one when the key was regenerated). */
export function clientFor(project: Pick<Project, 'api_key'>): TesseraClient {
  let c = clients.get(project.api_key);
  if (!c) {
    c = createClient({ url: API_URL, key: project.api_key });
    clients.set(project.api_key, c);
  }
  return c;
}

export const projectKey = (id: string) => ['project', id] as const;

/** The project and its client, once loaded. */
export function useProject(id: string) {
  const q = useQuery({ queryKey: projectKey(id), queryFn: () => platform.tenant.projects.get(id) });
  const api = useMemo(() => (q.data ? clientFor(q.data) : undefined), [q.data]);
  return { ...q, project: q.data, api };
}
