// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FrontierHistory, Profile } from './api';
import { FrontierPanel } from './FrontierPanel';
import { graphHeat } from './heat';
import { ProfilePanel } from './ProfilePanel';
import type { ProfileState } from './useProfile';

afterEach(cleanup);

const PROFILE: Profile = {
  metric: 'spark_jobs', unit: 'jobs', aggregate: 'sum', from: 0, to: 2, ticks: [0, 1, 2], bucket: 1, downsampled: false,
  truncated: false, max_ticks: 5000, total: 6,
  nodes: [
    { node: 'join', kind: 'join', series: [0, 1, 4], paths: ['row', 'arrow', 'spark'], total: 5, max: 4, path_ticks: { row: 1, arrow: 1, spark: 1 } },
    { node: 'w', kind: 'tumbling_window', series: [0, 0, 1], paths: ['row', 'row', 'spark'], total: 1, max: 1, path_ticks: { row: 2, spark: 1 },
      late_rows: [0, 3, 0], late_rows_total: 3 },
  ],
  top: [{ node: 'join', kind: 'join', total: 5, share: 0.8333 }, { node: 'w', kind: 'tumbling_window', total: 1, share: 0.1667 }],
};

function state(overrides: Partial<ProfileState> = {}): ProfileState {
  return {
    colouring: 'spark_jobs', setColouring: vi.fn(), metric: 'spark_jobs', selected: null, select: vi.fn(), profile: PROFILE, frontier: null,
    heat: graphHeat(PROFILE), error: '', ...overrides,
  };
}

describe('ProfilePanel', () => {
  it('lists the top nodes with their totals and shares, and selects one on click', () => {
    const s = state();
    render(<ProfilePanel state={s} />);
    const items = screen.getByTestId('profile-top').querySelectorAll('li');
    expect([...items].map((li) => li.textContent)).toEqual(['join join 5 jobs (83%)', 'w tumbling_window 1 jobs (17%)']);
    fireEvent.click(screen.getByTestId('profile-top-w'));
    expect(s.select).toHaveBeenCalledWith('w');
  });

  it('switches the metric', () => {
    const s = state();
    render(<ProfilePanel state={s} />);
    expect((screen.getByTestId('profile-metric-spark_jobs') as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByTestId('profile-metric-rows_in'));
    expect(s.setColouring).toHaveBeenCalledWith('rows_in');
    fireEvent.click(screen.getByTestId('profile-metric-share'));
    expect(s.setColouring).toHaveBeenCalledWith('share');
  });

  it('plots the selected node with its late rows and says where its ticks ran', () => {
    render(<ProfilePanel state={state({ selected: 'w' })} />);
    expect(screen.getByTestId('profile-series').dataset.node).toBe('w');
    const points = [...screen.getByTestId('profile-chart-points').querySelectorAll('li')].map((li) => JSON.parse(li.dataset.values!));
    expect(points).toEqual([{ 'Spark jobs': 0, 'late rows': 0 }, { 'Spark jobs': 0, 'late rows': 3 }, { 'Spark jobs': 1, 'late rows': 0 }]);
    expect(screen.getByTestId('profile-series-late').textContent).toContain('late rows: 3');
    expect(screen.getByTestId('profile-paths').textContent).toBe('Where its ticks ran: driver, row by row ×2 · Spark ×1');
  });
});

describe('FrontierPanel', () => {
  const history: FrontierHistory = {
    from: 0, to: 2, ticks: [0, 1, 2], bucket: 1, downsampled: false, truncated: false, max_ticks: 5000,
    nodes: [
      { node: 'tc', kind: 'fixedpoint', iterations: [4, 3, 2], converged: [true, true, true] },
      { node: 'per_minute', kind: 'tumbling_window', waterline: ['2026-11-21T10:00:10', '2026-11-21T10:02:30', null],
        windows_closed: [0, 3, 0], late_rows: [0, 0, 1] },
    ],
  };

  it('shows iterations and convergence per tick for a fixed point, newest first', () => {
    render(<FrontierPanel history={history} />);
    const rows = [...screen.getByTestId('frontier-table-tc').querySelectorAll('tbody tr')].map((tr) => tr.textContent);
    expect(rows).toEqual(['22✓ converged', '13✓ converged', '04✓ converged']);
  });

  it('shows the waterline, windows closed and late rows per tick for a window', () => {
    render(<FrontierPanel history={history} />);
    const rows = [...screen.getByTestId('frontier-table-per_minute').querySelectorAll('tbody tr')];
    expect(rows.map((tr) => [tr.getAttribute('data-tick'), tr.getAttribute('data-closed'), tr.getAttribute('data-late')])).toEqual([
      ['2', '0', '1'], ['1', '3', '0'], ['0', '0', '0'],
    ]);
    expect(rows[1]!.textContent).toContain('2026-11-21 10:02:30');
    expect(screen.getByTestId('frontier-per_minute').querySelector('h4')!.textContent).toContain('waterline —');
  });

  it('says when there is nothing to show', () => {
    render(<FrontierPanel history={{ ...history, nodes: [] }} />);
    expect(screen.getByTestId('frontier-none').textContent).toBe('This circuit has no fixed point and no window.');
  });
});
