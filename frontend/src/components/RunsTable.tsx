// A table of runs: the circuit page's runs and "My runs" across circuits. Stopping a live
// run asks first.

import { useState } from 'react';
import { api, type Run, type RunStatus } from '../api';
import { formatTime } from '../format';
import { circuitHref, runHref } from '../route';
import { ErrorText, messagesOf } from './ErrorText';

/** What a row shows: a run of either endpoint (`circuit_name`/`can_operate` come with
 * `GET /api/runs/`). */
export interface RunsTableRun {
  id: number;
  circuit: number;
  circuit_name?: string;
  version: number;
  status: RunStatus;
  current_tick: number;
  error?: string;
  can_operate?: boolean;
  created_at: string;
}

const LIVE = new Set<RunStatus>(['created', 'running', 'paused']);

interface Props {
  runs: RunsTableRun[];
  /** A column naming each run's circuit (runs across circuits). */
  showCircuit?: boolean;
  /** Whether the user may stop a run (default: the run's own `can_operate`). */
  canStop?: (run: RunsTableRun) => boolean;
  /** After the server stopped a run: its new state. */
  onStopped?: (run: Run) => void;
  testId?: string;
}

export function RunsTable({ runs, showCircuit = false, canStop = (run) => run.can_operate === true, onStopped, testId }: Props) {
  const [busy, setBusy] = useState<number | null>(null);
  const [errors, setErrors] = useState<string[]>([]);

  async function stop(run: RunsTableRun) {
    const of = run.circuit_name ? ` of "${run.circuit_name}"` : '';
    if (!window.confirm(`Stop run #${run.id}${of}? It cannot be resumed; its outputs stay readable.`)) return;
    setBusy(run.id);
    setErrors([]);
    try {
      onStopped?.(await api.stopRun(run.id));
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <ErrorText messages={errors} testId="runs-table-error" />
      <table className="runs" data-testid={testId}>
        <thead>
          <tr>
            <th>Run</th>
            {showCircuit && <th>Circuit</th>}
            <th>Status</th>
            <th>Version</th>
            <th>Tick</th>
            <th>Started</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id} data-testid="run-row" data-run-id={run.id} data-status={run.status}>
              <td>
                <a href={runHref(run.id)} data-testid="run-link">
                  Run #{run.id}
                </a>
              </td>
              {showCircuit && (
                <td className="run-circuit">
                  <a href={circuitHref(run.circuit)} title={run.circuit_name} data-testid="run-circuit">
                    {run.circuit_name ?? `circuit ${run.circuit}`}
                  </a>
                </td>
              )}
              <td>
                <span className={`status status-${run.status}`} data-testid="run-status-cell">
                  {run.status}
                </span>
                {run.error && (
                  <span className="run-error" title={run.error} data-testid="run-error">
                    {run.error}
                  </span>
                )}
              </td>
              <td>{run.version}</td>
              <td>{run.current_tick}</td>
              <td>{formatTime(run.created_at)}</td>
              <td>
                {LIVE.has(run.status) && canStop(run) && (
                  <button type="button" className="danger" data-testid={`run-stop-${run.id}`} disabled={busy !== null} onClick={() => void stop(run)}>
                    {busy === run.id ? 'Stopping…' : 'Stop'}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
