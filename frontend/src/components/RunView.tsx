import { lazy, Suspense, useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { api, ApiError, type Circuit, type CircuitDocument, type RunStatus } from '../api';
import { runsApi, type RunDetail } from '../api/runs';
import { defaultSeries, seriesKeys, seriesLabel } from '../dashboard/chartSeries';
import { JsonlUpload } from '../dashboard/JsonlUpload';
import { RunControls } from '../dashboard/RunControls';
import { TickChart } from '../dashboard/TickChart';
import { TickSlider } from '../dashboard/TickSlider';
import '../dashboard/dashboard.css';
import { circuitHref, navigate, runHref } from '../route';
import { RunStream, runSocketUrl } from '../runStream';
import { initialLiveRun, liveRunReducer } from '../runState';
import { emptyZSet } from '../zset';
import { DeltaFeed } from './DeltaFeed';
import { ErrorText, messagesOf } from './ErrorText';
import { PushForm } from './PushForm';
import { ViewTable } from './ViewTable';
import { InputTables } from '../verify/InputTables';
import { VerifyPanel } from '../verify/VerifyPanel';
import { ExplainPanel } from '../explain/ExplainPanel';
import type { ExplainTarget } from '../explain/explainApi';
import { useProfile } from '../profile/useProfile';
import '../verify/verify.css';
import { NodeInspector } from '../inspect/NodeInspector';
import { ConnectorStatus } from '../connectors/ConnectorStatus';
import '../connectors/connectors.css';
import { useWatching } from '../watch/useWatching';
import { WatchBar } from '../watch/WatchBar';

// The graph canvas (@xyflow/react) loads after the rest of the page.
const ProfilePanel = lazy(() => import('../profile/ProfilePanel').then((m) => ({ default: m.ProfilePanel })));
const FrontierPanel = lazy(() => import('../profile/FrontierPanel').then((m) => ({ default: m.FrontierPanel })));
const RunGraph = lazy(() => import('../dashboard/RunGraph').then((m) => ({ default: m.RunGraph })));

interface Props {
  runId: number;
}

const FINISHED: ReadonlySet<RunStatus> = new Set(['stopped', 'failed']);
/** Ticks of stored deltas loaded after a (re)load to prefill the feeds and the chart. */
export const HISTORY_TICKS = 200;
/** How often the run (lag, status) is re-read while it is not finished: often when only
 * REST reports the lag, rarely (a safety net) when the websocket does. */
const POLL_MS = 2000;
const POLL_STREAMED_MS = 15_000;

function controlError(action: string, error: unknown): string[] {
  if (error instanceof ApiError && (error.status === 404 || error.status === 405)) {
    return [`This server cannot ${action} runs yet (HTTP ${error.status}).`];
  }
  return messagesOf(error);
}

/** One run: controls, push forms, the live graph, chart, tick slider, tables and feeds. */
export function RunView({ runId }: Props) {
  const [run, setRun] = useState<RunDetail | null>(null);
  const [circuit, setCircuit] = useState<Circuit | null>(null);
  const [document, setDocument] = useState<CircuitDocument | null>(null);
  const [loadErrors, setLoadErrors] = useState<string[]>([]);
  const [actionErrors, setActionErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [live, dispatch] = useReducer(liveRunReducer, initialLiveRun);
  const [chosenSeries, setChosenSeries] = useState<string[] | null>(null);
  const [explaining, setExplaining] = useState<ExplainTarget | null>(null);
  const closeExplain = useCallback(() => setExplaining(null), []);
  const [inspected, setInspected] = useState<string | null>(null);
  /** The tick slider's tick (null: closed): with `inspected`, what "Share my view" shares. */
  const [sliderTick, setSliderTick] = useState<number | null>(null);
  const watching = useWatching({ tick: sliderTick, node: inspected });
  const loaded = run !== null;
  const circuitId = run?.circuit ?? null;
  const runVersion = run?.version ?? null;

  const refreshRun = useCallback(() => {
    runsApi.getRun(runId).then(
      (r) => {
        setRun(r);
        dispatch({ type: 'run', run: r });
      },
      () => undefined, // the next poll tries again; the websocket state says if we are offline
    );
  }, [runId]);

  useEffect(() => {
    let active = true;
    runsApi.getRun(runId).then(
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

  // The circuit's name (breadcrumb) and the document of the run's version (graph).
  useEffect(() => {
    if (circuitId === null || runVersion === null) return;
    let active = true;
    api.getCircuit(circuitId).then(
      (c) => {
        if (!active) return;
        setCircuit(c);
        if (c.latest_version?.number === runVersion) setDocument(c.latest_version.document);
        else
          runsApi.versions(circuitId).then(
            (versions) => {
              const match = versions.find((v) => v.number === runVersion);
              if (active && match) setDocument(match.document);
            },
            () => undefined,
          );
      },
      () => undefined,
    );
    return () => {
      active = false;
    };
  }, [circuitId, runVersion]);

  const loadHistory = useCallback(
    (upto: number) => {
      if (upto < 0) return;
      runsApi.deltas(runId, Math.max(-1, upto - HISTORY_TICKS), HISTORY_TICKS).then(
        (page) => dispatch({ type: 'history', upto, ticks: page.ticks }),
        () => undefined,
      );
    },
    [runId],
  );

  // Open the websocket once the run is known, so its messages always supersede the REST state.
  useEffect(() => {
    if (!loaded) return;
    const stream = new RunStream(runSocketUrl(runId), {
      onSnapshot: (message) => {
        dispatch({ type: 'snapshot', message });
        loadHistory(message.tick);
      },
      onDelta: (message) => dispatch({ type: 'delta', message }),
      onStatus: (message) => dispatch({ type: 'status', message }),
      onLag: (message) => dispatch({ type: 'lag', message }),
      onPresence: watching.onPresence,
      onView: watching.onView,
      onServerError: (message) => dispatch({ type: 'streamError', message }),
      onConnectionChange: (state) => dispatch({ type: 'connection', state }),
    }, { greeting: watching.greeting });
    watching.attach(stream);
    stream.start();
    return () => {
      watching.attach(null);
      stream.close();
    };
  }, [runId, loaded, loadHistory, watching.onPresence, watching.onView, watching.greeting, watching.attach]);

  const status = live.status ?? run?.status ?? 'created';
  const finished = FINISHED.has(status);

  // Lag and status by REST while the run is live (the websocket carries them too on
  // servers that send `lag`; this keeps them right on any server).
  const pollMs = live.lagFromStream && live.connection === 'live' ? POLL_STREAMED_MS : POLL_MS;
  useEffect(() => {
    if (!loaded || finished) return;
    const timer = setInterval(refreshRun, pollMs);
    return () => clearInterval(timer);
  }, [loaded, finished, refreshRun, pollMs]);
  // A new tick or status changes the lag: re-read soon after (coalesced).
  const refreshSoon = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!loaded) return;
    if (refreshSoon.current) return;
    refreshSoon.current = setTimeout(() => {
      refreshSoon.current = null;
      refreshRun();
    }, 300);
  }, [live.tick, live.status, loaded, refreshRun]);
  useEffect(() => () => {
    if (refreshSoon.current) clearTimeout(refreshSoon.current);
  }, []);

  async function control(action: 'pause' | 'resume' | 'stop') {
    setBusy(action);
    setActionErrors([]);
    try {
      const updated = action === 'pause' ? await runsApi.pause(runId) : action === 'resume' ? await runsApi.resume(runId) : await api.stopRun(runId);
      setRun(updated);
      dispatch({ type: 'run', run: updated });
      dispatch({ type: 'status', message: { type: 'status', status: updated.status, tick: updated.current_tick, current_tick: updated.current_tick, error: updated.error, lag: { rows: 0, ticks: 0, ...updated.lag } } });
    } catch (error) {
      setActionErrors(controlError(action, error));
    } finally {
      setBusy(null);
    }
  }

  async function newRun() {
    if (!run) return;
    setBusy('start');
    setActionErrors([]);
    try {
      const started = await api.startRun(run.circuit);
      navigate(runHref(started.id));
    } catch (error) {
      setActionErrors(messagesOf(error));
      setBusy(null);
    }
  }

  const keys = useMemo(() => seriesKeys(live.chart, live.sums), [live.chart, live.sums]);
  // Until the user picks series, the default follows the views (a view that gets its
  // first rows later joins); once picked, the choice stays.
  const selected = useMemo(
    () => (chosenSeries ?? defaultSeries(live.views, keys)).filter((k) => keys.includes(k)),
    [chosenSeries, keys, live.views],
  );
  const labelOf = useCallback((key: string) => seriesLabel(key, live.views), [live.views]);
  const profile = useProfile(run?.id ?? null, live.tick ?? run?.current_tick ?? null);
  const selectInProfile = useRef(profile.select);
  selectInProfile.current = profile.select;

  // Following someone's view: their tick and node become this page's.
  const followed = watching.followed;
  const following = followed !== null;
  useEffect(() => {
    if (!followed) return;
    setSliderTick(followed.tick);
    setInspected(followed.node);
    if (followed.node) selectInProfile.current(followed.node);
  }, [following, followed?.tick, followed?.node]); // eslint-disable-line react-hooks/exhaustive-deps
  // Moving the slider or picking a node yourself stops following (as the button does).
  const { stopFollowing } = watching;
  const ownTick = useCallback((t: number | null) => {
    if (following) stopFollowing();
    setSliderTick(t);
  }, [following, stopFollowing]);
  const ownNode = useCallback((node: string | null) => {
    if (following) stopFollowing();
    setInspected(node);
    if (node) selectInProfile.current(node);
  }, [following, stopFollowing]);

  if (loadErrors.length) return <ErrorText messages={loadErrors} />;
  if (!run) return <p className="muted">Loading…</p>;

  const tick = live.tick ?? run.current_tick;
  const viewNames = [...new Set([...run.views, ...Object.keys(live.views)])];

  return (
    <section className="run-page">
      <p className="breadcrumb" data-testid="breadcrumb">
        <a href="#/">Circuits</a> /{' '}
        <a href={circuitHref(run.circuit)} data-testid="breadcrumb-circuit">
          {circuit?.name ?? `Circuit ${run.circuit}`}
        </a>{' '}
        /
      </p>
      <div className="page-head run-head">
        <h1>Run #{run.id}</h1>
        <RunControls
          status={status}
          tick={tick}
          lag={live.lag}
          version={run.version}
          connection={live.connection}
          busy={busy}
          canControl
          onPause={() => void control('pause')}
          onResume={() => void control('resume')}
          onStop={() => {
            // Stopping ends the run for good (a new run starts from nothing): ask first.
            if (window.confirm(`Stop run #${run.id}? It cannot be resumed; its outputs stay readable.`)) void control('stop');
          }}
          onNewRun={() => void newRun()}
        />
        {/* Who watches, and whose view this page follows: in the sticky head, in sight at the slider. */}
        <WatchBar watching={watching} />
      </div>
      <ErrorText messages={actionErrors} testId="run-action-error" />
      {live.error && <ErrorText messages={[`Run error: ${live.error}`]} testId="run-error" />}
      {live.streamError && <p className="warning">{live.streamError}</p>}

      <div className="run-layout">
        <div className="inputs">
          <h2>Inputs</h2>
          {run.inputs.length === 0 && <p className="muted">This circuit has no inputs.</p>}
          {run.inputs.map((input) => (
            <PushForm key={input.name} runId={run.id} input={input} disabled={finished} onPushed={refreshRun} />
          ))}
          {run.inputs.length > 0 && <JsonlUpload runId={run.id} inputs={run.inputs} disabled={finished} onPushed={refreshRun} />}
          <InputTables runId={run.id} inputs={run.inputs} tick={tick} />
        </div>
        <div className="views">
          {/* The outputs are what the user came for: first, in sight without scrolling. */}
          <h2>Outputs</h2>
          {viewNames.length === 0 && <p className="muted">This circuit has no output views.</p>}
          <div className="output-views" data-testid="output-views">
            {viewNames.map((view) => (
              <div key={view} className="card view" data-testid={`output-view-${view}`}>
                <h3>
                  <code>{view}</code>
                </h3>
                <div className="view-body">
                  <ViewTable view={view} zset={live.views[view] ?? emptyZSet} onExplain={(row) => setExplaining({ view, row, tick })} />
                  <div>
                    <h4>Changes</h4>
                    <DeltaFeed view={view} entries={live.feeds[view] ?? []} onExplain={(row, at) => setExplaining({ view, row, tick: at })} />
                  </div>
                </div>
              </div>
            ))}
          </div>
          <VerifyPanel runId={run.id} tick={tick} />
        </div>
      </div>
      {explaining && <ExplainPanel runId={run.id} target={explaining} onClose={closeExplain} />}
      {/* The graph and the chart: the page's full width, below what the user came for. */}
      <div className="run-wide">
        <ConnectorStatus runId={run.id} tick={tick} status={status} finished={finished} />
        <details className="card graph-card" open data-testid="graph-section">
          <summary>
            <h2>Circuit</h2>
          </summary>
          {document ? (
            <div className={inspected ? 'graph-with-inspector' : undefined}>
              <Suspense fallback={<p className="muted">Loading the graph…</p>}>
                <RunGraph document={document} frontier={live.frontier} stats={live.stats} statsTick={live.statsTick}
                  onNodeClick={ownNode} inspected={inspected}
                  heat={profile.heat} />
              </Suspense>
              {inspected && (
                <NodeInspector key={inspected} runId={run.id} node={inspected} currentTick={tick} onClose={() => ownNode(null)} />
              )}
            </div>
          ) : (
            <p className="muted">Loading the circuit…</p>
          )}
        </details>
        <details className="card profile-card" open data-testid="profile-section">
          <summary>
            <h2>Profile</h2>
          </summary>
          <Suspense fallback={<p className="muted">Loading…</p>}>
            <ProfilePanel state={profile} />
          </Suspense>
        </details>
        <details className="card frontier-card" open data-testid="frontier-section">
          <summary>
            <h2>Frontier</h2>
          </summary>
          <Suspense fallback={<p className="muted">Loading…</p>}>
            <FrontierPanel history={profile.frontier} />
          </Suspense>
        </details>
        <details className="card chart-card" open data-testid="chart-section">
          <summary>
            <h2>Over ticks</h2>
          </summary>
          <TickChart points={live.chart} keys={keys} selected={selected} onSelect={setChosenSeries} labelOf={labelOf} />
          <h4>Outputs at a past tick</h4>
          <TickSlider runId={run.id} lastTick={tick} tick={sliderTick} onTickChange={ownTick} onExplain={(view, row, at) => setExplaining({ view, row, tick: at })} />
        </details>
      </div>
    </section>
  );
}
