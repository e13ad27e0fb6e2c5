// Signing in (with the TOTP code when the account has MFA on) and signing up. Both are the first screen most
// people see, so they load with the shell and nothing else.
import { useState, type ReactNode } from 'react';
import { useMutation } from '@tanstack/react-query';
import { isTesseraError } from '@tessera/client';
import { Link } from 'wouter';
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
  const [notice] = useState(() => takeEndReason());
  const login = useMutation({
    mutationFn: () => platform.tenant.login({ email, password, totpCode: needsCode ? code.trim() : undefined }),
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
          New to Tessera? <Link href="/sign-up">Create an account</Link>.
        </>
      }
    >
      <Credentials email={email} setEmail={setEmail} password={password} setPassword={setPassword} />
      {needsCode && (
        <CodeField
          label="Authentication code"
          hint="The 6-digit code from your authenticator app."
          pattern="[0-9 ]*"
          autoFocus
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
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
