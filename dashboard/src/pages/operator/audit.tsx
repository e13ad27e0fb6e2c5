// The audit of every operator action (who, what, target, when; filtered by action) and the operator keys (a new key
// is shown once, with a copy button; revoke stops a key at once).
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { NewOperatorKey } from '@tessera/client';
import { operatorApi } from '../../lib/operator-session.ts';
import { when } from '../../lib/format.ts';
import {
  Badge,
  ConfirmButton,
  CopyField,
  DataTable,
  ErrorBox,
  FormSection,
  RowForm,
  Section,
  TextField,
} from '../../ui/index.tsx';
import { CursorPager, QueryView, useAction, useCursors } from '../../ui/data.tsx';

const KEYS_KEY = ['operator', 'keys'];

export function Audit() {
  const [action, setAction] = useState('');
  const [text, setText] = useState('');
  const pages = useCursors();
  const audit = useQuery({
    queryKey: ['operator', 'audit', action, pages.after],
    queryFn: () => operatorApi().audit.list({ action: action || undefined, after: pages.after, first: 50 }),
  });
  return (
    <Section title="Audit">
      <p>Every change an operator made on this install, newest first.</p>
      <RowForm
        submit="Filter"
        aria-label="Filter the audit"
        onSubmit={() => {
          setAction(text.trim());
          pages.reset();
        }}
      >
        <TextField
          label="Action"
          hint="e.g. plan.update, tenant.suspend; empty: every action"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </RowForm>
      <QueryView
        query={audit}
        loading="Loading the audit"
        failed="Could not read the audit"
        empty={<p className="muted">No operator action yet.</p>}
        isEmpty={(p) => p.entries.length === 0}
      >
        {(page) => (
          <>
            <DataTable wide label="Audit" columns={['When', 'Who', 'What', 'Target', 'Details']}>
              {page.entries.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.at)}</td>
                  <td>{e.operator}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>
                    {e.target_kind} {e.target_id && <code>{e.target_id}</code>}
                  </td>
                  <td>
                    {e.details && Object.keys(e.details).length > 0 ? <code>{JSON.stringify(e.details)}</code> : ''}
                  </td>
                </tr>
              ))}
            </DataTable>
            <CursorPager pages={pages} next={page.next_cursor} label="Audit pages" />
          </>
        )}
      </QueryView>
    </Section>
  );
}

export function OperatorKeys() {
  const keys = useQuery({ queryKey: KEYS_KEY, queryFn: () => operatorApi().operatorKeys.list() });
  const [name, setName] = useState('');
  const [created, setCreated] = useState<NewOperatorKey | undefined>();
  const create = useAction({
    run: (n: string) => operatorApi().operatorKeys.create(n),
    onSuccess: (k) => {
      setCreated(k);
      setName('');
    },
    done: (k) => `Created operator key ${k.name}`,
    invalidate: [KEYS_KEY],
  });
  const revoke = useAction({
    run: (id: string) => operatorApi().operatorKeys.revoke(id),
    done: 'Revoked the operator key',
    invalidate: [KEYS_KEY],
  });
  return (
    <>
      <FormSection
        title="New operator key"
        intro={<p>An operator key opens this admin API only. It is shown once: copy it now.</p>}
        submit="Create key"
        action={create}
        failed="Could not create the key"
        onSubmit={() => create.mutate(name.trim())}
        className="row"
        after={
          created && (
            <div role="status">
              <p>
                <strong>Key {created.name}</strong> — shown this once:
              </p>
              <CopyField label="Operator key" value={created.key} />
            </div>
          )
        }
      >
        <TextField label="Key name" required value={name} onChange={(e) => setName(e.target.value)} />
      </FormSection>
      <Section title="Operator keys">
        <QueryView query={keys} loading="Loading keys" failed="Could not list the keys">
          {(list) => (
            <DataTable
              wide
              label="Operator keys"
              actions
              columns={['Name', 'Prefix', 'Created by', 'Created', 'Last used', 'Status']}
            >
              {list.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.key_prefix}</code>
                  </td>
                  <td>{k.created_by ?? ''}</td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.last_used_at ? when(k.last_used_at) : 'never'}</td>
                  <td>{k.revoked_at ? <Badge tone="bad">revoked</Badge> : <Badge tone="good">active</Badge>}</td>
                  <td>
                    {!k.revoked_at && (
                      <ConfirmButton
                        className="btn-small"
                        variant="danger"
                        aria-label={`Revoke key ${k.name}`}
                        busy={revoke.isPending && revoke.variables === k.id}
                        ask={{
                          title: `Revoke key ${k.name}?`,
                          body: 'It stops working at once everywhere. If it is the key you signed in with, you are signed out on your next step.',
                          action: 'Revoke key',
                          danger: true,
                        }}
                        onConfirm={() => revoke.mutate(k.id)}
                      >
                        Revoke
                      </ConfirmButton>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </QueryView>
        <ErrorBox error={revoke.error} title="Could not revoke the key" />
      </Section>
    </>
  );
}
