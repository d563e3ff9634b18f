// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NodeInspector } from './NodeInspector';
import { nodeUrl } from './inspectApi';
import { PageCache, pagesFor } from './pageCache';

beforeEach(() => {
  // jsdom has no layout: give the scroll box a size so the virtualiser has a window.
  vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockReturnValue(360);
  vi.spyOn(HTMLElement.prototype, 'clientWidth', 'get').mockReturnValue(520);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const columns = [
  { name: 'account', type: 'bigint' },
  { name: 'balance', type: 'bigint' },
];

function done(params: URLSearchParams, rows: { data: Record<string, unknown>; weight: number }[], extra: Record<string, unknown> = {}) {
  return {
    status: 'done', progress: 1, run: 7, node: 'balances', operator: 'map', columns, rows,
    tick: Number(params.get('tick')), kind: params.get('kind'), count: rows.length, total: rows.length,
    page: Number(params.get('page')), page_size: Number(params.get('page_size')), pages: 1,
    sizes: { delta_rows: 2, integral_rows: 3, inserted: 1, deleted: 1, iterations: null },
    stats: { state_rows: 6 }, ...extra,
  };
}

/** A server: 202 (computing) for the first request of each tick, then pages from `answer`. */
function serve(answer: (params: URLSearchParams) => unknown) {
  const computed = new Set<string>();
  const fetchMock = vi.fn(async (url: string) => {
    const params = new URL(url, 'http://x').searchParams;
    const tick = params.get('tick')!;
    if (!computed.has(tick)) {
      computed.add(tick);
      return json({ status: 'running', progress: 0.4, run: 7, tick: Number(tick), node: 'balances', kind: params.get('kind') }, 202);
    }
    return json(answer(params));
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

const paramsOf = (fetchMock: ReturnType<typeof vi.fn>) => fetchMock.mock.calls.map((c) => new URL(c[0] as string, 'http://x').searchParams);

describe('NodeInspector', () => {
  it('shows progress while the tick is recomputed, then the delta with its +/- rows and sizes', async () => {
    const fetchMock = serve((p) => done(p, [{ data: { account: 1, balance: -30 }, weight: 1 }, { data: { account: 2, balance: 20 }, weight: -1 }]));
    render(<NodeInspector runId={7} node="balances" currentTick={2} onClose={() => undefined} pollMs={100} debounceMs={0} />);
    expect((await screen.findByTestId('inspector-progress')).textContent).toContain('recomputing every node at tick 2 from the input log…  40%');
    await waitFor(() => expect(within(screen.getByTestId('inspector-table')).getAllByRole('row')).toHaveLength(3));
    expect(screen.queryByTestId('inspector-progress')).toBeNull();
    const rows = within(screen.getByTestId('inspector-table')).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.textContent)).toEqual(['1-30+1', '220-1']);
    expect(rows[1]!.className).toBe('row-minus');
    expect(screen.getByTestId('inspector-sizes').textContent).toContain('+1 −1 (2 rows)');
    expect(screen.getByTestId('inspector-contents-rows').textContent).toBe('3 rows');
    expect(screen.getByTestId('inspector-state-rows').textContent).toBe('6 rows');
    const first = paramsOf(fetchMock)[0]!;
    expect([first.get('tick'), first.get('kind'), first.get('page')]).toEqual(['2', 'delta', '1']);
    expect(fetchMock.mock.calls[0]![0]).toMatch(/^\/api\/runs\/7\/nodes\/balances\/\?/);
  });

  it('switches to the contents, sorts on the server and goes to a past tick', async () => {
    const fetchMock = serve((p) => done(p, [{ data: { account: 3, balance: 10 }, weight: 1 }]));
    render(<NodeInspector runId={7} node="balances" currentTick={2} onClose={() => undefined} pollMs={1} debounceMs={0} />);
    await waitFor(() => expect(screen.getByTestId('inspector-table')).toBeTruthy());
    fireEvent.click(screen.getByTestId('inspector-kind-integral'));
    await waitFor(() => expect(screen.getByTestId('inspector-table').dataset.kind).toBe('integral'));
    fireEvent.click(screen.getByTestId('inspector-sort-balance'));
    await waitFor(() => expect(paramsOf(fetchMock).at(-1)!.get('sort')).toBe('balance'));
    fireEvent.click(screen.getByTestId('inspector-sort-balance'));
    await waitFor(() => expect(paramsOf(fetchMock).at(-1)!.get('desc')).toBe('1'));
    fireEvent.click(screen.getByTestId('inspector-sort-weight'));
    await waitFor(() => expect(paramsOf(fetchMock).at(-1)!.get('sort')).toBe('@weight'));

    fireEvent.change(screen.getByTestId('inspector-tick'), { target: { value: '1' } });
    await waitFor(() => expect(screen.getByTestId('inspector-table').dataset.tick).toBe('1'));
    expect((screen.getByTestId('inspector-follow') as HTMLInputElement).checked).toBe(false);
    const last = paramsOf(fetchMock).at(-1)!;
    expect([last.get('tick'), last.get('kind'), last.get('sort')]).toEqual(['1', 'integral', '@weight']);
  });

  it('follows a live run: a tick is inspected once ticks settle, not every tick that flies by', async () => {
    const fetchMock = vi.fn(async (url: string) => json(done(new URL(url, 'http://x').searchParams, [])));
    vi.stubGlobal('fetch', fetchMock);
    const props = { runId: 7, node: 'balances', onClose: () => undefined, pollMs: 1, debounceMs: 0, followMs: 80 };
    const { rerender } = render(<NodeInspector {...props} currentTick={2} />);
    await waitFor(() => expect(screen.getByTestId('inspector-table').dataset.tick).toBe('2'));
    rerender(<NodeInspector {...props} currentTick={3} />);
    rerender(<NodeInspector {...props} currentTick={4} />);
    rerender(<NodeInspector {...props} currentTick={5} />);
    await waitFor(() => expect(screen.getByTestId('inspector-table').dataset.tick).toBe('5'));
    expect(paramsOf(fetchMock).map((p) => p.get('tick'))).toEqual(['2', '5']);
  });

  it('sends searches, sign and column filters, and shows a 400 naming the field', async () => {
    const fetchMock = vi.fn(async (url: string) => {
      const p = new URL(url, 'http://x').searchParams;
      if (p.get('filter') === 'balance:abc') {
        return json({ detail: "Query parameter 'filter': column 'balance': expected a bigint value, got 'abc'.", errors: [{ field: 'filter', message: "column 'balance': expected a bigint value, got 'abc'" }] }, 400);
      }
      return json(done(p, [{ data: { account: 1, balance: -30 }, weight: 1 }]));
    });
    vi.stubGlobal('fetch', fetchMock);
    render(<NodeInspector runId={7} node="balances" currentTick={2} onClose={() => undefined} pollMs={1} debounceMs={0} />);
    await waitFor(() => expect(screen.getByTestId('inspector-table')).toBeTruthy());
    fireEvent.change(screen.getByTestId('inspector-search'), { target: { value: '-3' } });
    await waitFor(() => expect(paramsOf(fetchMock).at(-1)!.get('q')).toBe('-3'));
    fireEvent.change(screen.getByTestId('inspector-sign'), { target: { value: 'negative' } });
    await waitFor(() => expect(paramsOf(fetchMock).at(-1)!.get('sign')).toBe('negative'));
    fireEvent.change(screen.getByTestId('inspector-filter-column'), { target: { value: 'balance' } });
    fireEvent.change(screen.getByTestId('inspector-filter-value'), { target: { value: 'abc' } });
    await waitFor(() => expect(screen.getByTestId('inspector-error').textContent).toContain("expected a bigint value, got 'abc'"));
    expect(paramsOf(fetchMock).at(-1)!.getAll('filter')).toEqual(['balance:abc']);
  });

  it('a 10^6-row state: only the pages in sight are fetched and rendered', async () => {
    const count = 1_000_000;
    const fetchMock = vi.fn(async (url: string) => {
      const p = new URL(url, 'http://x').searchParams;
      const page = Number(p.get('page'));
      const size = Number(p.get('page_size'));
      const rows = Array.from({ length: size }, (_, i) => ({ data: { account: (page - 1) * size + i, balance: 0 }, weight: 1 }));
      return json({ ...done(p, rows), count, total: count, pages: count / size });
    });
    vi.stubGlobal('fetch', fetchMock);
    render(<NodeInspector runId={7} node="balances" currentTick={0} onClose={() => undefined} pollMs={1} debounceMs={0} pageSize={100} />);
    await waitFor(() => expect(screen.getByTestId('inspector-table').dataset.count).toBe(String(count)));
    expect(screen.getByTestId('inspector-count').textContent).toContain('1000000 of 1000000 rows');
    const scroll = screen.getByTestId('inspector-scroll');
    Object.defineProperty(scroll, 'scrollTop', { value: 500_000 * 28, configurable: true }); // the middle of the state
    fireEvent.scroll(scroll);
    await waitFor(() => expect(paramsOf(fetchMock).some((p) => p.get('page') === '5001')).toBe(true));
    await waitFor(() => expect(screen.getByText('500000')).toBeTruthy());
    expect(fetchMock.mock.calls.length).toBeLessThan(6);
    expect(within(screen.getByTestId('inspector-table')).getAllByRole('row').length).toBeLessThan(80);
  });
});

describe('pages of a virtualised table', () => {
  it('maps rows in sight to pages, each asked for once', () => {
    expect(pagesFor(0, 30, 100, 1000)).toEqual([1]);
    expect(pagesFor(95, 130, 100, 1000)).toEqual([1, 2]);
    expect(pagesFor(990, 1020, 100, 1000)).toEqual([10]);
    expect(pagesFor(0, 10, 100, 0)).toEqual([]);
    const cache = new PageCache(100);
    expect(cache.claim([1, 2])).toEqual([1, 2]);
    expect(cache.claim([2, 3])).toEqual([3]);
    cache.put(2, [{ data: { a: 1 }, weight: -1 }]);
    expect(cache.row(100)).toEqual({ data: { a: 1 }, weight: -1 });
    expect(cache.row(0)).toBeUndefined();
    cache.release(3);
    expect(cache.claim([3])).toEqual([3]);
  });

  it('builds the URL with every parameter encoded', () => {
    const url = nodeUrl(7, 'a b', { tick: 2, kind: 'integral', page: 3, pageSize: 50, sort: 'x', desc: true, filters: ['c:1', 'd:&'], q: 'hi', sign: 'positive' });
    expect(url).toBe('/api/runs/7/nodes/a%20b/?tick=2&kind=integral&page=3&page_size=50&sort=x&desc=1&filter=c%3A1&filter=d%3A%26&q=hi&sign=positive');
  });
});
