// A slider over the run's ticks: shows every output view as it was after the chosen tick
// (GET /api/runs/<id>/outputs/?tick=N).

import { useEffect, useState } from 'react';
import { runsApi, type OutputsAtTick } from '../api/runs';
import { ErrorText, messagesOf } from '../components/ErrorText';
import { ViewTable } from '../components/ViewTable';
import type { Row } from '../api';
import { fromRows } from '../zset';

interface Props {
  runId: number;
  /** The newest tick (the slider's maximum). */
  lastTick: number;
  /** When given, each past row has an "Explain" button: why was it there after that tick? */
  onExplain?: (view: string, row: Row, tick: number) => void;
  /** Controlled: the tick shown (null: the slider is closed). With `onTickChange`, the
   *  page owns it (the run page shares and follows it: watch/useWatching.ts). */
  tick?: number | null;
  onTickChange?: (tick: number | null) => void;
}

export function TickSlider({ runId, lastTick, onExplain, tick: shown, onTickChange }: Props) {
  const [own, setOwn] = useState<number | null>(null);
  const controlled = onTickChange !== undefined;
  const tick = controlled ? (shown ?? null) : own;
  const setTick = controlled ? onTickChange : setOwn;
  const [outputs, setOutputs] = useState<OutputsAtTick | null>(null);
  const [loading, setLoading] = useState(false);
  const [errors, setErrors] = useState<string[]>([]);

  useEffect(() => {
    if (tick === null) return;
    let active = true;
    setLoading(true);
    const timer = setTimeout(() => {
      runsApi.outputs(runId, tick).then(
        (o) => {
          if (!active) return;
          setOutputs(o);
          setErrors([]);
          setLoading(false);
        },
        (error) => {
          if (!active) return;
          setErrors(messagesOf(error));
          setLoading(false);
        },
      );
    }, 150);
    return () => {
      active = false;
      clearTimeout(timer);
    };
  }, [runId, tick]);

  if (lastTick < 0) return <p className="muted">No tick has completed yet.</p>;
  const value = tick ?? lastTick;
  return (
    <div className="tick-slider" data-testid="tick-slider">
      <div className="slider-row">
        <input
          type="range"
          min={0}
          max={lastTick}
          step={1}
          value={Math.min(value, lastTick)}
          data-testid="tick-slider-input"
          aria-label="Tick to view"
          onChange={(e) => setTick(Number(e.target.value))}
        />
        <input
          type="number"
          min={0}
          max={lastTick}
          value={Math.min(value, lastTick)}
          data-testid="tick-slider-number"
          aria-label="Tick number"
          onChange={(e) => setTick(Math.max(0, Math.min(lastTick, Math.round(Number(e.target.value) || 0))))}
        />
        <span className="muted small">of {lastTick}</span>
        {tick !== null && (
          <button type="button" className="link" onClick={() => { setTick(null); setOutputs(null); }}>
            close
          </button>
        )}
      </div>
      {loading && <p className="muted small">Loading tick {value}…</p>}
      <ErrorText messages={errors} />
      {tick !== null && outputs && !loading && (
        <div className="past-views" data-testid="past-outputs" data-tick={outputs.tick}>
          <p className="muted small">Outputs after tick {outputs.tick}:</p>
          {Object.entries(outputs.views).map(([view, rows]) => (
            <div key={view} className="past-view">
              <h4>
                <code>{view}</code>
              </h4>
              <ViewTable
                view={`past-${view}`}
                zset={fromRows(rows)}
                testId={`past-table-${view}`}
                onExplain={onExplain && ((row) => onExplain(view, row, outputs.tick))}
              />
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
