import { useEffect, useReducer, useState } from 'react';
import { api, type Run, type RunStatus } from '../api';
import { circuitHref } from '../route';
import { RunStream, runSocketUrl } from '../runStream';
import { initialLiveRun, liveRunReducer } from '../runState';
import { emptyZSet } from '../zset';
import { DeltaFeed } from './DeltaFeed';
import { ErrorText, messagesOf } from './ErrorText';
import { PushForm } from './PushForm';
import { ViewTable } from './ViewTable';

interface Props {
  runId: number;
}

const FINISHED: ReadonlySet<RunStatus> = new Set(['stopped', 'failed']);

/** One run: status, push forms for its inputs and live tables for its output views. */
export function RunView({ runId }: Props) {
  const [run, setRun] = useState<Run | null>(null);
  const [loadErrors, setLoadErrors] = useState<string[]>([]);
  const [stopErrors, setStopErrors] = useState<string[]>([]);
  const [stopping, setStopping] = useState(false);
  const [live, dispatch] = useReducer(liveRunReducer, initialLiveRun);
  const loaded = run !== null;

  useEffect(() => {
    let active = true;
    api.getRun(runId).then(
      (r) => {
        if (!active) return;
        setRun(r);
        dispatch({ type: 'run', run: r });
      },
      (error) => active && setLoadErrors(messagesOf(error)),
    );
    return () => {
      active = false;
    };
  }, [runId]);

  // Open the websocket once the run is known, so its messages always supersede the REST state.
  useEffect(() => {
    if (!loaded) return;
    const stream = new RunStream(runSocketUrl(runId), {
      onSnapshot: (message) => dispatch({ type: 'snapshot', message }),
      onDelta: (message) => dispatch({ type: 'delta', message }),
      onStatus: (message) => dispatch({ type: 'status', message }),
      onServerError: (message) => dispatch({ type: 'streamError', message }),
      onConnectionChange: (state) => dispatch({ type: 'connection', state }),
    });
    stream.start();
    return () => stream.close();
  }, [runId, loaded]);

  async function stop() {
    setStopping(true);
    setStopErrors([]);
    try {
      const updated = await api.stopRun(runId);
      setRun(updated);
      dispatch({ type: 'run', run: updated });
    } catch (error) {
      setStopErrors(messagesOf(error));
    } finally {
      setStopping(false);
    }
  }

  if (loadErrors.length) return <ErrorText messages={loadErrors} />;
  if (!run) return <p className="muted">Loading…</p>;

  const status = live.status ?? run.status;
  const finished = FINISHED.has(status);
  const viewNames = [...new Set([...run.views, ...Object.keys(live.views)])];

  return (
    <section>
      <p className="breadcrumb">
        <a href="#/">Circuits</a> / <a href={circuitHref(run.circuit)}>Circuit {run.circuit}</a> /
      </p>
      <div className="page-head">
        <div>
          <h1>Run #{run.id}</h1>
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
              <dd data-testid="run-tick">{live.tick ?? run.current_tick}</dd>
            </div>
            <div>
              <dt>Version</dt>
              <dd>{run.version}</dd>
            </div>
            <div>
              <dt>Connection</dt>
              <dd>
                <span className={`ws ws-${live.connection}`} data-testid="ws-state">
                  {live.connection}
                </span>
              </dd>
            </div>
          </dl>
        </div>
        <div className="actions">
          <button className="danger" data-testid="stop-run" onClick={stop} disabled={stopping || finished}>
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        </div>
      </div>
      <ErrorText messages={stopErrors} />
      {live.error && <ErrorText messages={[`Run error: ${live.error}`]} testId="run-error" />}
      {live.streamError && <p className="warning">{live.streamError}</p>}

      <div className="run-layout">
        <div className="inputs">
          <h2>Inputs</h2>
          {run.inputs.length === 0 && <p className="muted">This circuit has no inputs.</p>}
          {run.inputs.map((input) => (
            <PushForm key={input.name} runId={run.id} input={input} disabled={finished} />
          ))}
        </div>
        <div className="views">
          <h2>Outputs</h2>
          {viewNames.length === 0 && <p className="muted">This circuit has no output views.</p>}
          {viewNames.map((view) => (
            <div key={view} className="card view">
              <h3>
                <code>{view}</code>
              </h3>
              <div className="view-body">
                <ViewTable view={view} zset={live.views[view] ?? emptyZSet} />
                <div>
                  <h4>Changes</h4>
                  <DeltaFeed view={view} entries={live.feeds[view] ?? []} />
                </div>
              </div>
            </div>
          ))}
        </div>
      </div>
    </section>
  );
}
