// Outbound event subscriptions: URLs that get the project's events (row changes of chosen tables, sign-ups and
// sign-ins, storage objects, failed executions) signed the Standard Webhooks way. The list with enable/disable,
// rotating the signing secret (shown once), a test send and delete; the form that adds one (its secret shown once);
// and one subscription's delivery log with each delivery's status, attempts and response, and redelivery.
import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import type { EventDelivery, EventSubscription } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { json, when } from '../lib/format.ts';
import { listTables } from '../lib/tables.ts';
import {
  BackLink,
  Badge,
  Button,
  CheckGroup,
  ConfirmButton,
  CopyField,
  DataTable,
  DeleteButton,
  Empty,
  ErrorBox,
  Section,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { CursorPager, ListResourceSections, ListSection, QueryView, useAction, useCursors } from '../ui/data.tsx';

/** The events a subscription may ask for (the API's list). */
export const EVENT_TYPES = [
  'row.inserted',
  'row.updated',
  'row.deleted',
  'user.registered',
  'user.signed_in',
  'storage.object.created',
  'storage.object.deleted',
  'execution.failed',
] as const;
const DELIVERY_STATUSES = ['', 'pending', 'delivering', 'succeeded', 'dead'];

const keyOf = (projectId: string) => ['event-subscriptions', projectId];

/** A signing secret the API answered once (create or rotate): shown until dismissed, never fetched again. */
type Revealed = { id: string; url: string; secret: string };

export default function Events({ id }: { id?: string }) {
  return id ? <Deliveries id={id} /> : <Subscriptions />;
}

function Subscriptions() {
  const { api, project } = useProjectCtx();
  const key = keyOf(project.id);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [tables, setTables] = useState<string[]>([]);
  const [revealed, setRevealed] = useState<Revealed | null>(null);
  const rows = events.some((e) => e.startsWith('row.'));
  const tableList = useQuery({ queryKey: ['tables', project.id], queryFn: () => listTables(api), enabled: rows });
  const list = useQuery({ queryKey: key, queryFn: () => api.functions.eventSubscriptions.list() });
  const create = useAction({
    run: () =>
      api.functions.eventSubscriptions.create({
        url: url.trim(),
        events,
        ...(rows ? { tables } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
      }),
    onSuccess: (s) => {
      if (s.secret) setRevealed({ id: s.id, url: s.url, secret: s.secret });
      setUrl('');
      setDescription('');
      setEvents([]);
      setTables([]);
    },
    done: 'Subscription created',
    invalidate: [key],
  });
  const remove = useAction({
    run: (s: EventSubscription) => api.functions.eventSubscriptions.remove(s.id),
    done: 'Subscription deleted',
    invalidate: [key],
  });
  return (
    <>
      {revealed && <RevealedSecret revealed={revealed} onDone={() => setRevealed(null)} />}
      <ListResourceSections
        resource={{ list, create, remove }}
        title="Outbound event subscriptions"
        intro={
          <p className="muted">
            Each event is POSTed to the URL as <code>{'{type, timestamp, data}'}</code>, signed with the
            subscription&apos;s secret (<code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
            <code>webhook-signature</code>), and retried with backoff for up to a day.
          </p>
        }
        empty={
          <Empty title="No event subscriptions">Add one below to have your own service told when things happen.</Empty>
        }
        form={{ title: 'New subscription', submit: 'Create subscription', failed: 'Could not create the subscription' }}
        onCreate={() => create.mutate()}
        fields={
          <>
            <div className="row">
              <TextField
                label="Endpoint URL"
                type="url"
                required
                placeholder="https://example.com/webhooks/tessera"
                value={url}
                onChange={(e) => setUrl(e.target.value)}
              />
              <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} />
            </div>
            <CheckGroup legend="Events" options={EVENT_TYPES} value={events} onChange={setEvents} />
            {rows &&
              (tableList.error ? (
                <ErrorBox error={tableList.error} title="Could not read the project's tables" />
              ) : tableList.data && tableList.data.length === 0 ? (
                <p className="muted">Row events need a table: this project has none yet.</p>
              ) : (
                <CheckGroup
                  legend="Tables whose rows are watched"
                  options={(tableList.data ?? []).map((t) => t.name)}
                  value={tables}
                  onChange={setTables}
                />
              ))}
          </>
        }
      >
        {(subs) =>
          subs.map((s) => (
            <SubscriptionCard key={s.id} sub={s} onRevealed={setRevealed} onDelete={() => remove.mutate(s)} />
          ))
        }
      </ListResourceSections>
    </>
  );
}

/** The secret the API just answered, with the warning that it is not shown again. */
function RevealedSecret({ revealed, onDone }: { revealed: Revealed; onDone: () => void }) {
  return (
    <Section title="Signing secret" actions={<Button onClick={onDone}>Done, I have copied it</Button>}>
      <p role="status">
        The signing secret of <code>{revealed.url}</code>. Copy it now: it is not shown again (rotate it for a new one).
      </p>
      <CopyField label="Signing secret" value={revealed.secret} />
    </Section>
  );
}

function SubscriptionCard({
  sub,
  onRevealed,
  onDelete,
}: {
  sub: EventSubscription;
  onRevealed: (r: Revealed) => void;
  onDelete: () => void;
}) {
  const { api, base, project } = useProjectCtx();
  const key = keyOf(project.id);
  const toggle = useAction({
    run: () => api.functions.eventSubscriptions.update(sub.id, { enabled: !sub.enabled }),
    done: (s) => `${s.url} ${s.enabled ? 'enabled' : 'disabled'}`,
    invalidate: [key],
  });
  const rotate = useAction({
    run: () => api.functions.eventSubscriptions.rotateSecret(sub.id),
    onSuccess: (s) => {
      if (s.secret) onRevealed({ id: s.id, url: s.url, secret: s.secret });
    },
    done: 'Signing secret rotated',
    invalidate: [key],
  });
  const test = useAction({
    run: () => api.functions.eventSubscriptions.test(sub.id),
    done: 'Test event queued: follow it in the delivery log',
    invalidate: [['event-deliveries', project.id, sub.id]],
  });
  const log = `${base}/functions/events/${encodeURIComponent(sub.id)}`;
  return (
    <div className="card">
      <div className="card-head">
        <h3>
          <code>{sub.url}</code>
        </h3>
        <div className="actions">
          {sub.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="warn">disabled</Badge>}
          <Button className="btn-small" busy={toggle.isPending} onClick={() => toggle.mutate()}>
            {sub.enabled ? 'Disable' : 'Enable'}
          </Button>
          <Button className="btn-small" busy={test.isPending} onClick={() => test.mutate()} disabled={!sub.enabled}>
            Send test
          </Button>
          <ConfirmButton
            className="btn-small"
            busy={rotate.isPending}
            aria-label={`Rotate secret of ${sub.url}`}
            ask={{
              title: 'Rotate the signing secret?',
              body: <p>Deliveries are signed with the new secret at once: your endpoint must be given it.</p>,
              action: 'Rotate secret',
            }}
            onConfirm={() => rotate.mutate()}
          >
            Rotate secret
          </ConfirmButton>
          <DeleteButton
            what={`the subscription of ${sub.url}`}
            body={<p>Its delivery log goes with it, and deliveries not yet made are dropped.</p>}
            onConfirm={onDelete}
          />
        </div>
      </div>
      {sub.description && <p>{sub.description}</p>}
      <dl className="props">
        <dt>Events</dt>
        <dd>{sub.events.join(', ')}</dd>
        {sub.tables.length > 0 && (
          <>
            <dt>Tables</dt>
            <dd>{sub.tables.join(', ')}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{when(sub.created_at)}</dd>
      </dl>
      <p>
        <Link href={log}>Delivery log of {sub.url}</Link>
      </p>
      <ErrorBox error={toggle.error ?? rotate.error ?? test.error} />
    </div>
  );
}

/** A delivery's status: succeeded, dead, or pending/delivering with the last answer's code when there was one. */
function DeliveryStatus({ d }: { d: EventDelivery }) {
  const tone = d.status === 'succeeded' ? 'good' : d.status === 'dead' ? 'bad' : 'warn';
  return <Badge tone={tone}>{d.status}</Badge>;
}

function Deliveries({ id }: { id: string }) {
  const { api, base, project } = useProjectCtx();
  const [status, setStatus] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const pages = useCursors();
  const sub = useQuery({
    queryKey: [...keyOf(project.id), id],
    queryFn: () => api.functions.eventSubscriptions.get(id),
  });
  const key = ['event-deliveries', project.id, id];
  const list = useQuery({
    queryKey: [...key, status, pages.after],
    queryFn: () =>
      api.functions.eventSubscriptions.deliveries(id, { status: status || undefined, first: 25, after: pages.after }),
    placeholderData: keepPreviousData,
    refetchInterval: 2000,
  });
  const test = useAction({
    run: () => api.functions.eventSubscriptions.test(id),
    done: 'Test event queued',
    invalidate: [key],
  });
  const redeliver = useAction({
    run: (d: EventDelivery) => api.functions.eventSubscriptions.redeliver(id, d.id),
    done: 'Delivery queued again',
    invalidate: [key],
  });
  return (
    <QueryView
      query={sub}
      loading="Loading the subscription"
      failed="Could not load the subscription"
      back={<BackLink href={`${base}/functions/events`}>← Event subscriptions</BackLink>}
    >
      {(s) => (
        <ListSection
          title={`Deliveries to ${s.url}`}
          actions={
            <Button busy={test.isPending} onClick={() => test.mutate()} disabled={!s.enabled}>
              Send test
            </Button>
          }
          intro={
            <SelectField
              label="Status"
              value={status}
              onChange={(e) => {
                setStatus(e.target.value);
                pages.reset();
              }}
              options={DELIVERY_STATUSES.map((v) => ({ value: v, label: v || 'Any status' }))}
            />
          }
          query={list}
          loading="Loading deliveries"
          error={test.error ?? redeliver.error}
          isEmpty={(d) => d.deliveries.length === 0}
          empty={<Empty title="No deliveries">Events appear here as they are sent; “Send test” sends one now.</Empty>}
        >
          {(d) => (
            <>
              <DataTable
                label="Deliveries"
                columns={['Created', 'Event', 'Status', 'Attempts', 'Response', 'Latency', 'Details']}
                actions
              >
                {d.deliveries.map((x) => (
                  <DeliveryRow
                    key={x.id}
                    d={x}
                    subscriptionId={id}
                    open={open === x.id}
                    onToggle={() => setOpen(open === x.id ? null : x.id)}
                    onRedeliver={() => redeliver.mutate(x)}
                  />
                ))}
              </DataTable>
              <CursorPager pages={pages} next={d.next_cursor} label="Pages of deliveries" />
            </>
          )}
        </ListSection>
      )}
    </QueryView>
  );
}

function DeliveryRow({
  d,
  subscriptionId,
  open,
  onToggle,
  onRedeliver,
}: {
  d: EventDelivery;
  subscriptionId: string;
  open: boolean;
  onToggle: () => void;
  onRedeliver: () => void;
}) {
  const { api, project } = useProjectCtx();
  const detail = useQuery({
    queryKey: ['event-delivery', project.id, subscriptionId, d.id, d.attempts, d.status],
    queryFn: () => api.functions.eventSubscriptions.delivery(subscriptionId, d.id),
    enabled: open,
  });
  return (
    <>
      <tr>
        <td>{when(d.created_at)}</td>
        <td>
          <code>{d.event}</code>
        </td>
        <td>
          <DeliveryStatus d={d} />
        </td>
        <td className="num">{d.attempts}</td>
        <td>
          {d.last_status_code ? (
            <Badge tone={d.last_status_code < 300 ? 'good' : 'bad'}>{d.last_status_code}</Badge>
          ) : d.last_error ? (
            <span className="field-error">{d.last_error}</span>
          ) : (
            '—'
          )}
        </td>
        <td className="num">{d.last_latency_ms === null ? '—' : `${d.last_latency_ms} ms`}</td>
        <td>
          <Button className="btn-small" aria-expanded={open} onClick={onToggle}>
            {open ? 'Hide' : 'Show'} <span className="sr-only-label">delivery {d.id}</span>
          </Button>
        </td>
        <td>
          <Button
            className="btn-small"
            disabled={d.status === 'delivering'}
            aria-label={`Redeliver ${d.event} of ${when(d.created_at)}`}
            onClick={onRedeliver}
          >
            Redeliver
          </Button>
        </td>
      </tr>
      {open && (
        <tr className="detail-row">
          <td colSpan={8}>
            <QueryView query={detail} loading="Loading the delivery" failed="Could not load the delivery">
              {(x) => (
                <div className="stack" data-testid="delivery-detail">
                  <dl className="props">
                    <dt>webhook-id</dt>
                    <dd>
                      <code>{x.message_id}</code>
                    </dd>
                    <dt>Delivered</dt>
                    <dd>{when(x.delivered_at)}</dd>
                    <dt>Next attempt</dt>
                    <dd>{when(x.next_attempt_at)}</dd>
                  </dl>
                  <h4>Attempts</h4>
                  <ol aria-label="Attempts">
                    {x.attempt_log.map((a) => (
                      <li key={a.attempt}>
                        {when(a.at)} · {a.status_code ?? 'no answer'}
                        {a.latency_ms === null ? '' : ` · ${a.latency_ms} ms`}
                        {a.error ? ` · ${a.error}` : ''}
                        {a.response_excerpt ? <pre>{a.response_excerpt}</pre> : null}
                      </li>
                    ))}
                  </ol>
                  <h4>Payload</h4>
                  <pre>{json(x.payload)}</pre>
                </div>
              )}
            </QueryView>
          </td>
        </tr>
      )}
    </>
  );
}
