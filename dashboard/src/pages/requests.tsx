// A project's request log (/p/<id>/requests): its recent requests, newest first, filtered by status class, route text
// and credential kind (kept in the address), a page at a time. Read with the tenant's token (the project's keys may not read it).
import { useState } from 'react';
import { useLocation, useSearch } from 'wouter';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { LoggedRequest } from '@tessera/client';
import { platform } from '../lib/session.ts';
import { useProjectCtx } from '../lib/project-context.ts';
import { when } from '../lib/format.ts';
import {
  Badge,
  Button,
  CopyButton,
  DataTable,
  Empty,
  PageHeader,
  RowForm,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { CursorPager, ListSection, useCursors } from '../ui/data.tsx';

const STATUS = [
  { value: '', label: 'Any status' },
  { value: '2xx', label: '2xx success' },
  { value: '3xx', label: '3xx redirect' },
  { value: '4xx', label: '4xx client error' },
  { value: '5xx', label: '5xx server error' },
];
const CREDENTIALS = [
  { value: '', label: 'Any credential' },
  { value: 'secret_key', label: 'Secret key' },
  { value: 'publishable_key', label: 'Publishable key' },
  { value: 'client_token', label: 'Client token' },
  { value: 'user_token', label: 'End-user token' },
  { value: 'tenant_token', label: 'Tenant token' },
  { value: 'anonymous', label: 'Anonymous' },
];
const CREDENTIAL_LABEL = Object.fromEntries(CREDENTIALS.map((c) => [c.value, c.label]));
const PAGE = 50;

type Filter = { status: string; route: string; credential: string };

const toneOf = (status: number) => (status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'good');

/** The filter in the address (`?status=4xx&route=/storage&credential=secret_key`), so a filtered view can be shared. */
function filterOf(search: string): Filter {
  const q = new URLSearchParams(search);
  return { status: q.get('status') ?? '', route: q.get('route') ?? '', credential: q.get('credential') ?? '' };
}

export default function Requests() {
  const search = useSearch();
  // A new filter (a submitted form, the browser's back button) is a new view: its form and its pages start afresh.
  return <RequestLog key={search} filter={filterOf(search)} />;
}

function RequestLog({ filter }: { filter: Filter }) {
  const { project } = useProjectCtx();
  const [location, navigate] = useLocation();
  const [draft, setDraft] = useState<Filter>(filter);
  const pages = useCursors();
  const query = useQuery({
    queryKey: ['project', project.id, 'requests', filter, pages.after],
    queryFn: () =>
      platform.tenant.projects.requests(project.id, {
        first: PAGE,
        after: pages.after,
        status: filter.status || undefined,
        route: filter.route.trim() || undefined,
        credential: filter.credential || undefined,
      }),
    placeholderData: keepPreviousData,
  });
  const apply = () => {
    const q = new URLSearchParams();
    if (draft.status) q.set('status', draft.status);
    if (draft.route.trim()) q.set('route', draft.route.trim());
    if (draft.credential) q.set('credential', draft.credential);
    navigate(q.size ? `${location}?${q}` : location);
  };
  return (
    <>
      <PageHeader
        title="Requests"
        description={`The newest requests to ${project.name}: route, status, latency and the kind of credential. Bodies, keys and tokens are never kept.`}
      >
        <Button onClick={() => void query.refetch()} busy={query.isFetching}>
          Refresh
        </Button>
      </PageHeader>
      <ListSection
        title="Recent requests"
        intro={
          <RowForm submit="Filter" onSubmit={apply} aria-label="Filter requests">
            <SelectField
              label="Status"
              options={STATUS}
              value={draft.status}
              onChange={(e) => setDraft({ ...draft, status: e.target.value })}
            />
            <TextField
              label="Route contains"
              value={draft.route}
              maxLength={200}
              placeholder="/storage"
              hint="Part of the route template, e.g. /storage or :id."
              onChange={(e) => setDraft({ ...draft, route: e.target.value })}
            />
            <SelectField
              label="Credential"
              options={CREDENTIALS}
              value={draft.credential}
              onChange={(e) => setDraft({ ...draft, credential: e.target.value })}
            />
          </RowForm>
        }
        query={{ ...query, data: query.data?.requests }}
        loading="Loading requests"
        failed="Could not read the request log"
        empty={
          <Empty title={`No requests ${filter.status || filter.route || filter.credential ? 'match' : 'yet'}`}>
            Requests show here about a second after the project answers them.
          </Empty>
        }
      >
        {(rows: LoggedRequest[]) => (
          <>
            <DataTable label="Requests" columns={['Time', 'Request', 'Status', 'Latency', 'Credential', 'Request id']}>
              {rows.map((r) => (
                <tr key={r.request_id + r.at}>
                  <td className="nowrap">{when(r.at)}</td>
                  <td>
                    <code>{r.method}</code> <span className="route">{r.route}</span>
                  </td>
                  <td>
                    <Badge tone={toneOf(r.status)}>{r.status}</Badge>
                  </td>
                  <td className="num">{r.duration_ms.toFixed(1)} ms</td>
                  <td>{CREDENTIAL_LABEL[r.credential] ?? r.credential}</td>
                  <td>
                    <code className="request-id">{r.request_id}</code>{' '}
                    <CopyButton value={r.request_id} label={`Copy request id ${r.request_id}`} />
                  </td>
                </tr>
              ))}
            </DataTable>
            <CursorPager pages={pages} next={query.data?.next_cursor} label="Request pages" showPage />
          </>
        )}
      </ListSection>
    </>
  );
}
