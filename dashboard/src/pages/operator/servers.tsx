// The operator's project servers: where project databases live, each with its state, weight, projects and live health
// (reachable, version, connections, bytes); register one (its URL checked by the install and never shown again: the
// table shows it without its password), change its state or weight, remove one holding no project (SERVER_IN_USE
// shown otherwise).
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { SERVER_STATES, type ProjectServer, type ServerState } from '@tessera/client';
import { operatorApi } from '../../lib/operator-session.ts';
import { bytes, when } from '../../lib/format.ts';
import {
  Badge,
  Button,
  ConfirmButton,
  DataTable,
  ErrorBox,
  FormSection,
  Section,
  SelectField,
  TextField,
} from '../../ui/index.tsx';
import { QueryView, useAction } from '../../ui/data.tsx';

export const SERVERS_KEY = ['operator', 'servers'];
const PROJECTS_KEY = ['operator', 'projects'];

/** Reachable or not, and what it runs. */
function Health({ s }: { s: ProjectServer }) {
  if (!s.health.reachable)
    return (
      <>
        <Badge tone="bad">unreachable</Badge> <span className="muted">{s.health.error}</span>
      </>
    );
  return (
    <>
      <Badge tone="good">up</Badge> <span className="muted">PostgreSQL {s.health.version}</span>
    </>
  );
}

/** State and weight of one server, changed in its row. */
function ServerControls({ s, busy, onChange }: { s: ProjectServer; busy: boolean; onChange: (c: Change) => void }) {
  const [weight, setWeight] = useState(String(s.weight));
  return (
    <div className="row">
      <SelectField
        label={`State of ${s.id}`}
        value={s.state}
        disabled={busy}
        options={SERVER_STATES}
        onChange={(e) => onChange({ id: s.id, state: e.target.value as ServerState })}
      />
      <TextField
        label={`Weight of ${s.id}`}
        type="number"
        min={0}
        max={1000}
        inputMode="numeric"
        value={weight}
        onChange={(e) => setWeight(e.target.value)}
      />
      <Button
        className="btn-small"
        busy={busy}
        disabled={weight === String(s.weight) || weight.trim() === ''}
        onClick={() => onChange({ id: s.id, weight: Number(weight) })}
        aria-label={`Save weight of ${s.id}`}
      >
        Save weight
      </Button>
    </div>
  );
}

type Change = { id: string; state?: ServerState; weight?: number };

export function Servers() {
  const servers = useQuery({ queryKey: SERVERS_KEY, queryFn: () => operatorApi().servers.list() });
  const [id, setId] = useState('');
  const [url, setUrl] = useState('');
  const [weight, setWeight] = useState('1');
  const [state, setState] = useState<ServerState>('active');
  const changed = [SERVERS_KEY, PROJECTS_KEY];
  const add = useAction({
    run: () => operatorApi().servers.add({ id: id.trim(), url: url.trim(), weight: Number(weight), state }),
    onSuccess: () => {
      setId('');
      setUrl('');
      setWeight('1');
      setState('active');
    },
    done: (s) => `Registered project server ${s.id}`,
    invalidate: changed,
  });
  const update = useAction({
    run: ({ id: target, ...change }: Change) => operatorApi().servers.update(target, change),
    done: (s) => `Server ${s.id}: ${s.state}, weight ${s.weight}`,
    invalidate: changed,
  });
  const remove = useAction({
    run: (target: string) => operatorApi().servers.remove(target),
    done: 'Removed the project server',
    invalidate: changed,
  });
  return (
    <>
      <Section title="Project servers">
        <p>
          Every project&apos;s database lives on one of these PostgreSQL servers. A new project goes to the{' '}
          <strong>active</strong> server with the fewest projects per unit of weight; <strong>draining</strong> and{' '}
          <strong>read-only</strong> servers, and weight 0, get none (their projects keep working). Health is measured
          when this page loads.
        </p>
        <QueryView query={servers} loading="Loading project servers" failed="Could not list the project servers">
          {(list) => (
            <DataTable
              wide
              label="Project servers"
              actions
              columns={['Server', 'State and weight', 'Projects', 'Health', 'Connections', 'Databases', 'Changed']}
            >
              {list.map((s) => (
                <tr key={s.id}>
                  <td>
                    <strong>{s.id}</strong> {s.built_in && <Badge>configured</Badge>}
                    <div className="muted">
                      <code>{s.url}</code>
                    </div>
                  </td>
                  <td>
                    <Badge tone={s.state === 'active' ? 'good' : 'warn'}>{s.state}</Badge>
                    <ServerControls
                      key={`${s.id}-${s.weight}`}
                      s={s}
                      busy={update.isPending}
                      onChange={(c) => update.mutate(c)}
                    />
                  </td>
                  <td className="num">{s.projects}</td>
                  <td>
                    <Health s={s} />
                  </td>
                  <td>
                    {s.health.reachable
                      ? `${s.health.project_connections} of projects · ${s.health.connections} in all · max ${s.health.max_connections}`
                      : ''}
                  </td>
                  <td>
                    {s.health.database_bytes === null || s.health.database_bytes === undefined
                      ? ''
                      : bytes(s.health.database_bytes)}
                  </td>
                  <td>{when(s.updated_at)}</td>
                  <td>
                    {!s.built_in && (
                      <ConfirmButton
                        className="btn-small"
                        variant="danger"
                        aria-label={`Remove server ${s.id}`}
                        busy={remove.isPending && remove.variables === s.id}
                        ask={{
                          title: `Remove server ${s.id}?`,
                          body: 'Only a server holding no project can be removed: drain it first.',
                          action: 'Remove server',
                          danger: true,
                        }}
                        onConfirm={() => remove.mutate(s.id)}
                      >
                        Remove
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </QueryView>
        <ErrorBox error={update.error ?? remove.error} title="The change was refused" />
      </Section>
      <FormSection
        title="Register a project server"
        intro={
          <p>
            The URL&apos;s role needs CREATEDB and CREATEROLE (or superuser) on the server; its database is the
            maintenance one (<code>postgres</code>). The install connects to check it now; the URL is kept sealed and
            shown again only without its password.
          </p>
        }
        submit="Register server"
        action={add}
        failed="The server was refused"
        onSubmit={() => add.mutate()}
      >
        <TextField label="Server id" required value={id} onChange={(e) => setId(e.target.value)} />
        <TextField
          label="Connection URL"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          placeholder="postgres://tessera:…@db2.internal:5432/postgres"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
        <TextField
          label="Weight"
          type="number"
          min={0}
          max={1000}
          value={weight}
          onChange={(e) => setWeight(e.target.value)}
        />
        <SelectField
          label="State"
          value={state}
          options={SERVER_STATES}
          onChange={(e) => setState(e.target.value as ServerState)}
        />
      </FormSection>
    </>
  );
}
