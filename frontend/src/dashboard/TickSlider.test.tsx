// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TickSlider } from './TickSlider';

let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    const tick = Number(new URL(url, 'http://x').searchParams.get('tick'));
    const views = { total: [{ data: { total: [0, 20, 0][tick] }, weight: 1 }] };
    return new Response(JSON.stringify({ tick, views }), { status: 200 });
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('TickSlider', () => {
  it("fetches and shows the outputs as they were after the chosen tick", async () => {
    render(<TickSlider runId={4} lastTick={2} />);
    expect(screen.queryByTestId('past-outputs')).toBeNull();
    fireEvent.change(screen.getByTestId('tick-slider-input'), { target: { value: '1' } });
    await waitFor(() => expect(screen.getByTestId('past-outputs').dataset.tick).toBe('1'));
    expect(fetchMock).toHaveBeenLastCalledWith('/api/runs/4/outputs/?tick=1', expect.anything());
    expect(within(screen.getByTestId('past-table-total')).getByTestId('view-row').textContent).toBe('20');
    fireEvent.change(screen.getByTestId('tick-slider-number'), { target: { value: '9' } }); // clamped to the last tick
    await waitFor(() => expect(screen.getByTestId('past-outputs').dataset.tick).toBe('2'));
  });

  it('explains a past row at the tick chosen', async () => {
    const explained: unknown[] = [];
    render(<TickSlider runId={4} lastTick={2} onExplain={(...args) => explained.push(args)} />);
    fireEvent.change(screen.getByTestId('tick-slider-input'), { target: { value: '1' } });
    await waitFor(() => expect(screen.getByTestId('past-outputs').dataset.tick).toBe('1'));
    fireEvent.click(within(screen.getByTestId('past-table-total')).getByTestId('explain-row'));
    expect(explained).toEqual([['total', { total: 20 }, 1]]);
  });

  it('has no Explain buttons when not asked to', async () => {
    render(<TickSlider runId={4} lastTick={2} />);
    fireEvent.change(screen.getByTestId('tick-slider-input'), { target: { value: '1' } });
    await waitFor(() => expect(screen.getByTestId('past-outputs').dataset.tick).toBe('1'));
    expect(screen.queryByTestId('explain-row')).toBeNull();
  });

  it('says when no tick has completed', () => {
    render(<TickSlider runId={4} lastTick={-1} />);
    expect(screen.queryByTestId('tick-slider')).toBeNull();
  });
});
