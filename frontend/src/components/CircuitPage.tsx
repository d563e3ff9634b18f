import { useEffect, useState } from 'react';
import { api, type Circuit, type CircuitDocument, type Run } from '../api';
import { orderNodes } from '../circuitGraph';
import { formatTime, formatValue } from '../format';
import { navigate, runHref } from '../route';
import { ErrorText, messagesOf } from './ErrorText';

interface Props {
  circuitId: number;
}

export function CircuitPage({ circuitId }: Props) {
  const [circuit, setCircuit] = useState<Circuit | null>(null);
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [startErrors, setStartErrors] = useState<string[]>([]);
  const [starting, setStarting] = useState(false);

  useEffect(() => {
    let active = true;
    setCircuit(null);
    setRuns(null);
    setErrors([]);
    Promise.all([api.getCircuit(circuitId), api.listRuns(circuitId)]).then(
      ([c, r]) => {
        if (!active) return;
        setCircuit(c);
        setRuns(r);
      },
      (error) => active && setErrors(messagesOf(error)),
    );
    return () => {
      active = false;
    };
  }, [circuitId]);

  async function startRun() {
    setStarting(true);
    setStartErrors([]);
    try {
      const run = await api.startRun(circuitId);
      navigate(runHref(run.id));
    } catch (error) {
      setStartErrors(messagesOf(error));
      setStarting(false);
    }
  }

  if (errors.length) return <ErrorText messages={errors} />;
  if (!circuit) return <p className="muted">Loading…</p>;

  const version = circuit.latest_version;
  return (
    <section>
      <p className="breadcrumb">
        <a href="#/">Circuits</a> /
      </p>
      <div className="page-head">
        <div>
          <h1 data-testid="circuit-name">{circuit.name}</h1>
          {circuit.description && <p className="description">{circuit.description}</p>}
          <p className="meta">
            {circuit.owner} · <span className={`badge visibility-${circuit.visibility}`}>{circuit.visibility}</span>
            {version && ` · version ${version.number} saved ${formatTime(version.created_at)}`}
          </p>
        </div>
        <div className="actions">
          <button className="primary" data-testid="start-run" onClick={startRun} disabled={starting || !version}>
            {starting ? 'Starting…' : 'Start run'}
          </button>
        </div>
      </div>
      <ErrorText messages={startErrors} />

      <div className="columns">
        <div className="card">
          <h2>Circuit</h2>
          {version ? <DocumentView document={version.document} /> : <p className="muted">No version saved yet.</p>}
        </div>
        <div className="card">
          <h2>Runs</h2>
          <RunList runs={runs ?? []} />
        </div>
      </div>
    </section>
  );
}

function DocumentView({ document }: { document: CircuitDocument }) {
  const nodes = orderNodes(document);
  const edges = document.edges ?? [];
  if (nodes.length === 0) return <p className="muted">This circuit has no nodes.</p>;
  return (
    <>
      <ol className="node-list">
        {nodes.map(({ node, inputs }) => (
          <li key={node.id} className={`node node-${node.kind}`} data-testid="circuit-node" data-node-id={node.id}>
            <div className="node-head">
              <span className="badge kind">{node.kind}</span>
              <code className="node-id">{node.id}</code>
              {inputs.length > 0 && (
                <span className="node-inputs">
                  ←{' '}
                  {inputs
                    .map((e) => `${e.from.node}.${e.from.port}${e.to.port !== 'in' ? ` → ${e.to.port}` : ''}`)
                    .join(', ')}
                </span>
              )}
            </div>
            <Params params={node.params ?? {}} />
          </li>
        ))}
      </ol>
      {edges.length > 0 && (
        <details className="edges">
          <summary>{edges.length} edges</summary>
          <ul>
            {edges.map((e, i) => (
              <li key={i}>
                <code>
                  {e.from.node}.{e.from.port} → {e.to.node}.{e.to.port}
                </code>
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

function Params({ params }: { params: Record<string, unknown> }) {
  const entries = Object.entries(params);
  if (entries.length === 0) return null;
  return (
    <dl className="params">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>
            <code>{formatParam(value)}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Column lists ([{name, type}]) read as "id bigint, amount double"; anything else as JSON. */
function formatParam(value: unknown): string {
  const isColumn = (c: unknown) =>
    typeof c === 'object' && c !== null && typeof (c as { name?: unknown }).name === 'string' && 'type' in c;
  if (Array.isArray(value) && value.length > 0 && value.every(isColumn)) {
    return value.map((c: { name: string; type: unknown }) => `${c.name} ${formatValue(c.type)}`).join(', ');
  }
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : formatValue(value);
}

function RunList({ runs }: { runs: Run[] }) {
  if (runs.length === 0) return <p className="muted">No runs yet.</p>;
  return (
    <table className="runs">
      <thead>
        <tr>
          <th>Run</th>
          <th>Status</th>
          <th>Version</th>
          <th>Tick</th>
          <th>Started</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.id}>
            <td>
              <a href={runHref(run.id)} data-testid="run-link">
                Run #{run.id}
              </a>
            </td>
            <td>
              <span className={`status status-${run.status}`}>{run.status}</span>
            </td>
            <td>{run.version}</td>
            <td>{run.current_tick}</td>
            <td>{formatTime(run.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
