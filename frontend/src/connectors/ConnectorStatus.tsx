import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api';
import { ErrorText, messagesOf } from '../components/ErrorText';
import { formatTime } from '../format';
import { connectorsApi, lagText, positionText, rateText, type DeadLetter, type RunConnector } from './connectorsApi';

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

/** The latest dead letters of a connector shown under the table. */
export const DEAD_LETTERS_SHOWN = 5;

/** The run's connectors: state, position, records in/out, last tick, lag, rows/s, dead
 * letters (with the latest few), last error; each can be paused and started, a failed one
 * restarted (operators; the server refuses others). */
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

  async function act(name: string, action: 'restart' | 'pause' | 'start') {
    setBusy(name);
    setErrors([]);
    try {
      const updated = await connectorsApi[action](runId, name);
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
            <th>Lag</th>
            <th>Rows/s</th>
            <th>Dead letters</th>
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
                  <button type="button" className="small" disabled={busy === c.name} onClick={() => void act(c.name, 'restart')}
                    data-testid={`connector-restart-${c.name}`}>
                    Restart
                  </button>
                )}
                {(c.state === 'running' || c.state === 'retrying') && !finished && (
                  <button type="button" className="small" disabled={busy === c.name} onClick={() => void act(c.name, 'pause')}
                    data-testid={`connector-pause-${c.name}`} title="Pause this connector alone (the run goes on)">
                    Pause
                  </button>
                )}
                {c.state === 'paused' && !finished && (
                  <button type="button" className="small" disabled={busy === c.name} onClick={() => void act(c.name, 'start')}
                    data-testid={`connector-start-${c.name}`} title="Start it again where it stopped">
                    Start
                  </button>
                )}
              </td>
              <td className="connector-position">{positionText(c.position)}</td>
              <td data-testid={`connector-in-${c.name}`}>{c.records_in}</td>
              <td data-testid={`connector-out-${c.name}`}>{c.records_out}</td>
              <td>{c.last_tick >= 0 ? c.last_tick : '–'}</td>
              <td data-testid={`connector-lag-${c.name}`}>{lagText(c.lag, c.lag_unit)}</td>
              <td data-testid={`connector-rate-${c.name}`}>{rateText(c.rows_per_second)}</td>
              <td data-testid={`connector-dead-${c.name}`}>{c.kind.endsWith('_source') || c.dead_letters ? c.dead_letters : '–'}</td>
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
      {connectors
        .filter((c) => c.dead_letters > 0)
        .map((c) => (
          <DeadLetters key={c.name} runId={runId} name={c.name} count={c.dead_letters} />
        ))}
    </details>
  );
}

/** A connector's latest dead letters (read again when its count changes). */
function DeadLetters({ runId, name, count }: { runId: number; name: string; count: number }) {
  const [letters, setLetters] = useState<DeadLetter[]>([]);
  const [error, setError] = useState<string[]>([]);
  useEffect(() => {
    connectorsApi.deadLetters(runId, name, DEAD_LETTERS_SHOWN).then(
      (page) => setLetters(page.results),
      (e) => setError(messagesOf(e)),
    );
  }, [runId, name, count]);
  return (
    <section className="dead-letters" data-testid={`dead-letters-${name}`}>
      <h3>
        Dead letters of <code>{name}</code>: {count.toLocaleString('en-US')}
        {count > letters.length && letters.length > 0 && <span className="muted"> (the latest {letters.length})</span>}
      </h3>
      <ErrorText messages={error} />
      <table className="connectors-table">
        <thead>
          <tr>
            <th>Position</th>
            <th>Column</th>
            <th>Message</th>
            <th>Record</th>
          </tr>
        </thead>
        <tbody>
          {letters.map((d) => (
            <tr key={d.id} data-testid="dead-letter">
              <td className="connector-position">{d.position}</td>
              <td>{d.column ? <code>{d.column}</code> : '–'}</td>
              <td className="connector-error">{d.message}</td>
              <td className="connector-position dead-letter-payload" title={d.payload}>
                {d.payload}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
