// A small uPlot chart of one node's numbers over ticks (its metric; late rows for windows).

import { useEffect, useRef, useState } from 'react';
import type uPlot from 'uplot';

export interface Series {
  label: string;
  values: number[];
  colour: string;
  /** Bars (counts per tick), points only (events: late rows), or a line with points. */
  style?: 'line' | 'bars' | 'points';
}

interface Props {
  ticks: number[];
  series: Series[];
  testId: string;
  height?: number;
}

type UPlotClass = typeof uPlot;

export function SeriesChart({ ticks, series, testId, height = 180 }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const [lib, setLib] = useState<UPlotClass | null>(null);
  const [loadError, setLoadError] = useState('');

  useEffect(() => {
    let active = true;
    Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(
      ([mod]) => active && setLib(() => mod.default),
      (error) => active && setLoadError(`The chart could not load: ${String(error)}`),
    );
    return () => {
      active = false;
    };
  }, []);

  useEffect(() => {
    if (!lib || !container.current) return;
    const el = container.current;
    const width = Math.max(280, el.clientWidth || 560);
    const bars = lib.paths.bars ? lib.paths.bars({ size: [0.6, 24] }) : undefined;
    const options: uPlot.Options = {
      width,
      height,
      // Bars at the first and last tick stay whole; counts start at 0.
      scales: {
        x: { time: false, range: (_u: uPlot, min: number, max: number) => [min - 0.5, max + 0.5] },
        y: { range: (_u: uPlot, _min: number, max: number) => [0, Math.max(1, max * 1.1)] },
      },
      axes: [
        { label: 'tick', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000] },
        {
          size: (_self: uPlot, values: string[] | null) => 24 + 7 * Math.max(3, ...(values ?? []).map((v) => String(v).length)),
          // counts and ms: whole steps where the range allows (no 0.5 iterations)
          incrs: [0.01, 0.1, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 1e5, 1e6, 1e7, 1e8, 1e9],
        },
      ],
      series: [
        { label: 'tick' },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.colour,
          width: 2,
          ...(s.style === 'bars' && bars
            ? { paths: bars, fill: `${s.colour}55`, points: { show: false } }
            : s.style === 'points'
              ? { paths: () => null, points: { show: true, size: 9, fill: s.colour } }
              : { points: { show: true, size: 5 } }),
        })),
      ],
      legend: { show: true, live: false },
    };
    // Events (late rows) are dots only where they happened.
    const data = [ticks, ...series.map((s) => (s.style === 'points' ? s.values.map((v) => (v ? v : null)) : s.values))];
    const instance = new lib(options, data as uPlot.AlignedData, el);
    const resize = () => instance.setSize({ width: Math.max(280, el.clientWidth || 560), height });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      instance.destroy();
    };
  }, [lib, ticks, series, height]);

  return (
    <div className="profile-chart" data-testid={testId}>
      {loadError ? <p className="muted small">{loadError}</p> : <div ref={container} className="chart-canvas" />}
      {/* The plotted numbers, readable without the canvas (and by tests). */}
      <ol hidden data-testid={`${testId}-points`}>
        {ticks.map((t, i) => (
          <li key={t} data-tick={t} data-values={JSON.stringify(Object.fromEntries(series.map((s) => [s.label, s.values[i] ?? 0])))} />
        ))}
      </ol>
    </div>
  );
}
