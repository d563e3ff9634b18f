import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api';
import { ErrorText, messagesOf } from '../components/ErrorText';
import { formatTime } from '../format';
import { connectorsApi, positionText, type RunConnector } from './connectorsApi';

interface Props {
  runId: number;
  /** The run's last tick: a new one re-reads the connectors' progress. */
  tick: number;
  /** The run's status: a change re-reads their state (paused follows the run). */
  status: string;
  finished: boolean;
}

/** While the run is live the connectors are re-read on each tick and every few seconds:
 * a source that fails or retries produces no tick. */
export const CONNECTORS_POLL_MS = 3000;

/** The run's connectors: state, position, records in/out, last tick, last error; a
 * failed one can be restarted (operators; the server refuses others). */
export function ConnectorStatus({ runId, tick, status, finished }: Props) {
  const [connectors, setConnectors] = useState<RunConnector[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(() => {
    connectorsApi.list(runId).then(
      (list) => setConnectors(list),
      (error) => {
        // an older server without connectors: say nothing
        if (!(error instanceof ApiError && error.status === 404)) setErrors(messagesOf(error));
      },
    );
  }, [runId]);

  useEffect(load, [load, tick, status]);
  useEffect(() => {
    if (finished) return;
    const timer = setInterval(load, CONNECTORS_POLL_MS);
    return () => clearInterval(timer);
  }, [finished, load]);

  async function restart(name: string) {
    setBusy(name);
    setErrors([]);
    try {
      const updated = await connectorsApi.restart(runId, name);
      setConnectors((list) => (list ?? []).map((c) => (c.name === name ? updated : c)));
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(null);
    }
  }

  if (connectors === null || connectors.length === 0) return errors.length ? <ErrorText messages={errors} /> : null;
  return (
    <details className="card connectors-card" open data-testid="connectors-section">
      <summary>
        <h2>Connectors</h2>
      </summary>
      <ErrorText messages={errors} testId="connector-action-error" />
      <table className="connectors-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Kind</th>
            <th>Node</th>
            <th>State</th>
            <th>Position</th>
            <th>Records in</th>
            <th>Records out</th>
            <th>Last tick</th>
            <th>Last error</th>
          </tr>
        </thead>
        <tbody>
          {connectors.map((c) => (
            <tr key={c.name} data-testid={`connector-${c.name}`}>
              <td>
                <code>{c.name}</code>
              </td>
              <td>{c.kind}</td>
              <td>
                <code>{c.node}</code>
              </td>
              <td>
                <span className={`status status-${c.state}`} data-testid={`connector-state-${c.name}`}>
                  {c.state}
                </span>
                {c.state === 'failed' && (
                  <button type="button" className="small" disabled={busy === c.name} onClick={() => void restart(c.name)}
                    data-testid={`connector-restart-${c.name}`}>
                    Restart
                  </button>
                )}
              </td>
              <td className="connector-position">{positionText(c.position)}</td>
              <td data-testid={`connector-in-${c.name}`}>{c.records_in}</td>
              <td data-testid={`connector-out-${c.name}`}>{c.records_out}</td>
              <td>{c.last_tick >= 0 ? c.last_tick : '–'}</td>
              <td className="connector-error" data-testid={`connector-error-${c.name}`}>
                {c.last_error ? (
                  <>
                    {c.error_at && <span className="muted">{formatTime(c.error_at)} </span>}
                    {c.last_error}
                  </>
                ) : (
                  ''
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
