// Entry point: the query cache, the providers of the design system and the router under /dashboard.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { isTesseraError, SESSION_ERROR_CODES } from '@tessera/client';
import { Router } from 'wouter';
import { App } from './app.tsx';
import { ConfirmProvider, ToastProvider } from './ui/index.tsx';
import { endSession, platform, useSession } from './lib/session.ts';
import { isOperatorError } from './lib/operator-session.ts';
import './ui/ui.css';

/**
 * A 401 about the token left after the client tried to refresh the tenant's session: the session is over, back to
 * sign-in. Any other 401 (a wrong TOTP code or password) is the answer to show, and the session goes on. The
 * operator's calls are apart: their 401 is about the operator key (which signs the operator out), not the tenant.
 */
function onError(err: unknown): void {
  if (isOperatorError(err)) return;
  if (platform.tenant.session && isTesseraError(err) && err.status === 401 && SESSION_ERROR_CODES.has(err.code)) {
    endSession('Your session ended. Sign in again to continue.');
  }
}

const queries = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    // Client errors (4xx) are answers, not hiccups: show them at once.
    queries: {
      retry: (n, err) => !(isTesseraError(err) && err.status >= 400 && err.status < 500) && n < 2,
      refetchOnWindowFocus: false,
      staleTime: 5_000,
    },
  },
});

function Root() {
  const session = useSession();
  // A new sign-in starts from an empty cache: nothing of the previous account stays on screen.
  return <App key={session ? 'in' : 'out'} />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <ToastProvider>
        <ConfirmProvider>
          <Router base="/dashboard">
            <Root />
          </Router>
        </ConfirmProvider>
      </ToastProvider>
    </QueryClientProvider>
  </StrictMode>,
);
