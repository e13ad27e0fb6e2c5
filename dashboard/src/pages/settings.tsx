// Project settings: general (ids, issuer, webhook base URL), API keys (secret and publishable), OIDC clients, CORS
// origins, plan and usage. Each tab is its own address.
import { useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { PLAN_LIMITS, type OidcClient } from '@tessera/client';
import { API_URL, platform } from '../lib/session.ts';
import { useProjectCtx } from '../lib/project-context.ts';
import { bytes, limitValue, price, when } from '../lib/format.ts';
import {
  Area,
  Badge,
  Button,
  Check,
  CheckGroup,
  ConfirmButton,
  CopyField,
  DataTable,
  DeleteButton,
  Empty,
  ErrorBox,
  Form,
  FormSection,
  Loading,
  Secret,
  Section,
  TextArea,
  TextField,
} from '../ui/index.tsx';
import { QueryView, useAction } from '../ui/data.tsx';

const lines = (s: string) =>
  s
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter(Boolean);

export default function Settings() {
  const { project, base } = useProjectCtx();
  return (
    <Area
      title={`${project.name}: settings`}
      label="Settings"
      base={`${base}/settings`}
      tabs={[
        { path: 'general', label: 'General', page: <General /> },
        { path: 'keys', label: 'API keys', page: <Keys /> },
        { path: 'oidc', label: 'OIDC clients', page: <OidcClients /> },
        { path: 'cors', label: 'CORS', page: <Cors /> },
        { path: 'plan', label: 'Plan and usage', page: <PlanUsage /> },
      ]}
    />
  );
}

function General() {
  const { project } = useProjectCtx();
  const discovery = useQuery({
    queryKey: ['discovery'],
    queryFn: () =>
      platform.http.request<{ issuer: string }>('GET', '/.well-known/openid-configuration', { anonymous: true }),
    staleTime: Infinity,
  });
  return (
    <Section title="General">
      <CopyField label="Project id" value={project.id} />
      <CopyField label="Base URL" value={API_URL} />
      {discovery.data ? (
        <CopyField label="Issuer" value={discovery.data.issuer} />
      ) : discovery.error ? (
        <ErrorBox error={discovery.error} />
      ) : (
        <Loading />
      )}
      <CopyField label="Webhook base URL" value={`${API_URL}/webhooks/${project.id}/`} />
      <p className="muted">
        Created {when(project.created_at)}. The webhook URL of a receiver is the base URL followed by its slug.
      </p>
    </Section>
  );
}

type KeyKind = 'secret' | 'publishable';

function Keys() {
  const { project } = useProjectCtx();
  const queries = useQueryClient();
  const regenerate = useAction({
    run: (kind: KeyKind) =>
      kind === 'secret'
        ? platform.tenant.projects.regenerateKey(project.id)
        : platform.tenant.projects.regeneratePublishableKey(project.id),
    onSuccess: (p) => queries.setQueryData(['project', project.id], p),
    done: (_, kind) => `New ${kind} key made; the old one no longer works`,
  });
  /** One key: what it is for, the key hidden until revealed, and the button that regenerates it (asking first). */
  const key = (kind: KeyKind, title: string, label: string, value: string, about: ReactNode) => (
    <Section
      title={title}
      actions={
        <ConfirmButton
          variant="danger"
          busy={regenerate.isPending && regenerate.variables === kind}
          ask={{
            title: `Regenerate the ${kind} key?`,
            body: (
              <p>The current {kind} key stops working at once: every app or server using it must get the new one.</p>
            ),
            action: 'Regenerate key',
          }}
          onConfirm={() => regenerate.mutate(kind)}
        >
          Regenerate {kind} key
        </ConfirmButton>
      }
    >
      <p className="muted">{about}</p>
      <Secret label={label} value={value} />
    </Section>
  );
  return (
    <>
      {key(
        'secret',
        'Secret API key',
        'Secret key',
        project.api_key,
        <>
          For servers only: full access to the project. Send it as <code>X-Api-Key</code>; never put it in a web page or
          an app.
        </>,
      )}
      {key(
        'publishable',
        'Publishable key',
        'Publishable key',
        project.publishable_key,
        'For browsers and apps: may only do what an anonymous visitor may (sign up, sign in, the data API under row level security, public files and functions).',
      )}
      <ErrorBox error={regenerate.error} title="Could not regenerate the key" />
    </>
  );
}

/** The grant types /token knows, and what each is for (the add and edit forms offer them). */
const GRANT_TYPES = ['authorization_code', 'refresh_token', 'password', 'client_credentials'] as const;
const DEFAULT_SCOPES = 'openid profile email phone offline_access role:*';
const MAX_CLIENTS = 20;
const words = (s: string) => s.split(/\s+/).filter(Boolean);

function OidcClients() {
  const { project } = useProjectCtx();
  const list = useQuery({ queryKey: ['oidc', project.id], queryFn: () => platform.tenant.clients.list(project.id) });
  // The secret of a client just made or rotated: shown in full, once, until the page is left.
  const [fresh, setFresh] = useState<{ clientId: string; secret: string } | null>(null);
  const [adding, setAdding] = useState(false);
  const count = list.data?.length ?? 0;
  return (
    <>
      <QueryView
        query={list}
        loading="Loading OIDC clients"
        empty={
          <Empty title="No OIDC clients">
            Every project is made with one; if it is gone, create the project again.
          </Empty>
        }
      >
        {(clients) =>
          clients.map((c) => (
            <OidcClientCard
              key={c.client_id}
              client={c}
              last={clients.length === 1}
              fresh={fresh?.clientId === c.client_id ? fresh.secret : undefined}
              onSecret={(secret) => setFresh({ clientId: c.client_id, secret })}
            />
          ))
        }
      </QueryView>
      {adding ? (
        <AddOidcClient
          onDone={(c) => {
            setAdding(false);
            if (!c.public) setFresh({ clientId: c.client_id, secret: c.client_secret });
          }}
          onCancel={() => setAdding(false)}
        />
      ) : (
        <div className="actions">
          <Button variant="primary" disabled={count >= MAX_CLIENTS} onClick={() => setAdding(true)}>
            Add client
          </Button>
          <span className="muted">
            {count} of {MAX_CLIENTS} clients. Add one per app: a web app, a mobile app, a server.
          </span>
        </div>
      )}
    </>
  );
}

/** The fields a client is made or edited with. */
function useClientForm(initial: {
  name: string;
  redirect_uris: string[];
  grant_types: string[];
  allowed_scopes: string[];
  public: boolean;
}) {
  const [name, setName] = useState(initial.name);
  const [redirects, setRedirects] = useState(initial.redirect_uris.join('\n'));
  const [grants, setGrants] = useState<string[]>(initial.grant_types);
  const [scopes, setScopes] = useState(initial.allowed_scopes.join(' '));
  const [isPublic, setPublic] = useState(initial.public);
  const body = () => ({
    name,
    redirect_uris: lines(redirects),
    grant_types: GRANT_TYPES.filter((g) => grants.includes(g)),
    allowed_scopes: words(scopes),
    public: isPublic,
  });
  const fields = (
    <>
      <TextField label="Client name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      <Check
        label="Public client (a browser or mobile app: no secret, PKCE required, no client_credentials)"
        checked={isPublic}
        onChange={(e) => {
          setPublic(e.target.checked);
          if (e.target.checked) setGrants((g) => g.filter((x) => x !== 'client_credentials'));
        }}
      />
      <CheckGroup legend="Grant types" options={GRANT_TYPES} value={grants} onChange={setGrants} />
      <TextArea
        label="Redirect URIs"
        hint="One absolute http(s) URL a line (authorization_code sends the browser back there)."
        value={redirects}
        onChange={(e) => setRedirects(e.target.value)}
      />
      <TextField
        label="Allowed scopes"
        hint="Separated by spaces: openid profile email, role:<name>, admin scopes."
        value={scopes}
        onChange={(e) => setScopes(e.target.value)}
      />
    </>
  );
  return { body, fields };
}

function AddOidcClient({ onDone, onCancel }: { onDone: (c: OidcClient) => void; onCancel: () => void }) {
  const { project } = useProjectCtx();
  const form = useClientForm({
    name: '',
    redirect_uris: [],
    grant_types: ['authorization_code', 'refresh_token'],
    allowed_scopes: words(DEFAULT_SCOPES),
    public: false,
  });
  const create = useAction({
    run: () => platform.tenant.clients.create(project.id, form.body()),
    done: (c) => `OIDC client ${c.name} added`,
    invalidate: [['oidc', project.id]],
    then: (c) => onDone(c),
  });
  return (
    <FormSection
      title="Add an OIDC client"
      submit="Add client"
      action={create}
      failed="Could not add the client"
      onSubmit={() => create.mutate()}
      after={
        <Button variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
      }
    >
      {form.fields}
    </FormSection>
  );
}

function OidcClientCard({
  client,
  last,
  fresh,
  onSecret,
}: {
  client: OidcClient;
  last: boolean;
  fresh?: string;
  onSecret: (secret: string) => void;
}) {
  const { project } = useProjectCtx();
  const form = useClientForm(client);
  const save = useAction({
    run: () => platform.tenant.clients.update(project.id, client.client_id, form.body()),
    done: 'OIDC client saved',
    invalidate: [['oidc', project.id]],
  });
  const rotate = useAction({
    run: () => platform.tenant.clients.rotateSecret(project.id, client.client_id),
    onSuccess: (c) => onSecret(c.client_secret),
    done: 'New client secret made; the old one no longer works',
    invalidate: [['oidc', project.id]],
  });
  const remove = useAction({
    run: () => platform.tenant.clients.remove(project.id, client.client_id),
    done: `OIDC client ${client.name} deleted`,
    invalidate: [['oidc', project.id]],
  });
  return (
    <Section
      title={client.name}
      actions={
        <>
          {client.default && <Badge>Default</Badge>}
          <Badge tone={client.public ? 'warn' : 'good'}>{client.public ? 'Public (PKCE)' : 'Confidential'}</Badge>
          {!last && (
            <DeleteButton
              what={`client ${client.name}`}
              busy={remove.isPending}
              body={
                <p>
                  Its secret stops working at once, its users&apos; sessions end and the tokens issued to it are
                  refused. Apps using <code>{client.client_id}</code> can no longer sign anyone in.
                </p>
              }
              action="Delete client"
              onConfirm={() => remove.mutate()}
            />
          )}
        </>
      }
    >
      <CopyField label="Client id" value={client.client_id} />
      {client.public ? (
        <p className="muted">A public client has no secret.</p>
      ) : (
        <>
          {fresh && (
            <div className="notice" role="status">
              <p>
                <strong>New client secret.</strong> Copy it now and keep it on your server; afterwards it stays hidden
                here until revealed.
              </p>
              <CopyField label="New client secret" value={fresh} />
            </div>
          )}
          <Secret label="Client secret" value={client.client_secret} />
        </>
      )}
      {!client.public && (
        <div className="actions">
          <ConfirmButton
            variant="danger"
            busy={rotate.isPending}
            ask={{
              title: 'Rotate the client secret?',
              body: <p>The current secret stops working at once.</p>,
              action: 'Rotate secret',
            }}
            onConfirm={() => rotate.mutate()}
          >
            Rotate secret
          </ConfirmButton>
        </div>
      )}
      <Form onSubmit={() => save.mutate()}>
        {form.fields}
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save client
        </Button>
      </Form>
      <ErrorBox error={save.error ?? rotate.error ?? remove.error} />
      {last && <p className="muted">A project keeps at least one client: add another before deleting this one.</p>}
    </Section>
  );
}

function Cors() {
  const { project } = useProjectCtx();
  const cors = useQuery({ queryKey: ['cors', project.id], queryFn: () => platform.tenant.projects.cors(project.id) });
  return <QueryView query={cors}>{(c) => <CorsForm key={c.updated_at ?? 'none'} initial={c} />}</QueryView>;
}

function CorsForm({
  initial,
}: {
  initial: { allowed_origins: string[]; allow_credentials: boolean; max_age: number };
}) {
  const { project } = useProjectCtx();
  const [origins, setOrigins] = useState(initial.allowed_origins.join('\n'));
  const [credentials, setCredentials] = useState(initial.allow_credentials);
  const [maxAge, setMaxAge] = useState(String(initial.max_age));
  const save = useAction({
    run: () =>
      platform.tenant.projects.setCors(project.id, {
        allowed_origins: lines(origins),
        allow_credentials: credentials,
        max_age: Number(maxAge),
      }),
    done: 'CORS origins saved',
    invalidate: [['cors', project.id]],
  });
  return (
    <FormSection
      title="CORS origins"
      intro={
        <p className="muted">
          Web pages on these origins may call the project from a browser (with its publishable key or a user's token).
        </p>
      }
      submit="Save CORS rule"
      action={save}
      failed="Could not save the CORS rule"
      onSubmit={() => save.mutate()}
    >
      <TextArea
        label="Allowed origins"
        hint="One a line, e.g. https://app.example.com; * for any (no credentials then). Empty: no browser origin."
        value={origins}
        onChange={(e) => setOrigins(e.target.value)}
      />
      <Check
        label="Allow credentials (cookies) for exact origins"
        checked={credentials}
        onChange={(e) => setCredentials(e.target.checked)}
      />
      <TextField
        label="Preflight cache (seconds)"
        type="number"
        min={0}
        max={86400}
        value={maxAge}
        onChange={(e) => setMaxAge(e.target.value)}
      />
    </FormSection>
  );
}

function PlanUsage() {
  const { project, api } = useProjectCtx();
  const plans = useQuery({ queryKey: ['plans'], queryFn: () => platform.tenant.plans(), staleTime: Infinity });
  const storage = useQuery({ queryKey: ['storage-usage', project.id], queryFn: () => api.storage.usage() });
  const monthStart = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)).toISOString();
  const runs = useQuery({
    queryKey: ['stats-month', project.id],
    queryFn: () => api.functions.executions.stats({ since: monthStart }),
  });
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => platform.tenant.projects.list() });
  const plan = plans.data?.find((p) => p.id === project.plan?.id);
  const usage = storage.data;
  const totalRuns = runs.data?.functions.reduce((n, f) => n + f.total, 0);
  const limit = (n: number | null | undefined) =>
    n === undefined || n === null || n < 0 ? 'unlimited' : n.toLocaleString();
  return (
    <>
      <Section title="Plan">
        <QueryView query={plans}>
          {(list) => (
            <>
              <p>
                This project is on the <strong>{project.plan?.name ?? 'default'}</strong> plan
                {plan ? ` — ${plan.description.replace(/\.$/, '')}` : ''}.
              </p>
              {/* A limit per row and a plan per column (15 limits read down, not across); "unlimited" where the
                  operator set none; the price row only when some plan has a price. */}
              <DataTable
                label="Plans"
                wide
                columns={[
                  'Limit',
                  ...list.map((p) => ({
                    key: p.id,
                    label: (
                      <>
                        {p.name} {p.id === project.plan?.id && <Badge tone="good">current</Badge>}
                      </>
                    ),
                  })),
                ]}
              >
                {PLAN_LIMITS.map((l) => (
                  <tr key={l.key}>
                    <th scope="row">{l.label}</th>
                    {list.map((p) => (
                      <td key={p.id} className="num">
                        {limitValue(l.unit, p.limits[l.key])}
                      </td>
                    ))}
                  </tr>
                ))}
                {list.some((p) => (p.price_cents_per_month ?? null) !== null) && (
                  <tr>
                    <th scope="row">Price / month</th>
                    {list.map((p) => (
                      <td key={p.id} className="num">
                        {price(p.price_cents_per_month)}
                      </td>
                    ))}
                  </tr>
                )}
              </DataTable>
            </>
          )}
        </QueryView>
      </Section>
      <Section title="Usage">
        <dl className="props">
          <dt>Storage</dt>
          <dd>
            {storage.error ? (
              <ErrorBox error={storage.error} />
            ) : usage ? (
              `${bytes(usage.bytes)} in ${usage.objects} files${plan ? ` of ${limitValue('bytes', plan.limits.max_storage_bytes)}` : ''}`
            ) : (
              '…'
            )}
          </dd>
          <dt>Function runs this month</dt>
          <dd>
            {runs.error ? (
              <ErrorBox error={runs.error} />
            ) : totalRuns === undefined ? (
              '…'
            ) : (
              `${totalRuns.toLocaleString()}${plan ? ` of ${limit(plan.limits.max_function_invocations_per_month)}` : ''}`
            )}
          </dd>
          <dt>Projects</dt>
          <dd>
            {projects.data ? `${projects.data.length}${plan ? ` of ${limit(plan.limits.max_projects)}` : ''}` : '…'}
          </dd>
        </dl>
      </Section>
    </>
  );
}
