// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunsTable, type RunsTableRun } from './RunsTable';

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const runs: RunsTableRun[] = [
  { id: 7, circuit: 2, circuit_name: 'Word count', version: 3, status: 'running', current_tick: 4, error: '', can_operate: true, created_at: '2026-11-24T07:00:00Z' },
  { id: 6, circuit: 1, circuit_name: 'Big orders', version: 1, status: 'failed', current_tick: 2, error: 'Tick 2 failed …', can_operate: true, created_at: '2026-11-24T06:00:00Z' },
  { id: 5, circuit: 1, circuit_name: 'Big orders', version: 1, status: 'running', current_tick: 0, error: '', can_operate: false, created_at: '2026-11-24T05:00:00Z' },
];

describe('RunsTable', () => {
  it('offers Stop only on live runs the user may operate, and names each circuit', () => {
    render(<RunsTable runs={runs} showCircuit />);
    expect(screen.getByTestId('run-stop-7')).toBeTruthy();
    expect(screen.queryByTestId('run-stop-6')).toBeNull(); // failed
    expect(screen.queryByTestId('run-stop-5')).toBeNull(); // not theirs to stop
    expect(screen.getAllByTestId('run-circuit').map((a) => a.textContent)).toEqual(['Word count', 'Big orders', 'Big orders']);
    expect(screen.getByTestId('run-error').getAttribute('title')).toBe('Tick 2 failed …');
  });

  it('asks before stopping: dismissed, nothing is sent; accepted, the stop is sent', async () => {
    const fetch = vi.spyOn(globalThis, 'fetch').mockResolvedValue(
      new Response(JSON.stringify({ ...runs[0], status: 'stopped' }), { status: 200, headers: { 'Content-Type': 'application/json' } }),
    );
    const confirm = vi.spyOn(window, 'confirm').mockReturnValueOnce(false).mockReturnValueOnce(true);
    const onStopped = vi.fn();
    render(<RunsTable runs={runs} showCircuit onStopped={onStopped} />);
    fireEvent.click(screen.getByTestId('run-stop-7'));
    expect(confirm).toHaveBeenCalledWith(expect.stringContaining('Stop run #7 of "Word count"?'));
    expect(fetch).not.toHaveBeenCalled();
    fireEvent.click(screen.getByTestId('run-stop-7'));
    await waitFor(() => expect(onStopped).toHaveBeenCalledWith(expect.objectContaining({ id: 7, status: 'stopped' })));
    expect(fetch.mock.calls[0]![0]).toBe('/api/runs/7/stop/');
  });
});
