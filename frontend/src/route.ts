// Hash routes: #/, #/circuits/<id>, #/runs/<id>.

export type Route =
  | { page: 'circuits' }
  | { page: 'circuit'; id: number }
  | { page: 'run'; id: number }
  | { page: 'notFound'; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/' || path === '') return { page: 'circuits' };
  const match = /^\/(circuits|runs)\/(\d+)\/?$/.exec(path);
  if (match) {
    const id = Number(match[2]);
    return match[1] === 'circuits' ? { page: 'circuit', id } : { page: 'run', id };
  }
  return { page: 'notFound', path };
}

export const circuitHref = (id: number) => `#/circuits/${id}`;
export const runHref = (id: number) => `#/runs/${id}`;

export function navigate(href: string): void {
  window.location.hash = href.replace(/^#/, '');
}
