// The developer account: profile and e-mail address (changed through a link mailed to the new address), password,
// two-factor authentication (enrol with a QR code, recovery codes shown once, regenerate, turn off with a code or a
// recovery code), the account's sessions (end one, sign out everywhere) and deleting the account with its projects.
// Sensitive changes ask again for the current password or, with MFA on, a code from the authenticator app.
import { useEffect, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { Reauth } from '@tessera/client';
import { useLocation } from 'wouter';
import { endSession, endingSession, platform } from '../lib/session.ts';
import { when } from '../lib/format.ts';
import {
  Badge,
  Button,
  CodeField,
  ConfirmButton,
  CopyButton,
  DataTable,
  ErrorBox,
  Form,
  Loading,
  PageHeader,
  RowForm,
  Secret,
  Section,
  TextField,
  useConfirm,
} from '../ui/index.tsx';
import { QueryView, useAction } from '../ui/data.tsx';
import { NewPasswordFields } from './sign-in.tsx';

type Me = {
  id: string;
  email: string;
  name?: string | null;
  mfa_enabled?: boolean;
  recovery_codes_remaining?: number;
  created_at?: string;
};

/** The otpauth URL as a QR code (SVG). */
function Qr({ text }: { text: string }) {
  const [svg, setSvg] = useState<string>();
  useEffect(() => {
    let live = true;
    void import('qrcode')
      .then((m) => m.toString(text, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }))
      .then((s) => live && setSvg(s));
    return () => {
      live = false;
    };
  }, [text]);
  if (!svg) return <Loading what="Drawing the QR code" />;
  return (
    <img
      className="qr"
      alt="QR code for your authenticator app"
      src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`}
    />
  );
}

/** Recovery codes, shown once: copy or download them. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = codes.join('\n');
  return (
    <div className="stack" role="region" aria-label="Recovery codes">
      <p>
        <strong>Save these recovery codes now.</strong> Each one signs you in once if you lose your authenticator app.
        They are shown only this once.
      </p>
      <ul className="codes" aria-label="Your recovery codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="row">
        <CopyButton value={text} label="Copy codes" />
        <a
          className="btn"
          download="tessera-recovery-codes.txt"
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(`${text}\n`)}`}
        >
          Download
        </a>
        <Button variant="primary" onClick={onDone}>
          I saved them
        </Button>
      </div>
    </div>
  );
}

/** The current password, or (MFA on) a code from the app instead: the proof a sensitive change asks for. */
function useProof(mfa: boolean) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const proof: Reauth = code.trim() ? { totpCode: code.trim() } : { currentPassword: password };
  const fields = (
    <>
      <TextField
        label="Current password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      {mfa && (
        <CodeField
          label="Or a code from your app"
          required={false}
          hint="With two-factor authentication on, a 6-digit code can stand in for the password."
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
      )}
    </>
  );
  return {
    proof,
    fields,
    reset: () => {
      setPassword('');
      setCode('');
    },
  };
}

function EmailSection({ me }: { me: Me }) {
  const [email, setEmail] = useState('');
  const proof = useProof(!!me.mfa_enabled);
  const [sentTo, setSentTo] = useState<string>();
  const change = useAction({
    run: () => platform.tenant.email.change(email.trim(), proof.proof),
    onSuccess: () => {
      setSentTo(email.trim());
      setEmail('');
      proof.reset();
    },
  });
  return (
    <Section title="E-mail address">
      <p>
        You sign in as <strong>{me.email}</strong>. A new address takes effect once you open the link we mail to it.
      </p>
      {sentTo && (
        <p role="status" className="notice">
          We sent a confirmation link to {sentTo}. Open it to make it your sign-in address (it works for 24 hours).
        </p>
      )}
      <Form className="stack narrow" aria-label="Change e-mail address" onSubmit={() => change.mutate()}>
        <TextField
          label="New e-mail address"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        {proof.fields}
        <ErrorBox error={change.error} title="Could not change the address" />
        <div>
          <Button type="submit" busy={change.isPending}>
            Send confirmation link
          </Button>
        </div>
      </Form>
    </Section>
  );
}

function PasswordSection({ me }: { me: Me }) {
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const proof = useProof(!!me.mfa_enabled);
  const change = useAction({
    run: async () => {
      if (next !== again) throw new Error('The two new passwords differ');
      await platform.tenant.password.change(next, proof.proof);
    },
    onSuccess: () => {
      setNext('');
      setAgain('');
      proof.reset();
    },
    done: 'Password changed; your other sessions ended',
    invalidate: [['tenant-sessions']],
  });
  return (
    <Section title="Password">
      <Form className="stack narrow" aria-label="Change password" onSubmit={() => change.mutate()}>
        {proof.fields}
        <NewPasswordFields password={next} setPassword={setNext} again={again} setAgain={setAgain} />
        <ErrorBox error={change.error} title="Could not change the password" />
        <div>
          <Button type="submit" busy={change.isPending}>
            Change password
          </Button>
        </div>
      </Form>
    </Section>
  );
}

function MfaSection({ me }: { me: Me }) {
  const confirm = useConfirm();
  const [code, setCode] = useState('');
  const [disableCode, setDisableCode] = useState('');
  const [regenCode, setRegenCode] = useState('');
  const [codes, setCodes] = useState<string[]>();
  const enroll = useMutation({ mutationFn: () => platform.tenant.mfa.enroll() });
  const verify = useAction({
    run: () => platform.tenant.mfa.verify(code.trim()),
    onSuccess: (r) => {
      enroll.reset();
      setCode('');
      setCodes(r.recovery_codes);
    },
    done: 'Two-factor authentication is on',
    invalidate: [['tenant']],
  });
  const disable = useAction({
    run: () => platform.tenant.mfa.disable(disableCode.trim()),
    onSuccess: () => setDisableCode(''),
    done: 'Two-factor authentication is off',
    invalidate: [['tenant']],
  });
  const regenerate = useAction({
    run: () => platform.tenant.mfa.regenerateRecoveryCodes(regenCode.trim()),
    onSuccess: (r) => {
      setRegenCode('');
      setCodes(r);
    },
    done: 'New recovery codes: the old ones no longer work',
    invalidate: [['tenant']],
  });
  return (
    <Section title="Two-factor authentication">
      <p>Status: {me.mfa_enabled ? <Badge tone="good">On</Badge> : <Badge tone="warn">Off</Badge>}</p>
      {codes ? (
        <RecoveryCodes codes={codes} onDone={() => setCodes(undefined)} />
      ) : me.mfa_enabled ? (
        <div className="stack">
          <p>
            Recovery codes left: <strong>{me.recovery_codes_remaining ?? 0}</strong> of 10.
            {(me.recovery_codes_remaining ?? 0) <= 3 && ' Make new ones before you run out.'}
          </p>
          <RowForm submit="Make new recovery codes" busy={regenerate.isPending} onSubmit={() => regenerate.mutate()}>
            <CodeField
              label="Code from the app (new codes)"
              value={regenCode}
              onChange={(e) => setRegenCode(e.target.value)}
            />
          </RowForm>
          <RowForm
            submit="Turn off two-factor authentication"
            variant="danger"
            busy={disable.isPending}
            onSubmit={async () => {
              if (
                await confirm({
                  title: 'Turn off two-factor authentication?',
                  body: <p>Signing in will need only your password. Your recovery codes stop working.</p>,
                  action: 'Turn off',
                })
              )
                disable.mutate();
            }}
          >
            <TextField
              label="Code from the app, or a recovery code"
              autoComplete="one-time-code"
              spellCheck={false}
              value={disableCode}
              onChange={(e) => setDisableCode(e.target.value)}
            />
          </RowForm>
        </div>
      ) : enroll.data ? (
        <div className="stack">
          <p>
            Scan this code with an authenticator app (or enter the secret by hand), then type the 6-digit code it shows.
          </p>
          <Qr text={enroll.data.otpauth_url} />
          <Secret label="Secret" value={enroll.data.secret} />
          <Secret label="otpauth URL" value={enroll.data.otpauth_url} />
          <RowForm submit="Turn on" variant="primary" busy={verify.isPending} onSubmit={() => verify.mutate()}>
            <CodeField label="Code from the app" value={code} onChange={(e) => setCode(e.target.value)} />
          </RowForm>
        </div>
      ) : (
        <Button variant="primary" busy={enroll.isPending} onClick={() => enroll.mutate()}>
          Set up two-factor authentication
        </Button>
      )}
      <ErrorBox error={enroll.error ?? verify.error ?? disable.error ?? regenerate.error} />
    </Section>
  );
}

function SessionsSection() {
  const [, navigate] = useLocation();
  const sessions = useQuery({ queryKey: ['tenant-sessions'], queryFn: () => platform.tenant.sessions.list() });
  const revoke = useAction({
    run: (id: string) => platform.tenant.sessions.revoke(id),
    done: 'Session ended',
    invalidate: [['tenant-sessions']],
  });
  const others = useAction({
    run: () => platform.tenant.sessions.revokeAll({ keepCurrent: true }),
    done: (n) => `Ended ${n} other session${n === 1 ? '' : 's'}`,
    invalidate: [['tenant-sessions']],
  });
  const everywhere = useAction({
    run: () => platform.tenant.sessions.revokeAll(),
    then: () => {
      endSession('You signed out everywhere.');
      navigate('/');
    },
  });
  return (
    <Section
      title="Sessions"
      actions={
        <>
          <ConfirmButton
            busy={others.isPending}
            ask={{
              title: 'Sign out of every other session?',
              body: <p>Every other browser and the CLI have to sign in again. This one stays signed in.</p>,
              action: 'Sign out others',
            }}
            onConfirm={() => others.mutate()}
          >
            Sign out other sessions
          </ConfirmButton>
          <ConfirmButton
            variant="danger"
            busy={everywhere.isPending}
            ask={{
              title: 'Sign out everywhere?',
              body: <p>Every session ends, this one included.</p>,
              action: 'Sign out everywhere',
            }}
            onConfirm={() => everywhere.mutate()}
          >
            Sign out everywhere
          </ConfirmButton>
        </>
      }
    >
      <QueryView query={sessions} loading="Loading your sessions">
        {(list) => (
          <DataTable label="Sessions" columns={['Signed in', 'Last used', 'Address', 'Expires']} actions>
            {list.map((s) => (
              <tr key={s.id}>
                <td>
                  {when(s.created_at)} {s.current && <Badge tone="good">This session</Badge>}
                </td>
                <td>{when(s.last_used_at)}</td>
                <td>{s.ip ?? '—'}</td>
                <td>{when(s.expires_at)}</td>
                <td>
                  {!s.current && (
                    <ConfirmButton
                      className="btn-small"
                      aria-label={`End the session signed in ${when(s.created_at)}`}
                      busy={revoke.isPending && revoke.variables === s.id}
                      ask={{
                        title: 'End this session?',
                        body: <p>Whoever uses it has to sign in again.</p>,
                        action: 'End session',
                      }}
                      onConfirm={() => revoke.mutate(s.id)}
                    >
                      End
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
      <ErrorBox error={revoke.error ?? others.error ?? everywhere.error} />
    </Section>
  );
}

function DeleteSection({ me }: { me: Me }) {
  const confirm = useConfirm();
  const [, navigate] = useLocation();
  const proof = useProof(!!me.mfa_enabled);
  const remove = useAction({
    // The client ends the session as soon as the account is gone: the sign-in page then says why.
    run: () => endingSession('Your account was deleted.', () => platform.tenant.deleteAccount(me.email, proof.proof)),
    then: () => navigate('/'),
  });
  return (
    <Section title="Delete the account">
      <p>
        Deleting your account deletes <strong>every project it owns</strong>, with their databases, files, functions,
        end-users and keys, then the account itself. There is no undo.
      </p>
      <Form
        className="stack narrow"
        aria-label="Delete the account"
        onSubmit={async () => {
          if (
            await confirm({
              title: 'Delete your account and all its projects?',
              body: <p>Every project, with all its data, is deleted, then the account. This cannot be undone.</p>,
              action: 'Delete account',
              typed: me.email,
            })
          )
            remove.mutate();
        }}
      >
        {proof.fields}
        <ErrorBox error={remove.error} title="Could not delete the account" />
        <div>
          <Button type="submit" variant="danger" busy={remove.isPending}>
            Delete account…
          </Button>
        </div>
      </Form>
    </Section>
  );
}

export default function Account() {
  const me = useQuery({ queryKey: ['tenant'], queryFn: () => platform.tenant.me() });
  return (
    <QueryView query={me} loading="Loading your account">
      {(data) => {
        const t = data as Me;
        return (
          <>
            <PageHeader title="Account" description="Your developer account." />
            <Section title="Profile">
              <dl className="props">
                <dt>E-mail</dt>
                <dd>{t.email}</dd>
                <dt>Name</dt>
                <dd>{t.name || '—'}</dd>
                <dt>Account id</dt>
                <dd>
                  <code>{t.id}</code>
                </dd>
                <dt>Created</dt>
                <dd>{when(t.created_at)}</dd>
              </dl>
            </Section>
            <EmailSection me={t} />
            <PasswordSection me={t} />
            <MfaSection me={t} />
            <SessionsSection />
            <DeleteSection me={t} />
          </>
        );
      }}
    </QueryView>
  );
}
