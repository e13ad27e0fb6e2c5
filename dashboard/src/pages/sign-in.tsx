// Signing in (with the TOTP code, or a recovery code, when the account has MFA on), signing up, and recovering an
// account: forgot password (a link by mail), the reset page the link opens, and confirming a new e-mail address. The
// sign-in and sign-up pages are the first screen most people see, so they load with the shell and nothing else.
import { useState, type ReactNode } from 'react';
import { useMutation } from '@tanstack/react-query';
import { isTesseraError } from '@tessera/client';
import { Link, useSearch } from 'wouter';
import { platform, takeEndReason } from '../lib/session.ts';
import { Button, CodeField, ErrorBox, Form, TextField } from '../ui/index.tsx';

/** The page of signing in or up: its heading, a notice, the form (a card) and the way to the other page. */
function AuthPage({
  title,
  label,
  notice,
  onSubmit,
  footer,
  children,
}: {
  title: string;
  label: string;
  notice?: ReactNode;
  onSubmit: () => void;
  footer: ReactNode;
  children: ReactNode;
}) {
  return (
    <main className="centered" id="main">
      <h1>{title}</h1>
      {notice}
      <Form onSubmit={onSubmit} className="card" aria-label={label}>
        {children}
      </Form>
      <p>{footer}</p>
    </main>
  );
}

/** The e-mail and password fields (a new password: at least 8 characters). */
function Credentials({
  email,
  setEmail,
  password,
  setPassword,
  isNew,
}: {
  email: string;
  setEmail: (v: string) => void;
  password: string;
  setPassword: (v: string) => void;
  isNew?: boolean;
}) {
  return (
    <>
      <TextField
        label="E-mail"
        type="email"
        autoComplete="username"
        required
        value={email}
        onChange={(e) => setEmail(e.target.value)}
      />
      <TextField
        label="Password"
        type="password"
        autoComplete={isNew ? 'new-password' : 'current-password'}
        required
        {...(isNew ? { minLength: 8, hint: 'At least 8 characters.' } : {})}
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
    </>
  );
}

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [recovery, setRecovery] = useState(false);
  const [notice] = useState(() => takeEndReason());
  const login = useMutation({
    mutationFn: () =>
      platform.tenant.login({
        email,
        password,
        ...(needsCode && !recovery ? { totpCode: code.trim() } : {}),
        ...(needsCode && recovery ? { recoveryCode: code.trim() } : {}),
      }),
    onError: (err) => {
      if (isTesseraError(err, 'MFA_REQUIRED')) setNeedsCode(true);
    },
  });
  const mfaPrompt = isTesseraError(login.error, 'MFA_REQUIRED');
  return (
    <AuthPage
      title="Sign in to Tessera"
      label="Sign in"
      notice={
        notice && (
          <p role="status" className="notice">
            {notice}
          </p>
        )
      }
      onSubmit={() => login.mutate()}
      footer={
        <>
          New to Tessera? <Link href="/sign-up">Create an account</Link>.{' '}
          <Link href="/forgot-password">Forgot your password?</Link>
        </>
      }
    >
      <Credentials email={email} setEmail={setEmail} password={password} setPassword={setPassword} />
      {needsCode &&
        (recovery ? (
          <TextField
            key="recovery"
            label="Recovery code"
            hint="One of the codes you saved when you turned on two-factor authentication (xxxxx-xxxxx). Each works once."
            autoComplete="off"
            spellCheck={false}
            autoFocus
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
        ) : (
          <CodeField
            key="totp"
            label="Authentication code"
            hint="The 6-digit code from your authenticator app."
            pattern="[0-9 ]*"
            autoFocus
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
        ))}
      {needsCode && (
        <Button
          className="btn-link"
          onClick={() => {
            setRecovery(!recovery);
            setCode('');
          }}
        >
          {recovery ? 'Use a code from the app instead' : 'Lost your phone? Use a recovery code'}
        </Button>
      )}
      {login.error && !mfaPrompt ? <ErrorBox error={login.error} title="Could not sign in" /> : null}
      {mfaPrompt && <p className="muted">This account has two-factor authentication: enter the code from your app.</p>}
      <Button type="submit" variant="primary" busy={login.isPending}>
        Sign in
      </Button>
    </AuthPage>
  );
}

export function SignUp() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const signup = useMutation({
    mutationFn: async () => {
      await platform.tenant.signup({ email, password, ...(name ? { name } : {}) });
      await platform.tenant.login({ email, password });
    },
  });
  return (
    <AuthPage
      title="Create your Tessera account"
      label="Sign up"
      onSubmit={() => signup.mutate()}
      footer={
        <>
          Have an account? <Link href="/">Sign in</Link>.
        </>
      }
    >
      <TextField label="Name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />
      <Credentials email={email} setEmail={setEmail} password={password} setPassword={setPassword} isNew />
      {signup.error ? <ErrorBox error={signup.error} title="Could not create the account" /> : null}
      <Button type="submit" variant="primary" busy={signup.isPending}>
        Create account
      </Button>
    </AuthPage>
  );
}

/** A new password typed twice (the page checks that the two agree before sending). */
export function NewPasswordFields(p: {
  password: string;
  setPassword: (v: string) => void;
  again: string;
  setAgain: (v: string) => void;
}) {
  return (
    <>
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        minLength={8}
        hint="At least 8 characters."
        value={p.password}
        onChange={(e) => p.setPassword(e.target.value)}
      />
      <TextField
        label="New password again"
        type="password"
        autoComplete="new-password"
        required
        value={p.again}
        onChange={(e) => p.setAgain(e.target.value)}
      />
    </>
  );
}

/** Asks for a reset link; the answer is the same whether the address has an account or not. */
export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const forgot = useMutation({ mutationFn: () => platform.tenant.password.forgot(email.trim()) });
  return (
    <AuthPage
      title="Reset your password"
      label="Forgot password"
      onSubmit={() => forgot.mutate()}
      footer={
        <>
          Remembered it? <Link href="/">Sign in</Link>.
        </>
      }
    >
      {forgot.isSuccess ? (
        <p role="status">
          If {email.trim()} has an account, a link to choose a new password is on its way. It works once, for an hour.
        </p>
      ) : (
        <>
          <p>Enter the e-mail address you sign in with; we mail you a link to choose a new password.</p>
          <TextField
            label="E-mail"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
          {forgot.error ? <ErrorBox error={forgot.error} title="Could not send the link" /> : null}
          <Button type="submit" variant="primary" busy={forgot.isPending}>
            Send reset link
          </Button>
        </>
      )}
    </AuthPage>
  );
}

/** The page a reset mail's link opens (`?token=...`): a new password, then sign in. */
export function ResetPassword() {
  const token = new URLSearchParams(useSearch()).get('token') ?? '';
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const reset = useMutation({
    mutationFn: async () => {
      if (password !== again) throw new Error('The two passwords differ');
      await platform.tenant.password.reset(token, password);
    },
  });
  return (
    <AuthPage
      title="Choose a new password"
      label="Reset password"
      onSubmit={() => reset.mutate()}
      footer={
        <>
          <Link href="/forgot-password">Send a new link</Link> · <Link href="/">Sign in</Link>
        </>
      }
    >
      {reset.isSuccess ? (
        <p role="status">
          Your password is changed and every session of the account has ended. <Link href="/">Sign in</Link> with the
          new password.
        </p>
      ) : !token ? (
        <p role="alert">This page needs the link from the reset mail. Ask for a new one.</p>
      ) : (
        <>
          <NewPasswordFields password={password} setPassword={setPassword} again={again} setAgain={setAgain} />
          {reset.error ? <ErrorBox error={reset.error} title="Could not change the password" /> : null}
          <Button type="submit" variant="primary" busy={reset.isPending}>
            Set new password
          </Button>
        </>
      )}
    </AuthPage>
  );
}

/** The page an e-mail change mail's link opens: confirms the new address (signed in or not). */
export function ConfirmEmail() {
  const token = new URLSearchParams(useSearch()).get('token') ?? '';
  const confirm = useMutation({ mutationFn: () => platform.tenant.email.confirm(token) });
  return (
    <AuthPage
      title="Confirm your new e-mail address"
      label="Confirm e-mail address"
      onSubmit={() => confirm.mutate()}
      footer={<Link href="/">Go to the dashboard</Link>}
    >
      {confirm.isSuccess ? (
        <p role="status">Your account's sign-in address is now {confirm.data.email}.</p>
      ) : (
        <>
          <p>Make this the address you sign in with.</p>
          {confirm.error ? <ErrorBox error={confirm.error} title="Could not confirm the address" /> : null}
          <Button type="submit" variant="primary" busy={confirm.isPending} disabled={!token}>
            Confirm address
          </Button>
        </>
      )}
    </AuthPage>
  );
}
