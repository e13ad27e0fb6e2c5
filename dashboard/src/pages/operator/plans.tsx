// The operator's plans: every plan with every limit ("unlimited" where none), its price only when set, its tenant
// count and the default badge; the default plan for new tenants; a form to create or edit a plan (an empty limit is
// no limit); delete (refused with PLAN_IN_USE while a tenant is on it or it is the default).
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import { PLAN_LIMITS, type OperatorPlan, type PlanLimitKey } from '@tessera/client';
import { operatorApi } from '../../lib/operator-session.ts';
import { limitValue, price } from '../../lib/format.ts';
import {
  Badge,
  BackLink,
  Button,
  DataTable,
  DeleteButton,
  ErrorBox,
  FormSection,
  Section,
  SelectField,
  TextField,
} from '../../ui/index.tsx';
import { QueryView, useAction } from '../../ui/data.tsx';

export const PLANS_KEY = ['operator', 'plans'];
const SETTINGS_KEY = ['operator', 'settings'];

/** The plans query, shared by the pages that choose a plan. */
export const usePlans = () => useQuery({ queryKey: PLANS_KEY, queryFn: () => operatorApi().plans.list() });

export function Plans() {
  const plans = usePlans();
  const remove = useAction({
    run: (id: string) => operatorApi().plans.remove(id),
    done: (_, id) => `Deleted plan ${id}`,
    invalidate: [PLANS_KEY],
  });
  return (
    <>
      <DefaultPlan />
      <Section
        title="Plans"
        actions={
          <Link href="/operator/plans/new" className="btn btn-primary">
            New plan
          </Link>
        }
      >
        <QueryView query={plans} loading="Loading plans" failed="Could not list the plans">
          {(list) => {
            const priced = list.some((p) => p.price_cents_per_month !== null);
            return (
              <DataTable
                label="Plans"
                wide
                actions
                columns={['Plan', 'Tenants', ...PLAN_LIMITS.map((l) => l.label), ...(priced ? ['Price / month'] : [])]}
              >
                {list.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <Link href={`/operator/plans/${encodeURIComponent(p.id)}`}>{p.name}</Link>{' '}
                      <code className="muted">{p.id}</code> {p.default && <Badge tone="good">default</Badge>}
                    </td>
                    <td className="num">{p.tenant_count}</td>
                    {PLAN_LIMITS.map((l) => (
                      <td key={l.key} className="num">
                        {limitValue(l.unit, p.limits[l.key])}
                      </td>
                    ))}
                    {priced && <td className="num">{price(p.price_cents_per_month)}</td>}
                    <td>
                      <DeleteButton
                        what={`plan ${p.name}`}
                        body="A plan can be deleted when no tenant is on it and it is not the default."
                        busy={remove.isPending && remove.variables === p.id}
                        onConfirm={() => remove.mutate(p.id)}
                      />
                    </td>
                  </tr>
                ))}
              </DataTable>
            );
          }}
        </QueryView>
        <ErrorBox error={remove.error} title="Could not delete the plan" />
      </Section>
    </>
  );
}

/** The plan new tenants start on. */
function DefaultPlan() {
  const plans = usePlans();
  const settings = useQuery({ queryKey: SETTINGS_KEY, queryFn: () => operatorApi().settings.get() });
  const [chosen, setChosen] = useState('');
  useEffect(() => {
    if (settings.data) setChosen(settings.data.default_plan);
  }, [settings.data]);
  const save = useAction({
    run: (id: string) => operatorApi().settings.setDefaultPlan(id),
    done: (s) => `New tenants now start on ${s.default_plan}`,
    invalidate: [SETTINGS_KEY, PLANS_KEY],
  });
  return (
    <FormSection
      title="Default plan"
      intro={
        <p>
          The plan new tenants start on
          {settings.data?.default_plan_source === 'config'
            ? ' (now set by TESSERA_DEFAULT_PLAN until you choose one)'
            : ''}
          . Tenants already signed up keep theirs.
        </p>
      }
      submit="Save default plan"
      action={save}
      failed="Could not set the default plan"
      onSubmit={() => save.mutate(chosen)}
      className="row"
    >
      <SelectField
        label="Default plan for new tenants"
        value={chosen}
        onChange={(e) => setChosen(e.target.value)}
        options={(plans.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
      />
      <ErrorBox error={settings.error} title="Could not read the settings" />
    </FormSection>
  );
}

type Draft = { id: string; name: string; description: string; price: string; limits: Record<PlanLimitKey, string> };

const draftOf = (p: OperatorPlan | undefined): Draft => ({
  id: p?.id ?? '',
  name: p?.name ?? '',
  description: p?.description ?? '',
  price: p?.price_cents_per_month === null || p === undefined ? '' : String(p.price_cents_per_month),
  limits: Object.fromEntries(
    PLAN_LIMITS.map((l) => [l.key, p?.limits[l.key] === null || p === undefined ? '' : String(p.limits[l.key])]),
  ) as Record<PlanLimitKey, string>,
});

const UNIT_HINT = { count: 'A whole number', bytes: 'In bytes', seconds: 'In seconds' } as const;

/** Creates a plan (no `id`) or edits one: every limit a field, empty for no limit. */
export function PlanEditor({ id }: { id?: string }) {
  const plans = usePlans();
  const [, navigate] = useLocation();
  const plan = id === undefined ? undefined : plans.data?.find((p) => p.id === id);
  const [draft, setDraft] = useState<Draft>(() => draftOf(plan));
  useEffect(() => {
    if (plan) setDraft(draftOf(plan));
  }, [plan]);
  const body = () => ({
    name: draft.name.trim(),
    description: draft.description,
    price_cents_per_month: draft.price.trim() === '' ? null : Number(draft.price),
    limits: Object.fromEntries(
      PLAN_LIMITS.map((l) => {
        const v = draft.limits[l.key].trim();
        return [l.key, v === '' ? null : Number(v)];
      }),
    ),
  });
  const save = useAction({
    run: async () =>
      id === undefined
        ? await operatorApi().plans.create({ id: draft.id.trim(), ...body() })
        : await operatorApi().plans.update(id, body()),
    done: (p) => (id === undefined ? `Created plan ${p.name}` : `Saved plan ${p.name}`),
    invalidate: [PLANS_KEY],
    then: () => navigate('/operator/plans'),
  });
  if (id !== undefined && plans.isPending) return null;
  if (id !== undefined && !plan)
    return (
      <>
        <BackLink href="/operator/plans">All plans</BackLink>
        <ErrorBox error={plans.error ?? new Error(`No plan ${id}`)} title="Could not open the plan" />
      </>
    );
  const set = (k: keyof Omit<Draft, 'limits'>) => (e: { target: { value: string } }) =>
    setDraft({ ...draft, [k]: e.target.value });
  return (
    <>
      <BackLink href="/operator/plans">All plans</BackLink>
      <FormSection
        title={plan ? `Edit plan ${plan.name}` : 'New plan'}
        intro={
          <p>
            An empty limit means no limit. A change applies at once to every project on the plan. The price is shown to
            tenants only when set.
          </p>
        }
        submit={plan ? 'Save plan' : 'Create plan'}
        action={save}
        failed={plan ? 'Could not save the plan' : 'Could not create the plan'}
        onSubmit={() => save.mutate()}
      >
        {!plan && (
          <TextField
            label="Plan id"
            hint="Lower case letters, digits and dashes; cannot be changed later"
            required
            value={draft.id}
            onChange={set('id')}
          />
        )}
        <TextField label="Name" required value={draft.name} onChange={set('name')} />
        <TextField label="Description" value={draft.description} onChange={set('description')} />
        <TextField
          label="Price per month (cents)"
          hint="Empty: no price is shown"
          type="number"
          min={0}
          step={1}
          value={draft.price}
          onChange={set('price')}
        />
        <fieldset className="card">
          <legend>Limits</legend>
          {PLAN_LIMITS.map((l) => (
            <TextField
              key={l.key}
              label={l.label}
              hint={`${UNIT_HINT[l.unit]} (${l.key}); empty: no limit${draft.limits[l.key] !== '' && l.unit === 'bytes' ? ` — ${limitValue('bytes', Number(draft.limits[l.key]))}` : ''}`}
              type="number"
              min={0}
              step={l.key === 'database_cpu_seconds_per_minute' ? 'any' : 1}
              value={draft.limits[l.key]}
              onChange={(e) => setDraft({ ...draft, limits: { ...draft.limits, [l.key]: e.target.value } })}
            />
          ))}
        </fieldset>
        {plan && (
          <Button onClick={() => setDraft(draftOf(plan))} variant="ghost">
            Undo changes
          </Button>
        )}
      </FormSection>
    </>
  );
}
