// The project's end-users (the admin API under the project's secret key): search and paging, adding a user with a
// password or inviting one by e-mail, and one user's detail with roles and app metadata, disable/enable, end sessions,
// reset MFA, send a password reset or the invitation again, delete.
import { useState } from 'react';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Route, Switch, useLocation } from 'wouter';
import type { AdminUser } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { json, when } from '../lib/format.ts';
import { useJsonText } from '../lib/json-text.ts';
import {
  BackLink,
  Badge,
  Button,
  Check,
  CodeArea,
  ConfirmButton,
  DataTable,
  Empty,
  ErrorBox,
  FormSection,
  Loading,
  PageHeader,
  RowForm,
  Section,
  TextField,
  type ConfirmRequest,
} from '../ui/index.tsx';
import { CursorPager, ListSection, useAction, useCursors } from '../ui/data.tsx';

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
  const pages = useCursors();
  const after = pages.after;
  const list = useQuery({
    queryKey: ['users', project.id, applied, after],
    queryFn: () => api.admin.users.list({ search: applied || undefined, first: PAGE, after }),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <PageHeader title="Authentication" description="The people who sign in to your project's apps." />
      <ListSection
        title="Users"
        intro={
          <RowForm
            role="search"
            submit="Search"
            onSubmit={() => {
              setApplied(search.trim());
              pages.reset();
            }}
          >
            <TextField
              label="Search by e-mail or name"
              type="search"
              value={search}
              onChange={(e) => setSearch(e.target.value)}
            />
          </RowForm>
        }
        query={list}
        loading="Loading users"
        isEmpty={(d) => d.users.length === 0}
        empty={
          applied ? (
            <Empty title="No user matches">Try another part of the e-mail address or name.</Empty>
          ) : (
            <Empty title="No users yet">
              Users appear here once they sign up through your app (POST /register with the publishable key, or the
              hosted sign-in page), or when you add or invite them below.
            </Empty>
          )
        }
      >
        {(d) => (
          <>
            <DataTable columns={['E-mail', 'Verified', 'MFA', 'Roles', 'Status', 'Created']}>
              {d.users.map((u) => (
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
            </DataTable>
            <CursorPager pages={pages} next={d.next_cursor} label="Pages of users" showPage />
          </>
        )}
      </ListSection>
      <AddUser />
    </>
  );
}

/** Adds a user: by invitation (a mail with a link to choose a password) or with a password given here. */
function AddUser() {
  const { api, project } = useProjectCtx();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [invite, setInvite] = useState(true);
  const [password, setPassword] = useState('');
  const [verified, setVerified] = useState(false);
  const add = useAction({
    run: () => {
      const profile = name.trim() ? { name: name.trim() } : {};
      return invite
        ? api.admin.users.invite({ email, ...profile })
        : api.admin.users.create({ email, password, email_verified: verified, ...profile });
    },
    onSuccess: () => {
      setEmail('');
      setName('');
      setPassword('');
      setVerified(false);
    },
    done: (u) => (invite ? `Invitation sent to ${u.email}` : `User ${u.email} added`),
    invalidate: [['users', project.id]],
  });
  return (
    <FormSection
      title="Add a user"
      intro={
        <p className="muted">
          An invited user gets an e-mail with a link to choose a password (it works once, for 7 days); choosing it also
          confirms the address. Or set a password here and hand it over yourself.
        </p>
      }
      submit={invite ? 'Send invitation' : 'Add user'}
      action={add}
      failed={invite ? 'Could not send the invitation' : 'Could not add the user'}
      onSubmit={() => add.mutate()}
    >
      <TextField
        label="E-mail"
        type="email"
        autoComplete="off"
        required
        value={email}
        onChange={(e) => setEmail(e.target.value)}
      />
      <TextField label="Name (optional)" autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
      <Check
        label="Invite by e-mail (the user chooses a password)"
        checked={invite}
        onChange={(e) => setInvite(e.target.checked)}
      />
      {!invite && (
        <>
          <TextField
            label="Password"
            type="password"
            autoComplete="new-password"
            minLength={8}
            required
            hint="At least 8 characters, not the e-mail address."
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <Check
            label="The e-mail address is confirmed"
            checked={verified}
            onChange={(e) => setVerified(e.target.checked)}
          />
        </>
      )}
    </FormSection>
  );
}

function UserDetail({ id }: { id: string }) {
  const { api, project, base } = useProjectCtx();
  const queries = useQueryClient();
  const [, navigate] = useLocation();
  const key = ['user', project.id, id];
  const list = ['users', project.id];
  const user = useQuery({ queryKey: key, queryFn: () => api.admin.users.get(id) });
  /** An action on the user whose answer is the user as it now is. */
  const change = (run: () => Promise<AdminUser>, done: string) => ({
    run,
    onSuccess: (u: AdminUser) => queries.setQueryData(key, u),
    done,
    invalidate: [list],
  });
  const disable = useAction(change(() => api.admin.users.disable(id), 'User disabled: their sessions ended'));
  const enable = useAction(change(() => api.admin.users.enable(id), 'User enabled'));
  const resetMfa = useAction(change(() => api.admin.users.resetMfa(id), 'MFA reset'));
  const revoke = useAction({
    run: () => api.admin.users.revokeSessions(id),
    done: (n) => `${n} session(s) ended`,
  });
  const reset = useAction({
    run: (email: string) => api.auth.requestPasswordReset(email),
    done: 'Password reset e-mail sent',
  });
  const invite = useAction({
    run: () => api.admin.users.resendInvitation(id),
    done: 'Invitation sent again',
  });
  const remove = useAction({
    run: () => api.admin.users.remove(id),
    done: 'User deleted',
    invalidate: [list],
    then: () => navigate(`${base}/auth`),
  });
  if (user.isPending) return <Loading what="Loading the user" />;
  if (user.error)
    return (
      <>
        <BackLink href={`${base}/auth`}>Back to users</BackLink>
        <ErrorBox error={user.error} title="Could not load the user" />
      </>
    );
  const u = user.data;
  const ask = (title: string, body: string, action: string, typed?: string): ConfirmRequest => ({
    title,
    body: <p>{body}</p>,
    action,
    typed,
  });
  return (
    <>
      <BackLink href={`${base}/auth`}>← All users</BackLink>
      <PageHeader title={u.email}>
        {!u.email_verified && (
          <ConfirmButton
            ask={ask(
              'Send the invitation again?',
              `A new link to choose a password goes to ${u.email} (it works once, for 7 days).`,
              'Send invitation',
            )}
            onConfirm={() => invite.mutate()}
          >
            Resend invitation
          </ConfirmButton>
        )}
        <ConfirmButton
          ask={ask('Send a password reset e-mail?', `A reset link goes to ${u.email}.`, 'Send e-mail')}
          onConfirm={() => reset.mutate(u.email)}
        >
          Send password reset
        </ConfirmButton>
        <ConfirmButton
          ask={ask('End every session?', 'The user is signed out on every device.', 'End sessions')}
          onConfirm={() => revoke.mutate()}
        >
          End sessions
        </ConfirmButton>
        {u.mfa_enabled && (
          <ConfirmButton
            ask={ask(
              'Reset MFA?',
              'The user can then sign in with the password alone and set up MFA again.',
              'Reset MFA',
            )}
            onConfirm={() => resetMfa.mutate()}
          >
            Reset MFA
          </ConfirmButton>
        )}
        {u.disabled ? (
          <Button onClick={() => enable.mutate()} busy={enable.isPending}>
            Enable
          </Button>
        ) : (
          <ConfirmButton
            variant="danger"
            ask={ask('Disable this user?', 'They cannot sign in, and their sessions end now.', 'Disable user')}
            onConfirm={() => disable.mutate()}
          >
            Disable
          </ConfirmButton>
        )}
        <ConfirmButton
          variant="danger"
          ask={ask(
            `Delete ${u.email}?`,
            'The account and its sessions are deleted. It cannot be undone.',
            'Delete user',
            u.email,
          )}
          onConfirm={() => remove.mutate()}
        >
          Delete
        </ConfirmButton>
      </PageHeader>
      <ErrorBox
        error={
          disable.error ?? enable.error ?? revoke.error ?? resetMfa.error ?? reset.error ?? invite.error ?? remove.error
        }
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
  const [roles, setRoles] = useState((user.roles ?? []).join(', '));
  const meta = useJsonText(json(user.app_metadata ?? {}), { empty: {} });
  const save = useAction({
    run: (appMetadata: unknown) =>
      api.admin.users.update(user.id, {
        roles: roles
          .split(',')
          .map((r) => r.trim())
          .filter(Boolean),
        app_metadata: appMetadata,
      }),
    onSuccess: (u) => queries.setQueryData(['user', project.id, user.id], u),
    done: 'Roles and app metadata saved',
    invalidate: [['users', project.id]],
  });
  return (
    <FormSection
      title="Roles and app metadata"
      submit="Save"
      action={save}
      onSubmit={() => meta.withValue((parsed) => save.mutate(parsed))}
    >
      <TextField
        label="Roles"
        hint="Comma-separated; tokens carry them as role:<name> claims."
        value={roles}
        onChange={(e) => setRoles(e.target.value)}
      />
      <CodeArea label="App metadata (JSON)" {...meta.field} />
    </FormSection>
  );
}
