// A live uPlot chart of chosen numeric output columns (their view totals) over ticks.

import { useEffect, useRef, useState } from 'react';
import type uPlot from 'uplot';
import { chartData, type ChartPoint } from './chartSeries';

interface Props {
  points: ChartPoint[];
  keys: string[];
  selected: string[];
  onSelect(selected: string[]): void;
  /** How the picker and legend name a series. */
  labelOf?(key: string): string;
}

const COLOURS = ['#2f5fd0', '#c2372d', '#1a7f37', '#b26b00', '#7b3fb3', '#0f7c8c', '#8a5a44', '#d0429b'];
const colourOf = (i: number) => COLOURS[i % COLOURS.length]!;

type UPlotClass = typeof uPlot;

export function TickChart({ points, keys, selected, onSelect, labelOf = (k) => k }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [lib, setLib] = useState<UPlotClass | null>(null);
  const [loadError, setLoadError] = useState('');

  useEffect(() => {
    let active = true;
    // Loaded on demand: keeps uPlot (which measures the screen) out of the first paint.
    Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(
      ([mod]) => active && setLib(() => mod.default),
      (error) => active && setLoadError(`The chart could not load: ${String(error)}`),
    );
    return () => {
      active = false;
    };
  }, []);

  const seriesSignature = selected.join('|');
  // (Re)build the plot when the library arrives or the chosen series change.
  useEffect(() => {
    if (!lib || !container.current) return;
    const el = container.current;
    const width = Math.max(300, el.clientWidth || 600);
    const options: uPlot.Options = {
      width,
      height: 220,
      scales: { x: { time: false } },
      // Ticks are whole numbers: no 0.2-steps on the x axis.
      axes: [
        { label: 'tick', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000] },
        // Wide enough for the longest value label (uPlot's fixed 50 px clips "-1,250,000").
        { size: (_self: uPlot, values: string[] | null) => 24 + 7 * Math.max(3, ...(values ?? []).map((v) => String(v).length)) },
      ],
      series: [{ label: 'tick' }, ...selected.map((key, i) => ({ label: labelOf(key), stroke: colourOf(i), width: 2, points: { show: true, size: 5 } }))],
      // The picker below is the legend: colour, name and latest value of each series.
      legend: { show: false },
    };
    const instance = new lib(options, chartData([], selected) as uPlot.AlignedData, el);
    plot.current = instance;
    const resize = () => instance.setSize({ width: Math.max(300, el.clientWidth || 600), height: 220 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      instance.destroy();
      plot.current = null;
    };
    // Keyed on the series' names, not the array's identity: new data goes through setData below.
  }, [lib, seriesSignature]);

  useEffect(() => {
    plot.current?.setData(chartData(points, selected) as uPlot.AlignedData);
  }, [points, selected, lib]);

  const last = points[points.length - 1];
  return (
    <div className="tick-chart" data-testid="tick-chart">
      <div className="series-picker" data-testid="chart-legend">
        {keys.length === 0 && <span className="muted small">No output rows yet.</span>}
        {keys.map((key) => {
          const index = selected.indexOf(key);
          return (
            <label key={key} className={`checkbox small series${index >= 0 ? ' on' : ''}`} data-testid={`chart-legend-${key}`}>
              <input
                type="checkbox"
                data-testid={`chart-series-${key}`}
                checked={index >= 0}
                onChange={(e) => onSelect(e.target.checked ? [...selected, key] : selected.filter((k) => k !== key))}
              />
              <span className="swatch" style={{ background: index >= 0 ? colourOf(index) : 'transparent' }} />
              {labelOf(key)}
              {index >= 0 && last && <b className="series-value"> = {formatNumber(last.values[key] ?? 0)}</b>}
            </label>
          );
        })}
      </div>
      {loadError ? <p className="muted small">{loadError}</p> : <div ref={container} className="chart-canvas" data-testid="chart-canvas" />}
      {/* The plotted numbers, readable without the canvas (and by tests). */}
      <p className="muted small chart-last" data-testid="chart-last" data-tick={last?.tick ?? ''} data-points={points.length}>
        {last
          ? `tick ${last.tick}: ${selected.map((k) => `${labelOf(k)} = ${formatNumber(last.values[k] ?? 0)}`).join(', ') || 'choose a column'}`
          : 'No ticks yet.'}
      </p>
      <ol hidden data-testid="chart-points">
        {points.map((p) => (
          <li key={p.tick} data-tick={p.tick} data-values={JSON.stringify(Object.fromEntries(selected.map((k) => [k, p.values[k] ?? 0])))} />
        ))}
      </ol>
    </div>
  );
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
}
