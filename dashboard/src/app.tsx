// The app's shell and routes. Every page is a place in the URL (under /dashboard); a project's pages live under
// /p/<project id>/..., so switching project keeps the page. Signed out, every address shows the sign-in page and,
// once signed in, the page that was asked for.
import { lazy, Suspense, useEffect, useState, type ReactNode } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Route, Switch, useLocation } from 'wouter';
import { platform, endSession, useSession } from './lib/session.ts';
import { Button, ErrorBox, Loading } from './ui/index.tsx';
import { ConfirmEmail, ForgotPassword, ResetPassword, SignIn, SignUp } from './pages/sign-in.tsx';
import { projectOf, samePageIn } from './lib/routes.ts';
// The home page loads with the shell (it is the first screen after signing in); the rest load on demand.
import Projects from './pages/projects.tsx';

const Account = lazy(() => import('./pages/account.tsx'));
const ProjectArea = lazy(() => import('./pages/project-area.tsx'));
// The operator's area: its own sign-in (an operator key), with or without a tenant session.
const OperatorArea = lazy(() => import('./pages/operator/index.tsx'));

export function App() {
  const session = useSession();
  const queries = useQueryClient();
  const [location] = useLocation();
  useEffect(() => {
    if (!session) queries.clear();
  }, [session, queries]);
  if (/^\/operator(?:\/|$)/.test(location))
    return (
      <Suspense fallback={<Loading />}>
        <OperatorArea />
      </Suspense>
    );
  if (!session) {
    return (
      <Switch>
        <Route path="/sign-up">
          <SignUp />
        </Route>
        <Route path="/forgot-password">
          <ForgotPassword />
        </Route>
        <Route path="/reset-password">
          <ResetPassword />
        </Route>
        <Route path="/confirm-email">
          <ConfirmEmail />
        </Route>
        <Route>
          <SignIn />
        </Route>
      </Switch>
    );
  }
  return (
    <Shell>
      <Suspense fallback={<Loading />}>
        <Switch>
          {/* The projects: at /, and at /sign-in and /sign-up, where signing in or up leaves the user. */}
          <Route path={/^(?:\/sign-in|\/sign-up)?\/?$/i}>
            <Projects />
          </Route>
          <Route path="/account">
            <Account />
          </Route>
          {/* A new address is confirmed from its mail whether or not this browser is signed in. */}
          <Route path="/confirm-email">
            <ConfirmEmail />
          </Route>
          <Route path={/^\/p\/[^/]+(?:\/.*)?$/}>
            <ProjectArea />
          </Route>
          <Route>
            <NotFound />
          </Route>
        </Switch>
      </Suspense>
    </Shell>
  );
}

function NotFound() {
  return (
    <div className="card">
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link href="/">Go to your projects</Link>.
      </p>
    </div>
  );
}

const NAV: { group: string; items: { href: string; label: string }[] }[] = [
  {
    group: 'Project',
    items: [
      { href: '/settings', label: 'Settings' },
      { href: '/requests', label: 'Requests' },
      { href: '/branding', label: 'Branding' },
    ],
  },
  {
    group: 'Build',
    items: [
      { href: '/auth', label: 'Authentication' },
      { href: '/database', label: 'Database' },
      { href: '/storage', label: 'Storage' },
      { href: '/functions', label: 'Edge functions' },
    ],
  },
];

function Shell({ children }: { children: ReactNode }) {
  const [location, navigate] = useLocation();
  // Signing in or up at /sign-in or /sign-up lands on the projects: the address follows the page.
  useEffect(() => {
    if (/^\/(?:sign-in|sign-up)\/?$/i.test(location)) navigate('/', { replace: true });
  }, [location, navigate]);
  const [menuOpen, setMenuOpen] = useState(false);
  const current = projectOf(location);
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => platform.tenant.projects.list() });
  useEffect(() => setMenuOpen(false), [location]);
  const signOut = async () => {
    try {
      await platform.tenant.logout();
    } catch {
      // the session may already be over: sign out locally anyway
    }
    endSession();
    navigate('/');
  };
  const isActive = (href: string) => location === href || location.startsWith(`${href}/`);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="btn menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="sidenav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <Link href="/" className="brand">
          Tessera
        </Link>
        {projects.data && projects.data.length > 0 && (
          <>
            <label htmlFor="project-switch" className="sr-only-label">
              Project
            </label>
            <select
              id="project-switch"
              value={current?.id ?? ''}
              onChange={(e) =>
                e.target.value &&
                navigate(
                  current
                    ? samePageIn(current.rest, e.target.value)
                    : `/p/${encodeURIComponent(e.target.value)}/settings`,
                )
              }
            >
              {!current && <option value="">Choose a project…</option>}
              {projects.data.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </>
        )}
        <span className="spacer" />
        <Link href="/account">Account</Link>
        <Button onClick={() => void signOut()}>Sign out</Button>
      </header>
      <nav id="sidenav" className={`sidenav${menuOpen ? ' open' : ''}`} aria-label="Main">
        <ul>
          <li>
            <Link href="/" aria-current={location === '/' ? 'page' : undefined}>
              Projects
            </Link>
          </li>
          <li>
            <Link href="/account" aria-current={isActive('/account') ? 'page' : undefined}>
              Account
            </Link>
          </li>
        </ul>
        {current &&
          NAV.map((g) => (
            <div key={g.group}>
              <div className="group">{g.group}</div>
              <ul>
                {g.items.map((i) => {
                  const href = `/p/${encodeURIComponent(current.id)}${i.href}`;
                  return (
                    <li key={i.href}>
                      <Link href={href} aria-current={isActive(href) ? 'page' : undefined}>
                        {i.label}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            </div>
          ))}
      </nav>
      <main id="main" tabIndex={-1}>
        {projects.error ? <ErrorBox error={projects.error} title="Could not list your projects" /> : null}
        {children}
      </main>
    </div>
  );
}
