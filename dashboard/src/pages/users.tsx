// The project's end-users (the admin API under the project's secret key): search and paging, and one user's detail
// with roles and app metadata, disable/enable, end sessions, reset MFA, send a password reset, delete.
import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Route, Switch, useLocation } from 'wouter';
import type { AdminUser } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { json, when } from '../lib/format.ts';
import {
  Badge,
  Button,
  Empty,
  ErrorBox,
  Loading,
  PageHeader,
  Section,
  TextArea,
  TextField,
  useConfirm,
  useToast,
} from '../ui/index.tsx';

const PAGE = 25;

export default function Users() {
  const { base } = useProjectCtx();
  return (
    <Switch>
      <Route path={`${base}/auth/users/:userId`}>{(p) => <UserDetail id={decodeURIComponent(p.userId)} />}</Route>
      <Route>
        <UserList />
      </Route>
    </Switch>
  );
}

function UserList() {
  const { api, project, base } = useProjectCtx();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  // Cursors of the pages seen so far: going back is going to the previous cursor.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  const list = useQuery({
    queryKey: ['users', project.id, applied, after],
    queryFn: () => api.admin.users.list({ search: applied || undefined, first: PAGE, after }),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="Authentication" description="The people who sign in to your project's apps." />
      <Section title="Users">
        <form
          role="search"
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            setApplied(search.trim());
            setCursors([undefined]);
          }}
        >
          <TextField
            label="Search by e-mail or name"
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <Button type="submit">Search</Button>
        </form>
        {list.isPending ? (
          <Loading what="Loading users" />
        ) : list.error ? (
          <ErrorBox error={list.error} />
        ) : list.data.users.length === 0 ? (
          applied ? (
            <Empty title="No user matches">Try another part of the e-mail address or name.</Empty>
          ) : (
            <Empty title="No users yet">
              Users appear here once they sign up through your app (POST /register with the publishable key, or the
              hosted sign-in page).
            </Empty>
          )
        ) : (
          <>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">E-mail</th>
                    <th scope="col">Verified</th>
                    <th scope="col">MFA</th>
                    <th scope="col">Roles</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.users.map((u) => (
                    <tr key={u.id}>
                      <td>
                        <Link href={`${base}/auth/users/${encodeURIComponent(u.id)}`}>{u.email}</Link>
                      </td>
                      <td>{u.email_verified ? <Badge tone="good">verified</Badge> : <Badge>unverified</Badge>}</td>
                      <td>{u.mfa_enabled ? <Badge tone="good">on</Badge> : <Badge>off</Badge>}</td>
                      <td>{(u.roles ?? []).join(', ') || '—'}</td>
                      <td>{u.disabled ? <Badge tone="bad">disabled</Badge> : <Badge tone="good">active</Badge>}</td>
                      <td>{when(u.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav className="actions" aria-label="Pages of users">
              <Button disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                Previous page
              </Button>
              <span className="muted">Page {cursors.length}</span>
              <Button
                disabled={!list.data.next_cursor}
                onClick={() => setCursors([...cursors, list.data.next_cursor ?? undefined])}
              >
                Next page
              </Button>
            </nav>
          </>
        )}
      </Section>
    </>
  );
}

function UserDetail({ id }: { id: string }) {
  const { api, project, base } = useProjectCtx();
  const queries = useQueryClient();
  const confirm = useConfirm();
  const toast = useToast();
  const [, navigate] = useLocation();
  const key = ['user', project.id, id];
  const user = useQuery({ queryKey: key, queryFn: () => api.admin.users.get(id) });
  const done = (message: string) => async (u?: AdminUser | number | void) => {
    toast(message);
    if (u && typeof u === 'object') queries.setQueryData(key, u);
    await queries.invalidateQueries({ queryKey: ['users', project.id] });
  };
  const disable = useMutation({
    mutationFn: () => api.admin.users.disable(id),
    onSuccess: done('User disabled: their sessions ended'),
  });
  const enable = useMutation({ mutationFn: () => api.admin.users.enable(id), onSuccess: done('User enabled') });
  const revoke = useMutation({
    mutationFn: () => api.admin.users.revokeSessions(id),
    onSuccess: (n) => toast(`${n} session(s) ended`),
  });
  const resetMfa = useMutation({ mutationFn: () => api.admin.users.resetMfa(id), onSuccess: done('MFA reset') });
  const reset = useMutation({
    mutationFn: (email: string) => api.auth.requestPasswordReset(email),
    onSuccess: () => toast('Password reset e-mail sent'),
  });
  const remove = useMutation({
    mutationFn: () => api.admin.users.remove(id),
    onSuccess: async () => {
      toast('User deleted');
      await queries.invalidateQueries({ queryKey: ['users', project.id] });
      navigate(`${base}/auth`);
    },
  });
  if (user.isPending) return <Loading what="Loading the user" />;
  if (user.error)
    return (
      <>
        <p>
          <Link href={`${base}/auth`}>Back to users</Link>
        </p>
        <ErrorBox error={user.error} title="Could not load the user" />
      </>
    );
  const u = user.data;
  const ask = async (title: string, body: string, action: string, run: () => void, typed?: string) => {
    if (await confirm({ title, body: <p>{body}</p>, action, typed })) run();
  };
  return (
    <>
      <p>
        <Link href={`${base}/auth`}>← All users</Link>
      </p>
      <PageHeader title={u.email}>
        <Button
          onClick={() =>
            void ask('Send a password reset e-mail?', `A reset link goes to ${u.email}.`, 'Send e-mail', () =>
              reset.mutate(u.email),
            )
          }
        >
          Send password reset
        </Button>
        <Button
          onClick={() =>
            void ask('End every session?', 'The user is signed out on every device.', 'End sessions', () =>
              revoke.mutate(),
            )
          }
        >
          End sessions
        </Button>
        {u.mfa_enabled && (
          <Button
            onClick={() =>
              void ask(
                'Reset MFA?',
                'The user can then sign in with the password alone and set up MFA again.',
                'Reset MFA',
                () => resetMfa.mutate(),
              )
            }
          >
            Reset MFA
          </Button>
        )}
        {u.disabled ? (
          <Button onClick={() => enable.mutate()} busy={enable.isPending}>
            Enable
          </Button>
        ) : (
          <Button
            variant="danger"
            onClick={() =>
              void ask('Disable this user?', 'They cannot sign in, and their sessions end now.', 'Disable user', () =>
                disable.mutate(),
              )
            }
          >
            Disable
          </Button>
        )}
        <Button
          variant="danger"
          onClick={() =>
            void ask(
              `Delete ${u.email}?`,
              'The account and its sessions are deleted. It cannot be undone.',
              'Delete user',
              () => remove.mutate(),
              u.email,
            )
          }
        >
          Delete
        </Button>
      </PageHeader>
      <ErrorBox
        error={disable.error ?? enable.error ?? revoke.error ?? resetMfa.error ?? reset.error ?? remove.error}
      />
      <div className="grid-2">
        <Section title="Profile">
          <dl className="props">
            <dt>User id</dt>
            <dd>
              <code>{u.id}</code>
            </dd>
            <dt>E-mail</dt>
            <dd>
              {u.email} {u.email_verified ? <Badge tone="good">verified</Badge> : <Badge>unverified</Badge>}
            </dd>
            <dt>Name</dt>
            <dd>{u.name ?? '—'}</dd>
            <dt>MFA</dt>
            <dd>{u.mfa_enabled ? <Badge tone="good">on</Badge> : <Badge>off</Badge>}</dd>
            <dt>Status</dt>
            <dd>
              {u.disabled ? (
                <Badge tone="bad">disabled {when(u.disabled_at)}</Badge>
              ) : (
                <Badge tone="good">active</Badge>
              )}
            </dd>
            <dt>Created</dt>
            <dd>{when(u.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{when(u.updated_at)}</dd>
          </dl>
          <p className="muted">
            Sessions: the admin API ends them all at once (“End sessions”); it does not list them one by one.
          </p>
        </Section>
        <RolesForm key={u.updated_at} user={u} />
      </div>
    </>
  );
}

function RolesForm({ user }: { user: AdminUser }) {
  const { api, project } = useProjectCtx();
  const queries = useQueryClient();
  const toast = useToast();
  const [roles, setRoles] = useState((user.roles ?? []).join(', '));
  const [meta, setMeta] = useState(json(user.app_metadata ?? {}));
  const [metaError, setMetaError] = useState<string>();
  const save = useMutation({
    mutationFn: (appMetadata: unknown) =>
      api.admin.users.update(user.id, {
        roles: roles
          .split(',')
          .map((r) => r.trim())
          .filter(Boolean),
        app_metadata: appMetadata,
      }),
    onSuccess: async (u) => {
      toast('Roles and app metadata saved');
      queries.setQueryData(['user', project.id, user.id], u);
      await queries.invalidateQueries({ queryKey: ['users', project.id] });
    },
  });
  return (
    <Section title="Roles and app metadata">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          try {
            const parsed: unknown = JSON.parse(meta || '{}');
            setMetaError(undefined);
            save.mutate(parsed);
          } catch (err) {
            setMetaError(`Not valid JSON: ${(err as Error).message}`);
          }
        }}
      >
        <TextField
          label="Roles"
          hint="Comma-separated; tokens carry them as role:<name> claims."
          value={roles}
          onChange={(e) => setRoles(e.target.value)}
        />
        <TextArea
          label="App metadata (JSON)"
          className="code"
          error={metaError}
          value={meta}
          onChange={(e) => setMeta(e.target.value)}
          spellCheck={false}
        />
        <Button type="submit" variant="primary" busy={save.isPending}>
          Save
        </Button>
      </form>
      <ErrorBox error={save.error} />
    </Section>
  );
}
