// Circuits: mine, shared with me, public; search; fork; share; new circuit.

import { useEffect, useState } from 'react';
import { editorApi, type EditorCircuit, type Scope } from '../api/editor';
import { formatTime } from '../format';
import { request, type Run } from '../api';
import { circuitHref, navigate, newCircuitHref, runHref } from '../route';
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
            <CircuitCard key={circuit.id} circuit={circuit} username={username} onShare={setSharing} onFork={(c) => void fork(c)} />
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
              No circuits yet. <a href={newCircuitHref}>Create one</a>, or start from a demo below.
            </>
          ) : (
            'Nothing here yet.'
          )}
        </p>
      )}
      {/* A new user's first page: the public demo circuits, to open, run or fork. */}
      {circuits !== null && circuits.length === 0 && scope === 'mine' && !query && (
        <Demos username={username} onShare={setSharing} onFork={(c) => void fork(c)} />
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

interface CardProps {
  circuit: EditorCircuit;
  username?: string | null;
  onShare: (c: EditorCircuit) => void;
  onFork: (c: EditorCircuit) => void;
}

/** One circuit: name and description (clamped; whole on hover), its latest run, actions. */
function CircuitCard({ circuit, username, onShare, onFork }: CardProps) {
  return (
    <li className="card circuit-item" data-testid="circuit-item" data-circuit-id={circuit.id}>
      <div className="circuit-item-head">
        <a href={circuitHref(circuit.id)} className="circuit-link clamp-2" title={circuit.name}>
          {circuit.name}
        </a>
        <span className={`badge visibility-${circuit.visibility}`}>{circuit.visibility}</span>
        <span className="actions">
          {username && circuit.owner === username && (
            <button type="button" data-testid={`share-${circuit.id}`} onClick={() => onShare(circuit)}>
              Share
            </button>
          )}
          <button type="button" data-testid={`fork-${circuit.id}`} onClick={() => onFork(circuit)}>
            Fork
          </button>
        </span>
      </div>
      {circuit.description && (
        <p className="description clamp-3" title={circuit.description} data-testid="circuit-description">
          {circuit.description}
        </p>
      )}
      <LatestRun circuitId={circuit.id} />
      <p className="meta">
        {circuit.owner}
        {circuit.latest_version ? ` · version ${circuit.latest_version.number}` : ' · no version'}
        {circuit.forked_from ? ` · fork of #${circuit.forked_from}` : ''}
        {` · updated ${formatTime(circuit.updated_at)}`}
      </p>
    </li>
  );
}

/** The circuit's newest run and its status, linked; "no runs yet" otherwise. */
function LatestRun({ circuitId }: { circuitId: number }) {
  const [run, setRun] = useState<Run | null | undefined>(undefined);
  useEffect(() => {
    let active = true;
    request<{ results: Run[] }>('GET', `/api/circuits/${circuitId}/runs/`).then(
      (page) => active && setRun(page.results.reduce<Run | null>((newest, r) => (!newest || r.id > newest.id ? r : newest), null)),
      () => active && setRun(null),
    );
    return () => {
      active = false;
    };
  }, [circuitId]);
  if (run === undefined) return null;
  return (
    <p className="meta card-run" data-testid={`card-run-${circuitId}`} data-status={run?.status ?? 'none'}>
      {run ? (
        <a href={runHref(run.id)}>
          run #{run.id} <span className={`status status-${run.status}`}>{run.status}</span> · tick {run.current_tick}
        </a>
      ) : (
        'no runs yet'
      )}
    </p>
  );
}

function Demos({ username, onShare, onFork }: Omit<CardProps, 'circuit'>) {
  const [demos, setDemos] = useState<EditorCircuit[] | null>(null);
  useEffect(() => {
    let active = true;
    editorApi.listCircuits({ scope: 'public' }).then(
      (body) => active && setDemos(body.results),
      () => active && setDemos([]),
    );
    return () => {
      active = false;
    };
  }, []);
  if (!demos?.length) return null;
  return (
    <section className="demos" data-testid="demo-circuits">
      <h2>Demo circuits</h2>
      <p className="muted">Open one to see it and run it; Fork makes it yours to edit.</p>
      <ul className="circuit-list">
        {demos.map((circuit) => (
          <CircuitCard key={circuit.id} circuit={circuit} username={username} onShare={onShare} onFork={onFork} />
        ))}
      </ul>
    </section>
  );
}
