import { useEffect, useState } from 'react';
import type { RunStatus } from '../api';
import type { Lag } from '../api/runs';
import type { ConnectionState } from '../runStream';

interface Props {
  status: RunStatus;
  tick: number;
  lag: Lag | null;
  version: number;
  connection: ConnectionState;
  busy: string | null;
  canControl: boolean;
  onPause(): void;
  onResume(): void;
  onStop(): void;
  onNewRun(): void;
}

const FINISHED: ReadonlySet<RunStatus> = new Set(['stopped', 'failed']);

const CONNECTION_TEXT: Record<ConnectionState, string> = {
  connecting: 'connecting',
  live: 'live',
  reconnecting: 'reconnecting',
  offline: 'offline',
  closed: 'closed',
};

/** Status, tick, lag and connection, always visible; start/pause/resume/stop. */
export function RunControls({ status, tick, lag, version, connection, busy, canControl, onPause, onResume, onStop, onNewRun }: Props) {
  const finished = FINISHED.has(status);
  const starting = status === 'created';
  const [since] = useState(() => Date.now());
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!starting) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [starting]);

  return (
    <div className="run-controls" data-testid="run-controls">
      <dl className="run-facts">
        <div>
          <dt>Status</dt>
          <dd>
            <span className={`status status-${status}`} data-testid="run-status">
              {status}
            </span>
          </dd>
        </div>
        <div>
          <dt>Tick</dt>
          <dd data-testid="run-tick">{tick}</dd>
        </div>
        <div>
          <dt>Lag</dt>
          <dd>
            <span data-testid="run-lag" className={lag?.pushes ? 'lag-behind' : undefined} title="Accepted pushes not yet applied">
              {lag === null ? '—' : `${lag.pushes} push${lag.pushes === 1 ? '' : 'es'}`}
            </span>
            {lag?.rows !== undefined && lag.pushes > 0 && (
              <span className="muted small" data-testid="run-lag-rows">
                {' '}
                ({lag.rows} row{lag.rows === 1 ? '' : 's'}
                {lag.ticks ? `, ${lag.ticks} tick${lag.ticks === 1 ? '' : 's'}` : ''})
              </span>
            )}
          </dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd>{version}</dd>
        </div>
        <div>
          <dt>Connection</dt>
          <dd>
            <span className={`ws ws-${connection}`} data-testid="ws-state">
              {CONNECTION_TEXT[connection]}
            </span>
          </dd>
        </div>
      </dl>
      <div className="actions">
        {status === 'paused' ? (
          <button className="primary" data-testid="resume-run" onClick={onResume} disabled={!canControl || busy !== null}>
            {busy === 'resume' ? 'Resuming…' : 'Resume'}
          </button>
        ) : (
          <button data-testid="pause-run" onClick={onPause} disabled={!canControl || busy !== null || status !== 'running'}>
            {busy === 'pause' ? 'Pausing…' : 'Pause'}
          </button>
        )}
        <button className="danger" data-testid="stop-run" onClick={onStop} disabled={!canControl || busy !== null || finished}>
          {busy === 'stop' ? 'Stopping…' : 'Stop'}
        </button>
        <button data-testid="new-run" onClick={onNewRun} disabled={!canControl || busy !== null} title="Start a new run of this circuit">
          {busy === 'start' ? 'Starting…' : finished ? 'Start new run' : 'New run'}
        </button>
      </div>
      {starting && (
        <div className="progress starting" data-testid="run-starting">
          <progress />
          <span>Starting Spark: waiting for a worker to pick the run up… {Math.round((now - since) / 1000)} s</span>
        </div>
      )}
    </div>
  );
}
