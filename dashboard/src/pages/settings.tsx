// Project settings: general (ids, issuer, webhook base URL), API keys (secret and publishable), OIDC clients, CORS
// origins, plan and usage. Each tab is its own address.
import { useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { OidcClient } from '@tessera/client';
import { API_URL, platform } from '../lib/session.ts';
import { useProjectCtx } from '../lib/project-context.ts';
import { bytes, when } from '../lib/format.ts';
import {
  Area,
  Badge,
  Button,
  Check,
  ConfirmButton,
  CopyField,
  DataTable,
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

function OidcClients() {
  const { project } = useProjectCtx();
  const list = useQuery({ queryKey: ['oidc', project.id], queryFn: () => platform.tenant.clients.list(project.id) });
  return (
    <QueryView
      query={list}
      loading="Loading OIDC clients"
      empty={
        <Empty title="No OIDC clients">Every project is made with one; if it is gone, create the project again.</Empty>
      }
    >
      {(clients) => clients.map((c) => <OidcClientCard key={c.client_id} client={c} />)}
    </QueryView>
  );
}

function OidcClientCard({ client }: { client: OidcClient }) {
  const { project } = useProjectCtx();
  const [redirects, setRedirects] = useState(client.redirect_uris.join('\n'));
  const [scopes, setScopes] = useState(client.allowed_scopes.join(' '));
  const [isPublic, setPublic] = useState(client.public);
  const save = useAction({
    run: () =>
      platform.tenant.clients.update(project.id, client.client_id, {
        redirect_uris: lines(redirects),
        allowed_scopes: scopes.split(/\s+/).filter(Boolean),
        public: isPublic,
      }),
    done: 'OIDC client saved',
    invalidate: [['oidc', project.id]],
  });
  const rotate = useAction({
    run: () => platform.tenant.clients.rotateSecret(project.id, client.client_id),
    done: 'New client secret made; the old one no longer works',
    invalidate: [['oidc', project.id]],
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
      <p className="muted">
        Grant types:{' '}
        {client.grant_types.map((g) => (
          <Badge key={g}>{g}</Badge>
        ))}
      </p>
      <Form onSubmit={() => save.mutate()}>
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
      </Form>
      <ErrorBox error={save.error ?? rotate.error} />
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
  const limit = (n: number | undefined) => (n === undefined || n === null || n < 0 ? 'unlimited' : n.toLocaleString());
  return (
    <>
      <Section title="Plan">
        <QueryView query={plans}>
          {(list) => (
            <>
              <p>
                This project is on the <strong>{project.plan?.name ?? 'default'}</strong> plan
                {plan ? ` — ${plan.description}` : ''}.
              </p>
              <DataTable
                columns={[
                  'Plan',
                  'Projects',
                  'Storage',
                  'Upload',
                  'Function runs / month',
                  'Requests / minute',
                  'Price / month',
                ]}
              >
                {list.map((p) => (
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
