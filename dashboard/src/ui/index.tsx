// The dashboard's small design system: buttons, forms, fields, the error box (message, code and request id), empty
// states, tables, pagers, copy buttons, secrets that are hidden until revealed, tabs, toasts and the confirmation
// dialog that every destructive action goes through (a native <dialog>: focus stays inside, Escape cancels), with the
// button that asks it. How pages read and change data (a query's states, an action's toast and refresh, cursor paging)
// is in ./data.tsx.
import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useId,
  useRef,
  useState,
  type ButtonHTMLAttributes,
  type FormHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from 'react';
import { Link, Route, Switch, useLocation } from 'wouter';
import { isTesseraError } from '@tessera/client';

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'danger' | 'ghost' | 'plain';
  busy?: boolean;
};

/** A button; `busy` disables it and says so. */
export function Button({
  variant = 'plain',
  busy,
  children,
  className,
  disabled,
  type = 'button',
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type}
      className={`btn btn-${variant}${className ? ` ${className}` : ''}`}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {children}
    </button>
  );
}

type FormProps = Omit<FormHTMLAttributes<HTMLFormElement>, 'onSubmit'> & { onSubmit: () => unknown };

/** A form whose submit stays in the page: the browser's own submission is prevented and `onSubmit` runs. */
export function Form({ onSubmit, ...rest }: FormProps) {
  return (
    <form
      {...rest}
      onSubmit={(e) => {
        e.preventDefault();
        void onSubmit();
      }}
    />
  );
}

/** A form on one row: its field(s), then its `submit` button (busy while `busy`), then `also` (a Cancel button). */
export function RowForm({
  submit,
  variant,
  busy,
  also,
  children,
  ...rest
}: Omit<FormProps, 'className'> & {
  submit: ReactNode;
  variant?: ButtonProps['variant'];
  busy?: boolean;
  also?: ReactNode;
}) {
  return (
    <Form className="row" {...rest}>
      {children}
      <Button type="submit" variant={variant} busy={busy}>
        {submit}
      </Button>
      {also}
    </Form>
  );
}

type FieldProps = {
  label: string;
  hint?: ReactNode;
  error?: string;
  children: (id: string, describedBy: string | undefined) => ReactNode;
};

/** A labelled control with an optional hint and error (both tied to the control for screen readers). */
export function Field({ label, hint, error, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errId = error ? `${id}-err` : undefined;
  const describedBy = [hintId, errId].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, describedBy)}
      {hint && (
        <div className="hint" id={hintId}>
          {hint}
        </div>
      )}
      {error && (
        <div className="field-error" id={errId}>
          {error}
        </div>
      )}
    </div>
  );
}

/** A labelled text input. */
export function TextField({
  label,
  hint,
  error,
  ...rest
}: { label: string; hint?: ReactNode; error?: string } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(id, d) => <input id={id} aria-describedby={d} aria-invalid={error ? true : undefined} {...rest} />}
    </Field>
  );
}

/** A labelled text area. */
export function TextArea({
  label,
  hint,
  error,
  ...rest
}: { label: string; hint?: ReactNode; error?: string } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(id, d) => <textarea id={id} aria-describedby={d} aria-invalid={error ? true : undefined} {...rest} />}
    </Field>
  );
}

/** A text area for code or JSON: monospaced, not spell-checked. */
export function CodeArea(props: Parameters<typeof TextArea>[0]) {
  return <TextArea className="code" spellCheck={false} {...props} />;
}

/** A field for the 6-digit code of an authenticator app. */
export function CodeField(props: { label: string; hint?: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  return <TextField inputMode="numeric" autoComplete="one-time-code" required {...props} />;
}

/** A labelled select. */
export function SelectField({
  label,
  hint,
  options,
  ...rest
}: {
  label: string;
  hint?: ReactNode;
  options: readonly (string | { value: string; label: string })[];
} & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <Field label={label} hint={hint}>
      {(id, d) => (
        <select id={id} aria-describedby={d} {...rest}>
          {options.map((o) =>
            typeof o === 'string' ? (
              <option key={o} value={o}>
                {o}
              </option>
            ) : (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ),
          )}
        </select>
      )}
    </Field>
  );
}

/** A labelled checkbox. */
export function Check({ label, ...rest }: { label: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="check">
      <input type="checkbox" id={id} {...rest} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}

/** A set of checkboxes choosing some of `options` (kept in the order they are ticked). */
export function CheckGroup({
  legend,
  options,
  value,
  onChange,
}: {
  legend: string;
  options: readonly string[];
  value: string[];
  onChange: (value: string[]) => void;
}) {
  return (
    <fieldset className="card">
      <legend>{legend}</legend>
      {options.map((o) => (
        <Check
          key={o}
          label={o}
          checked={value.includes(o)}
          onChange={(e) => onChange(e.target.checked ? [...value, o] : value.filter((x) => x !== o))}
        />
      ))}
    </fieldset>
  );
}

/** The banner of the answers that mean the operator suspended the project or the account. */
const SUSPENDED: Record<string, string> = {
  PROJECT_SUSPENDED: 'This project is suspended by the operator',
  TENANT_SUSPENDED: 'This account is suspended by the operator',
};

/** An API error as the user needs it: what went wrong, its code and the request id to quote. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const e = error as Error;
  const code = isTesseraError(error) ? error.code : undefined;
  const requestId = isTesseraError(error) ? error.requestId : undefined;
  const status = isTesseraError(error) ? error.status : undefined;
  const details = isTesseraError(error) ? error.details : undefined;
  // A suspension is the operator's decision, not a fault: say so plainly whatever the page was doing.
  const suspended = code ? SUSPENDED[code] : undefined;
  return (
    <div className={`error-box${suspended ? ' suspended' : ''}`} role="alert">
      <strong>{suspended ?? title ?? 'Something went wrong'}</strong>
      <p className="error-message">{e.message || String(error)}</p>
      <dl className="error-meta">
        {code && (
          <>
            <dt>Code</dt>
            <dd>
              <code>{code}</code>
              {status ? ` (HTTP ${status})` : ''}
            </dd>
          </>
        )}
        {requestId && (
          <>
            <dt>Request id</dt>
            <dd>
              <code className="request-id">{requestId}</code> <CopyButton value={requestId} label="Copy request id" />
            </dd>
          </>
        )}
        {details && Object.keys(details).length > 0 && (
          <>
            <dt>Details</dt>
            <dd>
              <code>{JSON.stringify(details)}</code>
            </dd>
          </>
        )}
      </dl>
    </div>
  );
}

/** What an empty list means and what to do about it. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty" role="status">
      <strong>{title}</strong>
      {children && <div>{children}</div>}
    </div>
  );
}

/** A loading line, announced politely. */
export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** A page heading with actions on the right. */
export function PageHeader({
  title,
  children,
  description,
}: {
  title: string;
  children?: ReactNode;
  description?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {description && <p className="muted">{description}</p>}
      </div>
      {children && <div className="actions">{children}</div>}
    </header>
  );
}

/** The link back to the list a detail page belongs to. */
export function BackLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <p>
      <Link href={href}>{children}</Link>
    </p>
  );
}

/** A column heading of a DataTable: a plain label, or a cell of its own (a sort button) with its sort state. */
export type TableColumn = string | { key: string; label: ReactNode; sort?: 'ascending' | 'descending' };

/** A table of records: column headings (and a last, unlabelled-to-the-eye "Actions" column when `actions`), rows. */
export function DataTable({
  columns,
  label,
  actions,
  wide,
  children,
}: {
  columns: readonly TableColumn[];
  label?: string;
  actions?: boolean;
  /** A table wider than a screen: its scrolling box can be focused and scrolled with the keyboard. */
  wide?: boolean;
  children: ReactNode;
}) {
  return (
    <div
      className="table-wrap"
      {...(wide
        ? { tabIndex: 0, role: 'region', 'aria-label': label ? `${label} (scrolls sideways)` : undefined }
        : {})}
    >
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((c) =>
              typeof c === 'string' ? (
                <th key={c} scope="col">
                  {c}
                </th>
              ) : (
                <th key={c.key} scope="col" aria-sort={c.sort}>
                  {c.label}
                </th>
              ),
            )}
            {actions && (
              <th scope="col">
                <span className="sr-only-label">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** Previous and next page buttons (and the page number when given). */
export function Pager({
  label,
  page,
  hasPrevious,
  hasNext,
  onPrevious,
  onNext,
  previous = 'Previous page',
  next = 'Next page',
}: {
  label: string;
  page?: number;
  hasPrevious: boolean;
  hasNext: boolean;
  onPrevious: () => void;
  onNext: () => void;
  previous?: string;
  next?: string;
}) {
  return (
    <nav className="actions" aria-label={label}>
      <Button disabled={!hasPrevious} onClick={onPrevious}>
        {previous}
      </Button>
      {page !== undefined && <span className="muted">Page {page}</span>}
      <Button disabled={!hasNext} onClick={onNext}>
        {next}
      </Button>
    </nav>
  );
}

/** A section with a heading. */
export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  const id = useId();
  return (
    <section className="card" aria-labelledby={id}>
      <div className="card-head">
        <h2 id={id}>{title}</h2>
        {actions && <div className="actions">{actions}</div>}
      </div>
      {children}
    </section>
  );
}

/**
 * A section holding one form: `intro`, the fields, the submit button (busy while `action` runs), the action's error
 * (titled `failed`), then `after`.
 */
export function FormSection({
  title,
  intro,
  submit,
  action,
  failed,
  onSubmit,
  className,
  after,
  children,
}: {
  title: string;
  intro?: ReactNode;
  submit: string;
  action: { isPending: boolean; error: unknown };
  failed?: string;
  onSubmit: () => unknown;
  className?: string;
  after?: ReactNode;
  children: ReactNode;
}) {
  return (
    <Section title={title}>
      {intro}
      <Form className={className} onSubmit={onSubmit}>
        {children}
        <Button type="submit" variant="primary" busy={action.isPending}>
          {submit}
        </Button>
      </Form>
      <ErrorBox error={action.error} title={failed} />
      {after}
    </Section>
  );
}

/** Copies a value to the clipboard and says so. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const toast = useToast();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard refused (insecure origin, no permission): select-and-copy through a hidden field instead.
      const t = document.createElement('textarea');
      t.value = value;
      t.setAttribute('readonly', '');
      t.style.position = 'fixed';
      t.style.opacity = '0';
      document.body.append(t);
      t.select();
      document.execCommand('copy');
      t.remove();
    }
    toast('Copied to the clipboard');
  };
  return (
    <Button variant="ghost" className="btn-small" onClick={() => void copy()} aria-label={label}>
      Copy
    </Button>
  );
}

/** A value with a copy button. */
export function CopyField({ label, value }: { label: string; value: string }) {
  return (
    <div className="copy-field">
      <span className="label">{label}</span>
      <code data-testid={`value-${label}`}>{value}</code>
      <CopyButton value={value} label={`Copy ${label}`} />
    </div>
  );
}

/** A secret: hidden until revealed, copyable either way. */
export function Secret({ label, value }: { label: string; value: string }) {
  const [shown, setShown] = useState(false);
  return (
    <div className="copy-field">
      <span className="label">{label}</span>
      <code data-testid={`secret-${label}`}>{shown ? value : `${value.slice(0, 8)}${'•'.repeat(16)}`}</code>
      <Button
        variant="ghost"
        className="btn-small"
        aria-pressed={shown}
        aria-label={`${shown ? 'Hide' : 'Reveal'} ${label}`}
        onClick={() => setShown(!shown)}
      >
        {shown ? 'Hide' : 'Reveal'}
      </Button>
      <CopyButton value={value} label={`Copy ${label}`} />
    </div>
  );
}

/** Tabs as links (each tab is a place in the URL). */
export function Tabs({ tabs, label }: { tabs: { href: string; label: string; also?: string[] }[]; label: string }) {
  const [location] = useLocation();
  const under = (href: string) => location === href || location.startsWith(`${href}/`);
  // A tab is also current on the addresses it names in `also` (the area's bare address, an item of its list).
  const direct = tabs.some((t) => under(t.href));
  return (
    <nav className="tabs" aria-label={label}>
      {tabs.map((t) => {
        const active =
          under(t.href) || (!direct && (t.also ?? []).some((a) => location === a || location.startsWith(`${a}/`)));
        return (
          <Link
            key={t.href}
            href={t.href}
            className={active ? 'tab active' : 'tab'}
            aria-current={active ? 'page' : undefined}
          >
            {t.label}
          </Link>
        );
      })}
    </nav>
  );
}

/** A tab of an Area: its address under the area (`path`), its label, and its page. */
export type AreaTab = { path: string; label: string; page: ReactNode; also?: string[] };
/** A page of an Area that is not a tab (a new item, one item), with the address's parameters. */
export type AreaRoute = { path: string; page: (params: { [name: string]: string | undefined }) => ReactNode };

/**
 * A project's area (database, storage, functions, settings): its heading, its tabs and the page of the address. The
 * first tab is also the area's bare address (and the addresses in its `also`), and is shown for any address under the
 * area that nothing else names; `routes` (pages that are not tabs) are matched before the tabs.
 */
export function Area({
  title,
  description,
  label,
  base,
  tabs,
  routes = [],
}: {
  title: string;
  description?: string;
  label: string;
  base: string;
  tabs: [AreaTab, ...AreaTab[]];
  routes?: AreaRoute[];
}) {
  const [first, ...rest] = tabs;
  return (
    <>
      <PageHeader title={title} description={description} />
      <Tabs
        label={label}
        tabs={tabs.map((t) => ({
          href: `${base}/${t.path}`,
          label: t.label,
          ...(t === first ? { also: [...(t.also ?? []).map((a) => `${base}/${a}`), base] } : {}),
        }))}
      />
      <Switch>
        {routes.map((r) => (
          <Route key={r.path} path={`${base}/${r.path}`}>
            {(params) => r.page(params)}
          </Route>
        ))}
        {rest.map((t) => (
          <Route key={t.path} path={`${base}/${t.path}`}>
            {t.page}
          </Route>
        ))}
        <Route>{first.page}</Route>
      </Switch>
    </>
  );
}

/** A status badge. */
export function Badge({
  tone = 'neutral',
  children,
}: {
  tone?: 'neutral' | 'good' | 'bad' | 'warn';
  children: ReactNode;
}) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

// --- toasts -----------------------------------------------------------------------------------------------------

const ToastContext = createContext<(message: string) => void>(() => {});

/** Shows a short message in the polite live region. */
export const useToast = () => useContext(ToastContext);

export function ToastProvider({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<{ id: number; message: string }[]>([]);
  const next = useRef(0);
  const push = useCallback((message: string) => {
    const id = ++next.current;
    setItems((xs) => [...xs.slice(-1), { id, message }]);
    window.setTimeout(() => setItems((xs) => xs.filter((x) => x.id !== id)), 3000);
  }, []);
  return (
    <ToastContext.Provider value={push}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {items.map((t) => (
          <div key={t.id} className="toast">
            {t.message}
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

// --- confirmation ------------------------------------------------------------------------------------------------

export type ConfirmRequest = {
  title: string;
  body: ReactNode;
  /** The button's words, e.g. "Delete project". */
  action: string;
  /** When set, the user types this text before the button works (for what cannot be undone). */
  typed?: string;
  danger?: boolean;
};

const ConfirmContext = createContext<(req: ConfirmRequest) => Promise<boolean>>(async () => false);

/** Asks before a destructive action; resolves true when confirmed. */
export const useConfirm = () => useContext(ConfirmContext);

/** A button that asks first (`ask`, the confirmation dialog's words) and runs `onConfirm` once confirmed. */
export function ConfirmButton({
  ask,
  onConfirm,
  ...rest
}: ButtonProps & { ask: ConfirmRequest; onConfirm: () => void }) {
  const confirm = useConfirm();
  return (
    <Button
      {...rest}
      onClick={async () => {
        if (await confirm(ask)) onConfirm();
      }}
    />
  );
}

/**
 * The small "Delete" button of a list's row or card, asking first: its accessible name is "Delete <what>", the
 * dialog asks "Delete <what>?" (or `title`) and explains `body`; `typed` makes the user type it first.
 */
export function DeleteButton({
  what,
  body,
  action = 'Delete',
  title,
  typed,
  busy,
  onConfirm,
}: {
  what: string;
  body: ReactNode;
  action?: string;
  title?: string;
  typed?: string;
  busy?: boolean;
  onConfirm: () => void;
}) {
  return (
    <ConfirmButton
      className="btn-small"
      variant="danger"
      busy={busy}
      aria-label={`Delete ${what}`}
      ask={{ title: title ?? `Delete ${what}?`, body, action, typed }}
      onConfirm={onConfirm}
    >
      Delete
    </ConfirmButton>
  );
}

export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [req, setReq] = useState<(ConfirmRequest & { resolve: (ok: boolean) => void }) | null>(null);
  const [typed, setTyped] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  const ask = useCallback(
    (r: ConfirmRequest) =>
      new Promise<boolean>((resolve) => {
        setTyped('');
        setReq({ ...r, resolve });
      }),
    [],
  );
  useEffect(() => {
    if (req && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [req]);
  const close = (ok: boolean) => {
    req?.resolve(ok);
    dialog.current?.close();
    setReq(null);
  };
  const allowed = !req?.typed || typed === req.typed;
  const titleId = useId();
  return (
    <ConfirmContext.Provider value={ask}>
      {children}
      <dialog
        ref={dialog}
        className="dialog"
        aria-labelledby={titleId}
        onCancel={(e) => {
          e.preventDefault();
          close(false);
        }}
      >
        {req && (
          <form
            method="dialog"
            onSubmit={(e) => {
              e.preventDefault();
              if (allowed) close(true);
            }}
          >
            <h2 id={titleId}>{req.title}</h2>
            <div className="dialog-body">{req.body}</div>
            {req.typed && (
              <TextField
                label={`Type ${req.typed} to confirm`}
                value={typed}
                onChange={(e) => setTyped(e.target.value)}
                autoComplete="off"
                autoFocus
                spellCheck={false}
              />
            )}
            <div className="dialog-actions">
              <Button onClick={() => close(false)} autoFocus={!req.typed}>
                Cancel
              </Button>
              <Button type="submit" variant={req.danger === false ? 'primary' : 'danger'} disabled={!allowed}>
                {req.action}
              </Button>
            </div>
          </form>
        )}
      </dialog>
    </ConfirmContext.Provider>
  );
}
