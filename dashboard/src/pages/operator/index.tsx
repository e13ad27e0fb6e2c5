// The operator's area of the console (/operator, a lazy chunk of its own): signed in with an operator key pasted here
// and kept in this tab's sessionStorage only, apart from any tenant session. Pages: plans (and the default plan),
// tenants, projects, project servers, the audit of every operator action, operator keys.
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'wouter';
import { operatorApi, setOperatorKey, useOperatorKey } from '../../lib/operator-session.ts';
import { Area, Button, ErrorBox, Form, TextField } from '../../ui/index.tsx';
import { useAction } from '../../ui/data.tsx';
import { PlanEditor, Plans } from './plans.tsx';
import { Projects, Tenants } from './tenants.tsx';
import { Audit, OperatorKeys } from './audit.tsx';
import { Servers } from './servers.tsx';

export default function OperatorArea() {
  const key = useOperatorKey();
  const queries = useQueryClient();
  const signOut = () => {
    setOperatorKey(undefined);
    queries.removeQueries({ queryKey: ['operator'] });
  };
  return (
    <div className="shell operator-shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/operator" className="brand">
          Tessera operator
        </Link>
        <span className="spacer" />
        <Link href="/">Tenant console</Link>
        {key && <Button onClick={signOut}>Sign out</Button>}
      </header>
      <main id="main" tabIndex={-1}>
        {key ? (
          <Area
            title="Operator"
            description="This install's plans, tenants, projects and project servers. Every change here is audited."
            label="Operator"
            base="/operator"
            tabs={[
              { path: 'plans', label: 'Plans', page: <Plans /> },
              { path: 'tenants', label: 'Tenants', page: <Tenants /> },
              { path: 'projects', label: 'Projects', page: <Projects /> },
              { path: 'servers', label: 'Servers', page: <Servers /> },
              { path: 'audit', label: 'Audit', page: <Audit /> },
              { path: 'keys', label: 'Operator keys', page: <OperatorKeys /> },
            ]}
            routes={[
              { path: 'plans/new', page: () => <PlanEditor /> },
              { path: 'plans/:id', page: (p) => <PlanEditor id={p.id} /> },
            ]}
          />
        ) : (
          <OperatorSignIn />
        )}
      </main>
    </div>
  );
}

/** Signing in with an operator key: checked by reading the install's settings before it is kept. */
function OperatorSignIn() {
  const [key, setKey] = useState('');
  const signIn = useAction({
    run: async (k: string) => {
      await operatorApi(k).settings.get();
      return k;
    },
    then: (k) => setOperatorKey(k),
  });
  return (
    <section className="card" aria-labelledby="operator-sign-in">
      <h1 id="operator-sign-in">Operator sign-in</h1>
      <p>
        Paste an operator key (<code>top_…</code>): the one set as <code>TESSERA_OPERATOR_KEY</code>, or one created
        under Operator keys. It is kept in this browser tab only (sessionStorage) until you sign out or close the tab,
        apart from any tenant sign-in.
      </p>
      <Form onSubmit={() => signIn.mutate(key.trim())}>
        <TextField
          label="Operator key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <Button type="submit" variant="primary" busy={signIn.isPending}>
          Sign in
        </Button>
      </Form>
      <ErrorBox error={signIn.error} title="This key was refused" />
    </section>
  );
}
