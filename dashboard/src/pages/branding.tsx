// How the hosted end-user sign-in pages (/authorize, sign-up, forgot password) present the project
// (/p/<id>/branding): a logo URL, a brand colour, and whether those pages offer sign-up and password reset.
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { ProjectBranding } from '@tessera/client';
import { platform } from '../lib/session.ts';
import { useProjectCtx } from '../lib/project-context.ts';
import { Check, FormSection, PageHeader, TextField } from '../ui/index.tsx';
import { QueryView, useAction } from '../ui/data.tsx';

const COLOR = /^#[0-9a-fA-F]{6}$/;

export default function Branding() {
  const { project } = useProjectCtx();
  const query = useQuery({
    queryKey: ['branding', project.id],
    queryFn: () => platform.tenant.projects.branding(project.id),
  });
  return (
    <>
      <PageHeader
        title="Branding"
        description="How the hosted sign-in page of your end-users (/authorize) presents the project: its name, a logo and a colour, and which links it offers."
      />
      <QueryView query={query} loading="Loading the branding" failed="Could not read the branding">
        {(b) => <BrandingForm initial={b} />}
      </QueryView>
    </>
  );
}

function BrandingForm({ initial }: { initial: ProjectBranding }) {
  const { project } = useProjectCtx();
  const [logo, setLogo] = useState(initial.logo_url ?? '');
  const [color, setColor] = useState(initial.brand_color ?? '');
  const [signUp, setSignUp] = useState(initial.hosted_sign_up);
  const [reset, setReset] = useState(initial.hosted_password_reset);
  const colorError = color && !COLOR.test(color) ? 'Write the colour as #rrggbb, e.g. #0b6e4f.' : undefined;
  const logoError = logo && !/^https:\/\//i.test(logo) ? 'The logo must be an https:// URL.' : undefined;
  const save = useAction({
    run: () =>
      platform.tenant.projects.setBranding(project.id, {
        logo_url: logo.trim(),
        brand_color: color.trim(),
        hosted_sign_up: signUp,
        hosted_password_reset: reset,
      }),
    done: 'Branding saved',
    invalidate: [['branding', project.id]],
  });
  return (
    <FormSection
      title="Hosted sign-in page"
      intro={
        <p className="muted">
          The page shows the project&apos;s name ({initial.project_name}); rename the project in its settings.
        </p>
      }
      submit="Save branding"
      action={save}
      failed="Could not save the branding"
      onSubmit={() => {
        if (!colorError && !logoError) save.mutate();
      }}
    >
      <TextField
        label="Logo URL"
        type="url"
        inputMode="url"
        placeholder="https://cdn.example.com/logo.png"
        hint="An https:// address of an image; empty for none."
        error={logoError}
        value={logo}
        maxLength={2048}
        onChange={(e) => setLogo(e.target.value)}
      />
      <div className="row">
        <TextField
          label="Brand colour"
          placeholder="#1f5fbf"
          hint="Buttons and links, written #rrggbb; empty for the default."
          error={colorError}
          value={color}
          maxLength={7}
          spellCheck={false}
          onChange={(e) => setColor(e.target.value)}
        />
        <span className="swatch" aria-hidden="true" style={{ background: COLOR.test(color) ? color : 'transparent' }} />
      </div>
      <Check
        label="Offer sign-up (a “Sign up” link to the hosted sign-up page)"
        checked={signUp}
        onChange={(e) => setSignUp(e.target.checked)}
      />
      <Check
        label="Offer password reset (a “Forgot password?” link; the reset link goes by e-mail)"
        checked={reset}
        onChange={(e) => setReset(e.target.checked)}
      />
    </FormSection>
  );
}
