// Signing in (with the TOTP code when the account has MFA on) and signing up. Both are the first screen most
// people see, so they load with the shell and nothing else.
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { isTesseraError } from '@tessera/client';
import { Link } from 'wouter';
import { platform, takeEndReason } from '../lib/session.ts';
import { Button, ErrorBox, Form, TextField } from '../ui/index.tsx';

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
    <main className="centered" id="main">
      <h1>Sign in to Tessera</h1>
      {notice && (
        <p role="status" className="notice">
          {notice}
        </p>
      )}
      <Form onSubmit={() => login.mutate()} className="card" aria-label="Sign in">
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
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {needsCode && (
          <TextField
            label="Authentication code"
            hint="The 6-digit code from your authenticator app."
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9 ]*"
            required
            autoFocus
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
        )}
        {login.error && !mfaPrompt ? <ErrorBox error={login.error} title="Could not sign in" /> : null}
        {mfaPrompt && (
          <p className="muted">This account has two-factor authentication: enter the code from your app.</p>
        )}
        <Button type="submit" variant="primary" busy={login.isPending}>
          Sign in
        </Button>
      </Form>
      <p>
        New to Tessera? <Link href="/sign-up">Create an account</Link>.
      </p>
    </main>
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
    <main className="centered" id="main">
      <h1>Create your Tessera account</h1>
      <Form onSubmit={() => signup.mutate()} className="card" aria-label="Sign up">
        <TextField label="Name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />
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
          autoComplete="new-password"
          required
          minLength={8}
          hint="At least 8 characters."
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {signup.error ? <ErrorBox error={signup.error} title="Could not create the account" /> : null}
        <Button type="submit" variant="primary" busy={signup.isPending}>
          Create account
        </Button>
      </Form>
      <p>
        Have an account? <Link href="/">Sign in</Link>.
      </p>
    </main>
  );
}
