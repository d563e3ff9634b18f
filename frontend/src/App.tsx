import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { api, onAuthProblem } from './api';
import { CircuitList } from './components/CircuitList';
import { ErrorText, messagesOf } from './components/ErrorText';
import { LoginForm } from './components/LoginForm';
import { SignupForm } from './components/SignupForm';

// The editor (React Flow, ELK) and the run dashboard are chunks of their own, loaded when
// their page opens: the circuit list and login come up without them.
const CircuitPage = lazy(() => import('./components/CircuitPage').then((m) => ({ default: m.CircuitPage })));
const SharedPage = lazy(() => import('./components/SharedPage').then((m) => ({ default: m.SharedPage })));
const RunView = lazy(() => import('./components/RunView').then((m) => ({ default: m.RunView })));
import { mayLeave, pendingLoss } from './leaveGuard';
import { parseRoute, runsHref, type Route } from './route';
import { RunsPage } from './components/RunsPage';
import { MentionsBadge } from './collab/comments/MentionsBadge';
import { MentionsPage } from './collab/comments/MentionsPage';

type Auth =
  | { state: 'loading' }
  | { state: 'anonymous' }
  | { state: 'signedIn'; username: string }
  | { state: 'error'; messages: string[] };

function useHashRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash, window.location.pathname));
  useEffect(() => {
    let current = window.location.href;
    const update = (event: HashChangeEvent) => {
      // Unsaved work asks first; staying puts the address back (no new history entry).
      if (event.oldURL === current && !mayLeave()) {
        window.history.replaceState(window.history.state, '', current);
        return;
      }
      current = window.location.href;
      setRoute(parseRoute(window.location.hash, window.location.pathname));
    };
    const beforeUnload = (event: BeforeUnloadEvent) => {
      if (pendingLoss()) event.preventDefault();
    };
    window.addEventListener('hashchange', update);
    window.addEventListener('beforeunload', beforeUnload);
    return () => {
      window.removeEventListener('hashchange', update);
      window.removeEventListener('beforeunload', beforeUnload);
    };
  }, []);
  return route;
}

export function App() {
  const route = useHashRoute();
  const [auth, setAuth] = useState<Auth>({ state: 'loading' });

  const checkSession = useCallback(() => {
    api.me().then(
      (me) =>
        setAuth(me.authenticated && me.username ? { state: 'signedIn', username: me.username } : { state: 'anonymous' }),
      (error) => setAuth({ state: 'error', messages: messagesOf(error) }),
    );
  }, []);

  useEffect(() => {
    checkSession();
    // A 401/403 may mean the session expired: ask the server who we are.
    onAuthProblem(() => {
      api.me().then(
        (me) => {
          if (!me.authenticated) setAuth({ state: 'anonymous' });
        },
        () => undefined,
      );
    });
    return () => onAuthProblem(null);
  }, [checkSession]);

  async function logout() {
    try {
      await api.logout();
      setAuth({ state: 'anonymous' });
    } catch {
      checkSession();
    }
  }

  return (
    <div className="app">
      <header className="topbar">
        <a href="/#/" className="brand">
          dbspweb
        </a>
        {auth.state === 'signedIn' && (
          <div className="user">
            <a href={runsHref} className="nav-link" data-testid="nav-runs">
              My runs
            </a>
            <MentionsBadge />
            <span data-testid="current-user">{auth.username}</span>
            <button className="link" data-testid="logout" onClick={logout}>
              Log out
            </button>
          </div>
        )}
      </header>
      <main className="content">
        <Suspense fallback={<p className="muted">Loading…</p>}>
        {auth.state === 'loading' && <p className="muted">Loading…</p>}
        {auth.state === 'error' && (
          <div>
            <ErrorText messages={auth.messages} />
            <button onClick={checkSession}>Retry</button>
          </div>
        )}
        {auth.state === 'anonymous' && route.page === 'signup' && (
          <SignupForm onSignedUp={(username) => setAuth({ state: 'signedIn', username })} />
        )}
        {auth.state === 'anonymous' && route.page === 'shared' && <SharedPage token={route.token} username={null} />}
        {auth.state === 'anonymous' && route.page !== 'signup' && route.page !== 'shared' && (
          <LoginForm onLogin={(username) => setAuth({ state: 'signedIn', username })} />
        )}
        {auth.state === 'signedIn' && <Page route={route} username={auth.username} />}
        </Suspense>
      </main>
    </div>
  );
}

function Page({ route, username }: { route: Route; username: string }) {
  switch (route.page) {
    case 'circuits':
      return <CircuitList username={username} />;
    case 'circuit':
      return <CircuitPage key={route.id} circuitId={route.id} username={username} thread={route.thread} />;
    case 'newCircuit':
      return <CircuitPage key="new" circuitId={null} username={username} />;
    case 'shared':
      return <SharedPage key={route.token} token={route.token} username={username} />;
    case 'signup':
      return (
        <p className="muted">
          You are signed in as {username}. <a href="/#/">Your circuits</a>
        </p>
      );
    case 'run':
      return <RunView key={route.id} runId={route.id} />;
    case 'runs':
      return <RunsPage />;
    case 'mentions':
      return <MentionsPage />;
    case 'notFound':
      return (
        <p className="muted">
          Nothing at <code>{route.path}</code>. <a href="#/">Back to circuits</a>
        </p>
      );
  }
}
