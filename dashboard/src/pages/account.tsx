// The developer account: who is signed in, and two-factor authentication (enrol with a QR code, activate with a
// code, disable with a code).
import { useEffect, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { platform } from '../lib/session.ts';
import { when } from '../lib/format.ts';
import {
  Badge,
  Button,
  CodeField,
  ErrorBox,
  Loading,
  PageHeader,
  RowForm,
  Secret,
  Section,
  useConfirm,
} from '../ui/index.tsx';
import { QueryView, useAction } from '../ui/data.tsx';

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

export default function Account() {
  const confirm = useConfirm();
  const me = useQuery({ queryKey: ['tenant'], queryFn: () => platform.tenant.me() });
  const [code, setCode] = useState('');
  const [disableCode, setDisableCode] = useState('');
  const enroll = useMutation({ mutationFn: () => platform.tenant.mfa.enroll() });
  const verify = useAction({
    run: () => platform.tenant.mfa.verify(code.trim()),
    onSuccess: () => {
      enroll.reset();
      setCode('');
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
  return (
    <QueryView query={me} loading="Loading your account">
      {(data) => {
        const t = data as {
          id: string;
          email: string;
          name?: string | null;
          mfa_enabled?: boolean;
          created_at?: string;
        };
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
            <Section title="Two-factor authentication">
              <p>Status: {t.mfa_enabled ? <Badge tone="good">On</Badge> : <Badge tone="warn">Off</Badge>}</p>
              {t.mfa_enabled ? (
                <RowForm
                  submit="Turn off two-factor authentication"
                  variant="danger"
                  busy={disable.isPending}
                  onSubmit={async () => {
                    if (
                      await confirm({
                        title: 'Turn off two-factor authentication?',
                        body: <p>Signing in will need only your password.</p>,
                        action: 'Turn off',
                      })
                    )
                      disable.mutate();
                  }}
                >
                  <CodeField
                    label="Code to turn it off"
                    value={disableCode}
                    onChange={(e) => setDisableCode(e.target.value)}
                  />
                </RowForm>
              ) : enroll.data ? (
                <div className="stack">
                  <p>
                    Scan this code with an authenticator app (or enter the secret by hand), then type the 6-digit code
                    it shows.
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
              <ErrorBox error={enroll.error ?? verify.error ?? disable.error} />
            </Section>
          </>
        );
      }}
    </QueryView>
  );
}
