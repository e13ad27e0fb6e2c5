// Function secrets (`{{ secrets.NAME }}` in function templates): the names with when they were set, a form to add
// one, rotating a value (setting a new one) and deleting after asking. Values go one way: the API lists names only,
// so a value is never shown again once saved, and the fields are emptied when it is.
import { useState } from 'react';
import type { FunctionSecret } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { when } from '../lib/format.ts';
import { Button, DataTable, DeleteButton, Empty, RowForm, TextField } from '../ui/index.tsx';
import { ListResourceSections, useAction, useListResource } from '../ui/data.tsx';

export default function Secrets() {
  const { api, project } = useProjectCtx();
  const key = ['function-secrets', project.id];
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const secrets = useListResource({
    key,
    collection: {
      list: () => api.functions.secrets.list(),
      create: (s: { name: string; value: string }) => api.functions.secrets.set(s.name, s.value),
      remove: (n: string) => api.functions.secrets.unset(n),
    },
    input: () => ({ name: name.trim(), value }),
    onCreated: () => {
      setName('');
      setValue('');
    },
    created: 'Secret saved',
    deleted: 'Secret deleted',
  });
  const exists = (secrets.list.data ?? []).some((s) => s.name === name.trim());
  return (
    <ListResourceSections
      resource={secrets}
      title="Secrets"
      intro={
        <p className="muted">
          Values your functions read as <code>{'{{ secrets.NAME }}'}</code>, stored encrypted. A value is never shown
          again after it is saved: rotate it to set a new one.
        </p>
      }
      empty={<Empty title="No secrets">Add one below, e.g. the API key of a service your functions call.</Empty>}
      form={{ title: 'New secret', submit: 'Save secret', failed: 'Could not save the secret' }}
      onCreate={() => {
        if (!exists) secrets.create.mutate();
      }}
      fields={
        <div className="row">
          <TextField
            label="Secret name"
            required
            autoComplete="off"
            placeholder="STRIPE_KEY"
            hint="Letters, digits and _, not starting with a digit."
            error={exists ? 'A secret of this name exists: rotate it in the list instead.' : undefined}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <TextField
            label="Value"
            type="password"
            required
            autoComplete="new-password"
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        </div>
      }
    >
      {(list) => (
        <DataTable columns={['Name', 'Created', 'Last set', 'Rotate']} actions>
          {list.map((s) => (
            <SecretRow key={s.name} secret={s} onDelete={() => secrets.remove.mutate(s.name)} />
          ))}
        </DataTable>
      )}
    </ListResourceSections>
  );
}

/** One secret: its name and dates, a "Rotate" form that opens in place, and delete after asking. */
function SecretRow({ secret, onDelete }: { secret: FunctionSecret; onDelete: () => void }) {
  const { api, project } = useProjectCtx();
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState('');
  const rotate = useAction({
    run: () => api.functions.secrets.set(secret.name, value),
    onSuccess: () => {
      setValue('');
      setOpen(false);
    },
    done: `${secret.name} rotated`,
    invalidate: [['function-secrets', project.id]],
  });
  return (
    <tr>
      <td>
        <code>{secret.name}</code>
      </td>
      <td>{when(secret.created_at)}</td>
      <td>{when(secret.updated_at)}</td>
      <td>
        {open ? (
          <RowForm
            aria-label={`Rotate ${secret.name}`}
            submit="Save new value"
            busy={rotate.isPending}
            onSubmit={() => rotate.mutate()}
            also={
              <Button className="btn-small" onClick={() => setOpen(false)}>
                Cancel
              </Button>
            }
          >
            <TextField
              label={`New value of ${secret.name}`}
              type="password"
              required
              autoComplete="new-password"
              value={value}
              onChange={(e) => setValue(e.target.value)}
            />
          </RowForm>
        ) : (
          <Button className="btn-small" aria-label={`Rotate ${secret.name}`} onClick={() => setOpen(true)}>
            Rotate
          </Button>
        )}
        {rotate.error ? <p className="field-error">{(rotate.error as Error).message}</p> : null}
      </td>
      <td>
        <DeleteButton
          what={`secret ${secret.name}`}
          body={
            <p>
              Functions that read <code>{`{{ secrets.${secret.name} }}`}</code> get nothing from then on. This cannot be
              undone.
            </p>
          }
          onConfirm={onDelete}
        />
      </td>
    </tr>
  );
}
