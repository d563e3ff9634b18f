// @vitest-environment jsdom
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunControls } from './RunControls';

afterEach(cleanup);

const props = {
  tick: 3,
  lag: { pushes: 2, rows: 5, ticks: 1 },
  version: 1,
  connection: 'live' as const,
  busy: null,
  canControl: true,
  onPause: vi.fn(),
  onResume: vi.fn(),
  onStop: vi.fn(),
  onNewRun: vi.fn(),
};

describe('RunControls', () => {
  it('shows progress while the run waits for a worker and Spark', () => {
    render(<RunControls {...props} status="created" />);
    expect(screen.getByTestId('run-starting').textContent).toContain('Starting Spark');
    expect((screen.getByTestId('pause-run') as HTMLButtonElement).disabled).toBe(true);
  });

  it('offers resume when paused and shows the lag', () => {
    render(<RunControls {...props} status="paused" />);
    expect(screen.queryByTestId('run-starting')).toBeNull();
    expect(screen.queryByTestId('pause-run')).toBeNull();
    expect((screen.getByTestId('resume-run') as HTMLButtonElement).disabled).toBe(false);
    expect(screen.getByTestId('run-lag').textContent).toBe('2 pushes');
    expect(screen.getByTestId('run-lag-rows').textContent).toBe(' (5 rows, 1 tick)');
  });

  it('disables stop once finished and offers a new run', () => {
    render(<RunControls {...props} status="stopped" lag={null} />);
    expect((screen.getByTestId('stop-run') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('new-run').textContent).toBe('Start new run');
    expect(screen.getByTestId('run-lag').textContent).toBe('—');
  });
});
