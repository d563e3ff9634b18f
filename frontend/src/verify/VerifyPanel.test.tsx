// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InputTables } from './InputTables';
import { VerifyPanel } from './VerifyPanel';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const queued = { id: 4, run: 7, tick: 2, status: 'queued', progress: 0, method: null, error: null, url: '/api/runs/7/verify/4/' };

function serve(done: unknown) {
  const fetchMock = vi.fn(async (url: string, init?: RequestInit) =>
    init?.method === 'POST' ? json(queued, 202) : url.endsWith('/verify/4/') ? json(done) : json({}, 404),
  );
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

describe('VerifyPanel', () => {
  it('posts a verification, polls it and shows a check mark', async () => {
    const fetchMock = serve({ ...queued, status: 'done', progress: 1, method: 'reference', ok: true, views: {} });
    render(<VerifyPanel runId={7} tick={2} pollMs={1} />);
    fireEvent.click(screen.getByTestId('verify-button'));
    await waitFor(() => expect(screen.getByTestId('verify-ok').textContent).toContain('✓ Tick 2: every output equals the reference evaluator'));
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/runs/7/verify/');
  });

  it('shows the differing rows per view', async () => {
    serve({
      ...queued, status: 'done', progress: 1, method: 'spark', ok: false,
      views: { totals: { missing: [{ data: { g: 'a', total: 125 }, weight: 1 }], extra: [{ data: { g: 'a', total: 26 }, weight: 1 }], missing_count: 1, extra_count: 1 } },
    });
    render(<VerifyPanel runId={7} tick={3} pollMs={1} />);
    fireEvent.click(screen.getByTestId('verify-button'));
    await waitFor(() => expect(screen.getByTestId('verify-differences')).toBeTruthy());
    expect(screen.getByTestId('verify-differences').textContent).toContain('1 view differs from a batch Spark recomputation (the run is at tick 3 now)');
    expect(screen.getByTestId('verify-missing-totals').textContent).toContain('125');
    expect(screen.getByTestId('verify-extra-totals').textContent).toContain('26');
  });

  it('cannot verify before the first tick', () => {
    render(<VerifyPanel runId={7} tick={-1} />);
    expect((screen.getByTestId('verify-button') as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('InputTables', () => {
  it('shows each input table page by page', async () => {
    const page = (n: number) => ({
      count: 60, next: n === 1 ? 'x' : null, previous: null, input: 'orders', through_sequence: 3,
      results: [{ data: { id: n === 1 ? 1 : 51, amount: 5 }, weight: n === 1 ? 2 : -1 }],
    });
    const fetchMock = vi.fn(async (url: string) => json(page(url.includes('page=2') ? 2 : 1)));
    vi.stubGlobal('fetch', fetchMock);
    render(<InputTables runId={7} inputs={[{ name: 'orders', schema: [] }]} tick={0} />);
    await waitFor(() => expect(screen.getByTestId('input-rows-count-orders').textContent).toBe('60 rows'));
    expect(screen.getByTestId('input-rows-orders').textContent).toContain('2');
    fireEvent.click(screen.getByTestId('input-rows-next-orders'));
    await waitFor(() => expect(screen.getByTestId('input-rows-orders').textContent).toContain('51'));
    expect(fetchMock.mock.calls.at(-1)![0]).toBe('/api/runs/7/inputs/orders/rows/?page=2&page_size=50');
  });
});
