// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Run } from '../api';
import { RunView } from './RunView';

class FakeWebSocket {
  static instances: FakeWebSocket[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;

  constructor(readonly url: string) {
    FakeWebSocket.instances.push(this);
  }

  close() {}

  serverSend(message: unknown) {
    act(() => this.onmessage?.({ data: JSON.stringify(message) } as MessageEvent));
  }
}

const run: Run = {
  id: 7,
  circuit: 3,
  version: 1,
  status: 'running',
  current_tick: -1,
  last_sequence: 0,
  lag: { pushes: 0, rows: 0, ticks: 0 },
  worker: '',
  error: '',
  inputs: [
    {
      name: 'orders',
      schema: [
        { name: 'id', type: 'bigint' },
        { name: 'amount', type: 'double' },
        { name: 'paid', type: 'boolean' },
        { name: 'note', type: 'string' },
      ],
    },
  ],
  views: ['big_orders'],
  created_at: '2024-01-01T00:00:00Z',
};

let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  FakeWebSocket.instances = [];
  vi.stubGlobal('WebSocket', FakeWebSocket);
  fetchMock = vi.fn(async (url: string) => {
    if (url === '/api/runs/7/') return new Response(JSON.stringify(run), { status: 200 });
    if (url === '/api/runs/7/inputs/orders/push/') {
      return new Response(JSON.stringify({ token: 'tok-1', sequence: 12 }), { status: 202 });
    }
    return new Response(JSON.stringify({ detail: 'Not found.' }), { status: 404 });
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

async function openRun() {
  render(<RunView runId={7} />);
  await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(1));
  const socket = FakeWebSocket.instances[0]!;
  expect(socket.url).toBe(`ws://${window.location.host}/ws/runs/7/`);
  return socket;
}

describe('RunView', () => {
  it('shows the snapshot and live deltas', async () => {
    const socket = await openRun();
    expect(screen.getByTestId('ws-state').textContent).toBe('connecting');
    act(() => socket.onopen?.(new Event('open')));
    expect(screen.getByTestId('ws-state').textContent).toBe('live');

    socket.serverSend({
      type: 'snapshot',
      seq: 2,
      tick: 2,
      status: 'running',
      views: { big_orders: [{ data: { id: 1, amount: 150 }, weight: 1 }] },
    });
    expect(screen.getByTestId('run-tick').textContent).toBe('2');
    expect(within(screen.getByTestId('view-table-big_orders')).getAllByTestId('view-row')).toHaveLength(1);

    socket.serverSend({
      type: 'delta',
      seq: 3,
      tick: 3,
      views: {
        big_orders: [
          { data: { amount: 150, id: 1 }, weight: -1 },
          { data: { id: 2, amount: 500 }, weight: 2 },
        ],
      },
      frontier: {},
      stats: {},
    });
    expect(screen.getByTestId('run-tick').textContent).toBe('3');
    const rows = within(screen.getByTestId('view-table-big_orders')).getAllByTestId('view-row');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.textContent).toContain('500');
    expect(rows[0]?.getAttribute('data-weight')).toBe('2');

    const feed = within(screen.getByTestId('delta-feed-big_orders')).getAllByTestId('delta-row');
    expect(feed.map((r) => [r.getAttribute('data-tick'), r.getAttribute('data-weight'), r.textContent])).toEqual([
      ['3', '-1', '-1  tick 3  {amount: 150, id: 1}'],
      ['3', '2', '+2  tick 3  {id: 2, amount: 500}'],
    ]);

    socket.serverSend({ type: 'status', status: 'stopped', current_tick: 3, error: '' });
    expect(screen.getByTestId('run-status').textContent).toBe('stopped');
    expect((screen.getByTestId('stop-run') as HTMLButtonElement).disabled).toBe(true);
  });

  it('pushes a typed insert record and shows the result', async () => {
    await openRun();
    fireEvent.change(screen.getByTestId('push-field-orders-id'), { target: { value: '5' } });
    fireEvent.change(screen.getByTestId('push-field-orders-amount'), { target: { value: '99.5' } });
    fireEvent.click(screen.getByTestId('push-field-orders-paid'));
    fireEvent.click(screen.getByTestId('push-insert-orders'));

    await waitFor(() => expect(screen.getByTestId('push-result-orders').textContent).toContain('12'));
    const call = fetchMock.mock.calls.find(([url]) => url === '/api/runs/7/inputs/orders/push/');
    expect(JSON.parse(call?.[1].body as string)).toEqual([{ insert: { id: 5, amount: 99.5, paid: true, note: null } }]);
  });

  it('rejects a non-integer bigint without calling the server', async () => {
    await openRun();
    fireEvent.change(screen.getByTestId('push-field-orders-id'), { target: { value: '1.5' } });
    fireEvent.click(screen.getByTestId('push-delete-orders'));
    expect(screen.getByTestId('push-field-error-orders-id').textContent).toMatch(/id must be a whole number/);
    expect(fetchMock.mock.calls.some(([url]) => String(url).includes('/push/'))).toBe(false);
  });

  it('shows row errors from the server', async () => {
    fetchMock.mockImplementation(async (url: string) =>
      url === '/api/runs/7/'
        ? new Response(JSON.stringify(run), { status: 200 })
        : new Response(JSON.stringify({ errors: [{ row: 0, field: 'amount', message: 'must not be null' }] }), {
            status: 400,
          }),
    );
    await openRun();
    fireEvent.click(screen.getByTestId('push-insert-orders'));
    await waitFor(() =>
      expect(screen.getByTestId('push-error-orders').textContent).toBe('row 0, amount: must not be null'),
    );
  });

  it('names the circuit in the breadcrumb and prefills the feed from stored deltas after a reload', async () => {
    fetchMock.mockImplementation(async (url: string) => {
      if (url === '/api/runs/7/') return new Response(JSON.stringify({ ...run, current_tick: 1, lag: 0 }), { status: 200 });
      if (url === '/api/circuits/3/') {
        return new Response(JSON.stringify({ id: 3, name: 'Big orders', latest_version: null }), { status: 200 });
      }
      if (url.startsWith('/api/runs/7/deltas/')) {
        expect(url).toBe('/api/runs/7/deltas/?since=-1&limit=200');
        return new Response(
          JSON.stringify({
            ticks: [
              { tick: 0, views: { big_orders: [{ data: { id: 1, amount: 150 }, weight: 1 }] }, frontier: {}, stats: {} },
              { tick: 1, views: { big_orders: [{ data: { id: 1, amount: 150 }, weight: -1 }] }, frontier: {}, stats: {} },
            ],
            more: false,
          }),
          { status: 200 },
        );
      }
      return new Response(JSON.stringify({ detail: 'Not found.' }), { status: 404 });
    });
    const socket = await openRun();
    await waitFor(() => expect(screen.getByTestId('breadcrumb-circuit').textContent).toBe('Big orders'));
    act(() => socket.onopen?.(new Event('open')));
    socket.serverSend({ type: 'snapshot', seq: 1, tick: 1, status: 'running', views: { big_orders: [] } });
    await waitFor(() =>
      expect(
        within(screen.getByTestId('delta-feed-big_orders'))
          .getAllByTestId('delta-row')
          .map((r) => [r.dataset.tick, r.dataset.weight]),
      ).toEqual([
        ['1', '-1'],
        ['0', '1'],
      ]),
    );
    expect(screen.getByTestId('run-lag').textContent).toBe('0 pushes');
  });

  it('says so when the server cannot pause runs', async () => {
    const socket = await openRun();
    act(() => socket.onopen?.(new Event('open')));
    socket.serverSend({ type: 'snapshot', seq: 0, tick: 0, status: 'running', views: {} });
    fireEvent.click(screen.getByTestId('pause-run'));
    await waitFor(() =>
      expect(screen.getByTestId('run-action-error').textContent).toBe('This server cannot pause runs yet (HTTP 404).'),
    );
    expect(screen.getByTestId('run-status').textContent).toBe('running');
  });
});
