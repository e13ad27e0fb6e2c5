// Project settings: general (ids, issuer, webhook base URL), API keys (secret and publishable), OIDC clients, CORS
// origins, plan and usage. Each tab is its own address.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Route, Switch } from 'wouter';
import type { OidcClient } from '@tessera/client';
import { API_URL, platform } from '../lib/session.ts';
import { useProjectCtx } from '../lib/project-context.ts';
import { bytes, when } from '../lib/format.ts';
import {
  Badge,
  Button,
  Check,
  CopyField,
  Empty,
  ErrorBox,
  Loading,
  PageHeader,
  Secret,
  Section,
  Tabs,
  TextArea,
  TextField,
  useConfirm,
  useToast,
} from '../ui/index.tsx';

const lines = (s: string) =>
  s
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter(Boolean);

export default function Settings() {
  const { project, base } = useProjectCtx();
  const b = `${base}/settings`;
  return (
    <>
      <PageHeader title={`${project.name}: settings`} />
      <Tabs
        label="Settings"
        tabs={[
          { href: `${b}/general`, label: 'General', also: [b] },
          { href: `${b}/keys`, label: 'API keys' },
          { href: `${b}/oidc`, label: 'OIDC clients' },
          { href: `${b}/cors`, label: 'CORS' },
          { href: `${b}/plan`, label: 'Plan and usage' },
        ]}
      />
      <Switch>
        <Route path={`${b}/keys`}>
          <Keys />
        </Route>
        <Route path={`${b}/oidc`}>
          <OidcClients />
        </Route>
        <Route path={`${b}/cors`}>
          <Cors />
        </Route>
        <Route path={`${b}/plan`}>
          <PlanUsage />
        </Route>
        <Route>
          <General />
        </Route>
      </Switch>
    </>
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

function Keys() {
  const { project } = useProjectCtx();
  const queries = useQueryClient();
  const confirm = useConfirm();
  const toast = useToast();
  const regenerate = useMutation({
    mutationFn: (kind: 'secret' | 'publishable') =>
      kind === 'secret'
        ? platform.tenant.projects.regenerateKey(project.id)
        : platform.tenant.projects.regeneratePublishableKey(project.id),
    onSuccess: (p, kind) => {
      queries.setQueryData(['project', project.id], p);
      toast(`New ${kind} key made; the old one no longer works`);
    },
  });
  const ask = async (kind: 'secret' | 'publishable') => {
    if (
      await confirm({
        title: `Regenerate the ${kind} key?`,
        body: <p>The current {kind} key stops working at once: every app or server using it must get the new one.</p>,
        action: 'Regenerate key',
      })
    )
      regenerate.mutate(kind);
  };
  return (
    <>
      <Section
        title="Secret API key"
        actions={
          <Button
            variant="danger"
            busy={regenerate.isPending && regenerate.variables === 'secret'}
            onClick={() => void ask('secret')}
          >
            Regenerate secret key
          </Button>
        }
      >
        <p className="muted">
          For servers only: full access to the project. Send it as <code>X-Api-Key</code>; never put it in a web page or
          an app.
        </p>
        <Secret label="Secret key" value={project.api_key} />
      </Section>
      <Section
        title="Publishable key"
        actions={
          <Button
            variant="danger"
            busy={regenerate.isPending && regenerate.variables === 'publishable'}
            onClick={() => void ask('publishable')}
          >
            Regenerate publishable key
          </Button>
        }
      >
        <p className="muted">
          For browsers and apps: may only do what an anonymous visitor may (sign up, sign in, the data API under row
          level security, public files and functions).
        </p>
        <Secret label="Publishable key" value={project.publishable_key} />
      </Section>
      <ErrorBox error={regenerate.error} title="Could not regenerate the key" />
    </>
  );
}

function OidcClients() {
  const { project } = useProjectCtx();
  const list = useQuery({ queryKey: ['oidc', project.id], queryFn: () => platform.tenant.clients.list(project.id) });
  if (list.isPending) return <Loading what="Loading OIDC clients" />;
  if (list.error) return <ErrorBox error={list.error} />;
  if (list.data.length === 0)
    return (
      <Empty title="No OIDC clients">Every project is made with one; if it is gone, create the project again.</Empty>
    );
  return (
    <>
      {list.data.map((c) => (
        <OidcClientCard key={c.client_id} client={c} />
      ))}
    </>
  );
}

function OidcClientCard({ client }: { client: OidcClient }) {
  const { project } = useProjectCtx();
  const queries = useQueryClient();
  const confirm = useConfirm();
  const toast = useToast();
  const [redirects, setRedirects] = useState(client.redirect_uris.join('\n'));
  const [scopes, setScopes] = useState(client.allowed_scopes.join(' '));
  const [isPublic, setPublic] = useState(client.public);
  const save = useMutation({
    mutationFn: () =>
      platform.tenant.clients.update(project.id, client.client_id, {
        redirect_uris: lines(redirects),
        allowed_scopes: scopes.split(/\s+/).filter(Boolean),
        public: isPublic,
      }),
    onSuccess: async () => {
      toast('OIDC client saved');
      await queries.invalidateQueries({ queryKey: ['oidc', project.id] });
    },
  });
  const rotate = useMutation({
    mutationFn: () => platform.tenant.clients.rotateSecret(project.id, client.client_id),
    onSuccess: async () => {
      toast('New client secret made; the old one no longer works');
      await queries.invalidateQueries({ queryKey: ['oidc', project.id] });
    },
  });
  return (
    <Section
      title={client.name}
      actions={<Badge tone={client.public ? 'warn' : 'good'}>{client.public ? 'Public (PKCE)' : 'Confidential'}</Badge>}
    >
      <CopyField label="Client id" value={client.client_id} />
      {client.client_secret ? (
        <Secret label="Client secret" value={client.client_secret} />
      ) : (
        <p className="muted">A public client has no secret.</p>
      )}
      <div className="actions">
        <Button
          variant="danger"
          busy={rotate.isPending}
          onClick={async () => {
            if (
              await confirm({
                title: 'Rotate the client secret?',
                body: <p>The current secret stops working at once.</p>,
                action: 'Rotate secret',
              })
            )
              rotate.mutate();
          }}
        >
          Rotate secret
        </Button>
      </div>
      <p className="muted">
        Grant types:{' '}
        {client.grant_types.map((g) => (
          <Badge key={g}>{g}</Badge>
        ))}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <TextArea
          label="Redirect URIs"
          hint="One absolute http(s) URL a line."
          value={redirects}
          onChange={(e) => setRedirects(e.target.value)}
        />
        <TextField
          label="Allowed scopes"
          hint="Separated by spaces: openid profile email, role:<name>, admin scopes."
          value={scopes}
          onChange={(e) => setScopes(e.target.value)}
        />
        <Check
          label="Public client (no secret, PKCE required)"
          checked={isPublic}
          onChange={(e) => setPublic(e.target.checked)}
        />
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save client
        </Button>
      </form>
      <ErrorBox error={save.error ?? rotate.error} />
    </Section>
  );
}

function Cors() {
  const { project } = useProjectCtx();
  const cors = useQuery({ queryKey: ['cors', project.id], queryFn: () => platform.tenant.projects.cors(project.id) });
  if (cors.isPending) return <Loading />;
  if (cors.error) return <ErrorBox error={cors.error} />;
  return <CorsForm key={cors.data.updated_at ?? 'none'} initial={cors.data} />;
}

function CorsForm({
  initial,
}: {
  initial: { allowed_origins: string[]; allow_credentials: boolean; max_age: number };
}) {
  const { project } = useProjectCtx();
  const queries = useQueryClient();
  const toast = useToast();
  const [origins, setOrigins] = useState(initial.allowed_origins.join('\n'));
  const [credentials, setCredentials] = useState(initial.allow_credentials);
  const [maxAge, setMaxAge] = useState(String(initial.max_age));
  const save = useMutation({
    mutationFn: () =>
      platform.tenant.projects.setCors(project.id, {
        allowed_origins: lines(origins),
        allow_credentials: credentials,
        max_age: Number(maxAge),
      }),
    onSuccess: async () => {
      toast('CORS origins saved');
      await queries.invalidateQueries({ queryKey: ['cors', project.id] });
    },
  });
  return (
    <Section title="CORS origins">
      <p className="muted">
        Web pages on these origins may call the project from a browser (with its publishable key or a user's token).
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
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
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save CORS rule
        </Button>
      </form>
      <ErrorBox error={save.error} title="Could not save the CORS rule" />
    </Section>
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
  const limit = (n: number | undefined) => (n === undefined || n === null || n < 0 ? 'unlimited' : n.toLocaleString());
  return (
    <>
      <Section title="Plan">
        {plans.error ? (
          <ErrorBox error={plans.error} />
        ) : !plans.data ? (
          <Loading />
        ) : (
          <>
            <p>
              This project is on the <strong>{project.plan?.name ?? 'default'}</strong> plan
              {plan ? ` — ${plan.description}` : ''}.
            </p>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Plan</th>
                    <th scope="col">Projects</th>
                    <th scope="col">Storage</th>
                    <th scope="col">Upload</th>
                    <th scope="col">Function runs / month</th>
                    <th scope="col">Requests / minute</th>
                    <th scope="col">Price / month</th>
                  </tr>
                </thead>
                <tbody>
                  {plans.data.map((p) => (
                    <tr key={p.id} aria-current={p.id === project.plan?.id ? 'true' : undefined}>
                      <td>
                        {p.name} {p.id === project.plan?.id && <Badge tone="good">current</Badge>}
                      </td>
                      <td className="num">{limit(p.limits.max_projects)}</td>
                      <td className="num">{bytes(p.limits.max_storage_bytes)}</td>
                      <td className="num">{bytes(p.limits.max_upload_bytes)}</td>
                      <td className="num">{limit(p.limits.max_function_invocations_per_month)}</td>
                      <td className="num">{limit(p.limits.max_requests_per_minute)}</td>
                      <td className="num">${(p.price_cents_per_month / 100).toFixed(2)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Section>
      <Section title="Usage">
        <dl className="props">
          <dt>Storage</dt>
          <dd>
            {storage.error ? (
              <ErrorBox error={storage.error} />
            ) : usage ? (
              `${bytes(usage.bytes)} in ${usage.objects} files${plan ? ` of ${bytes(plan.limits.max_storage_bytes)}` : ''}`
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
