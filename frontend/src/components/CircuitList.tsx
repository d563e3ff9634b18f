// Circuits: mine, shared with me, public; search; fork; share; new circuit.

import { useEffect, useState } from 'react';
import { editorApi, type EditorCircuit, type Scope } from '../api/editor';
import { formatTime } from '../format';
import { circuitHref, navigate, newCircuitHref } from '../route';
import { ErrorText, messagesOf } from './ErrorText';
import { ShareDialog } from './ShareDialog';

const SCOPES: { id: Scope; title: string }[] = [
  { id: 'mine', title: 'Mine' },
  { id: 'shared', title: 'Shared with me' },
  { id: 'public', title: 'Public' },
];

export function CircuitList({ username }: { username?: string | null }) {
  const [scope, setScope] = useState<Scope>('mine');
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [page, setPage] = useState(1);
  const [result, setResult] = useState<{ count: number; next: boolean; previous: boolean; circuits: EditorCircuit[] } | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [sharing, setSharing] = useState<EditorCircuit | null>(null);
  const [reload, setReload] = useState(0);

  // Search as you type, debounced.
  useEffect(() => {
    const timer = setTimeout(() => {
      setQuery(search.trim());
      setPage(1);
    }, 250);
    return () => clearTimeout(timer);
  }, [search]);

  useEffect(() => {
    let active = true;
    setErrors([]);
    editorApi.listCircuits({ scope, search: query, page }).then(
      (body) => active && setResult({ count: body.count, next: !!body.next, previous: !!body.previous, circuits: body.results }),
      (error) => active && setErrors(messagesOf(error)),
    );
    return () => {
      active = false;
    };
  }, [scope, query, page, reload]);

  const fork = async (circuit: EditorCircuit) => {
    try {
      const forked = await editorApi.fork(circuit.id);
      navigate(circuitHref(forked.id));
    } catch (error) {
      setErrors(messagesOf(error));
    }
  };

  const circuits = result?.circuits ?? null;
  return (
    <section>
      <div className="page-head">
        <h1>Circuits</h1>
        <div className="actions">
          <a className="button primary" href={newCircuitHref} data-testid="new-circuit">
            New circuit
          </a>
        </div>
      </div>
      <div className="tabs" role="tablist">
        {SCOPES.map((s) => (
          <button
            key={s.id}
            type="button"
            role="tab"
            aria-selected={scope === s.id}
            className={scope === s.id ? 'on' : ''}
            data-testid={`scope-${s.id}`}
            onClick={() => {
              setScope(s.id);
              setPage(1);
            }}
          >
            {s.title}
          </button>
        ))}
        <input type="search" placeholder="Search circuits" value={search} onChange={(e) => setSearch(e.target.value)} data-testid="circuit-search" />
      </div>
      <ErrorText messages={errors} />
      {circuits === null && errors.length === 0 && <p className="muted">Loading…</p>}
      {circuits !== null && (
        <ul className="circuit-list" data-testid="circuit-list">
          {circuits.map((circuit) => (
            <li key={circuit.id} className="card circuit-item" data-testid="circuit-item" data-circuit-id={circuit.id}>
              <div className="circuit-item-head">
                <a href={circuitHref(circuit.id)} className="circuit-link">
                  {circuit.name}
                </a>
                <span className={`badge visibility-${circuit.visibility}`}>{circuit.visibility}</span>
                <span className="actions">
                  {username && circuit.owner === username && (
                    <button type="button" data-testid={`share-${circuit.id}`} onClick={() => setSharing(circuit)}>
                      Share
                    </button>
                  )}
                  <button type="button" data-testid={`fork-${circuit.id}`} onClick={() => void fork(circuit)}>
                    Fork
                  </button>
                </span>
              </div>
              {circuit.description && <p className="description">{circuit.description}</p>}
              <p className="meta">
                {circuit.owner}
                {circuit.latest_version ? ` · version ${circuit.latest_version.number}` : ' · no version'}
                {circuit.forked_from ? ` · fork of #${circuit.forked_from}` : ''}
                {` · updated ${formatTime(circuit.updated_at)}`}
              </p>
            </li>
          ))}
        </ul>
      )}
      {result && (result.previous || result.next) && (
        <div className="tabs">
          <button type="button" disabled={!result.previous} onClick={() => setPage((p) => p - 1)} data-testid="page-previous">
            Previous
          </button>
          <span className="muted">
            page {page} · {result.count} circuits
          </span>
          <button type="button" disabled={!result.next} onClick={() => setPage((p) => p + 1)} data-testid="page-next">
            Next
          </button>
        </div>
      )}
      {circuits !== null && circuits.length === 0 && (
        <p className="muted">
          {query ? 'No circuit matches.' : scope === 'mine' ? (
            <>
              No circuits yet. <a href={newCircuitHref}>Create one</a>.
            </>
          ) : (
            'Nothing here yet.'
          )}
        </p>
      )}
      {sharing && (
        <ShareDialog
          circuit={sharing}
          onClose={() => setSharing(null)}
          onChanged={() => setReload((r) => r + 1)}
        />
      )}
    </section>
  );
}
