// Hash routes: #/, #/circuits/<id>, #/circuits/<id>/threads/<thread> (a comment thread opened), #/circuits/new, #/mentions, #/runs (all of a user's runs), #/runs/<id>, #/signup, #/shared/<token>.
// Shared links and sign-up also work as paths (/shared/<token>, /signup), which Django
// serves with the same page.

export type Route =
  | { page: 'circuits' }
  | { page: 'circuit'; id: number; thread?: number }
  | { page: 'mentions' }
  | { page: 'newCircuit' }
  | { page: 'run'; id: number }
  | { page: 'runs' }
  | { page: 'signup' }
  | { page: 'shared'; token: string }
  | { page: 'notFound'; path: string };

export function parseRoute(hash: string, pathname = '/'): Route {
  const path = hash.replace(/^#/, '') || (pathname !== '/' ? pathname : '/');
  if (path === '/' || path === '') return { page: 'circuits' };
  if (/^\/circuits\/new\/?$/.test(path)) return { page: 'newCircuit' };
  if (/^\/signup\/?$/.test(path)) return { page: 'signup' };
  if (/^\/runs\/?$/.test(path)) return { page: 'runs' };
  if (/^\/mentions\/?$/.test(path)) return { page: 'mentions' };
  const thread = /^\/circuits\/(\d+)\/threads\/(\d+)\/?$/.exec(path);
  if (thread) return { page: 'circuit', id: Number(thread[1]), thread: Number(thread[2]) };
  const shared = /^\/shared\/([A-Za-z0-9_-]+)\/?$/.exec(path);
  if (shared) return { page: 'shared', token: shared[1]! };
  const match = /^\/(circuits|runs)\/(\d+)\/?$/.exec(path);
  if (match) {
    const id = Number(match[2]);
    return match[1] === 'circuits' ? { page: 'circuit', id } : { page: 'run', id };
  }
  return { page: 'notFound', path };
}

export const circuitHref = (id: number) => `#/circuits/${id}`;
export const newCircuitHref = '#/circuits/new';
export const runHref = (id: number) => `#/runs/${id}`;
export const runsHref = '#/runs';
export const mentionsHref = '#/mentions';
export const threadHref = (circuit: number, thread: number) => `#/circuits/${circuit}/threads/${thread}`;
export const signupHref = '#/signup';
export const sharedHref = (token: string) => `#/shared/${token}`;

export function navigate(href: string): void {
  // Path routes (/shared/<token>, /signup) hand over to hash routes at the root.
  if (window.location.pathname !== '/' && href.startsWith('#')) {
    window.location.assign(`/${href}`);
    return;
  }
  window.location.hash = href.replace(/^#/, '');
}
