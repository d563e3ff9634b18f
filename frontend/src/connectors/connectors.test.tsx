// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectorStatus } from './ConnectorStatus';
import { ConnectorsSection, freshName, optionValue, type DeclaredConnector } from './ConnectorsSection';
import { lagText, positionText, rateText } from './connectorsApi';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

const KINDS = [
  { name: 'file_source', source: true, doc: 'reads files', options: [
    { name: 'path', required: true, type: 'string', choices: [] },
    { name: 'format', required: false, type: 'string', choices: ['csv', 'json'] },
    { name: 'columns', required: false, type: 'list', choices: [] },
    { name: 'max_batch', required: false, type: 'integer', choices: [] },
  ] },
  { name: 'file_sink', source: false, doc: 'writes files', options: [{ name: 'path', required: true, type: 'string', choices: [] }] },
  { name: 'carrier_pigeon_source', source: true, doc: 'a kind only the server knows', options: [
    { name: 'loft', required: true, type: 'string', choices: [] },
  ] },
];

const connector = (over: Record<string, unknown>) => ({
  name: 'orders-in', kind: 'file_source', node: 'orders', config: {}, secrets_env: {}, secret_keys: [], state: 'running',
  position: {}, records_in: 0, records_out: 0, last_tick: -1, errors: 0, last_error: '', error_at: null,
  lag: null, lag_unit: '', rows_per_second: 0, dead_letters: 0, created_at: '2026-01-01T00:00:00Z', ...over,
});

describe('option values', () => {
  it('reads each type back, and says what is wrong', () => {
    const opt = (type: string) => ({ name: 'x', required: false, type: type as 'string', choices: [] });
    expect(optionValue(opt('string'), ' /data ')).toBe(' /data ');
    expect(optionValue(opt('string'), '  ')).toBeUndefined();
    expect(optionValue(opt('integer'), '500')).toBe(500);
    expect((optionValue(opt('integer'), '5.5') as Error).message).toBe('x: a whole number');
    expect(optionValue(opt('list'), '["a","b"]')).toEqual(['a', 'b']);
    expect((optionValue(opt('list'), '{"a": 1}') as Error).message).toContain('a JSON list');
    expect((optionValue(opt('object'), '{oops') as Error).message).toBe('x: not valid JSON');
  });

  it('names new connectors after the node, once each', () => {
    expect(freshName('orders', true, [])).toBe('orders-in');
    expect(freshName('orders', true, ['orders-in'])).toBe('orders-in2');
    expect(freshName('big_orders', false, [])).toBe('big_orders-out');
  });

  it('says how far behind and how fast', () => {
    expect(lagText(null, '')).toBe('–');
    expect(lagText(1, 'files')).toBe('1 file');
    expect(lagText(12500, 'records')).toBe('12,500 records');
    expect(lagText(0, 'ticks')).toBe('0 ticks');
    expect(rateText(0)).toBe('0');
    expect(rateText(3.456)).toBe('3.5');
    expect(rateText(1240.4)).toBe('1,240');
  });

  it('says where a source is', () => {
    expect(positionText({ offsets: { '0': 12, '1': 3 } })).toBe('p0@12 p1@3');
    expect(positionText({ after: 'a.csv', file: 'b.csv', record: 40 })).toBe('after a.csv; in b.csv at record 40');
  });
});

function Editor({ source, start = [] }: { source: boolean; start?: DeclaredConnector[] }) {
  const [connectors, setConnectors] = useState<DeclaredConnector[]>(start);
  return (
    <>
      <ConnectorsSection node="orders" source={source} connectors={connectors} readOnly={false} onChange={(c) => setConnectors(c)} />
      <pre data-testid="doc">{JSON.stringify(connectors)}</pre>
    </>
  );
}

describe('ConnectorsSection', () => {
  it('builds the form from the server kinds, the document holds what was typed, and tests the connection', async () => {
    const fetchMock = vi.fn(async (url: string, init?: RequestInit) =>
      url === '/api/connector-kinds/' ? json(KINDS) : init?.method === 'POST' ? json({ ok: false, error: '/data is not there (yet)' }) : json({}, 404),
    );
    vi.stubGlobal('fetch', fetchMock);
    render(<Editor source />);
    await waitFor(() => expect((screen.getByTestId('connector-add') as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByTestId('connector-add'));
    // only sources are offered on an input, the server-only kind among them
    const kinds = [...(screen.getByTestId('connector-0-kind') as HTMLSelectElement).options].map((o) => o.value);
    expect(kinds).toEqual(['file_source', 'carrier_pigeon_source']);
    fireEvent.change(screen.getByTestId('connector-0-opt-path'), { target: { value: '/data' } });
    fireEvent.change(screen.getByTestId('connector-0-opt-format'), { target: { value: 'json' } });
    fireEvent.change(screen.getByTestId('connector-0-opt-max_batch'), { target: { value: '50' } });
    fireEvent.change(screen.getByTestId('connector-0-opt-columns'), { target: { value: '["id",' } });
    expect(screen.getByText('columns: not valid JSON')).toBeTruthy();
    fireEvent.click(screen.getByTestId('connector-0-secret-add'));
    fireEvent.change(screen.getByTestId('connector-0-secret-0-option'), { target: { value: 'password' } });
    fireEvent.change(screen.getByTestId('connector-0-secret-0-env'), { target: { value: 'PG_PASSWORD' } });
    expect(JSON.parse(screen.getByTestId('doc').textContent!)).toEqual([
      { name: 'orders-in', kind: 'file_source', config: { path: '/data', format: 'json', max_batch: 50 }, secrets_env: { password: 'PG_PASSWORD' } },
    ]);
    fireEvent.click(screen.getByTestId('connector-0-test'));
    await waitFor(() => expect(screen.getByTestId('connector-0-test-result').textContent).toBe('/data is not there (yet)'));
    const [url, init] = fetchMock.mock.calls.at(-1)!;
    expect(url).toBe('/api/connector-kinds/file_source/test/');
    expect(JSON.parse(String(init!.body))).toEqual({ config: { path: '/data', format: 'json', max_batch: 50 }, secrets_env: { password: 'PG_PASSWORD' } });
    // another kind starts from an empty config, with its own options
    fireEvent.change(screen.getByTestId('connector-0-kind'), { target: { value: 'carrier_pigeon_source' } });
    expect(screen.getByTestId('connector-0-opt-loft')).toBeTruthy();
    expect(JSON.parse(screen.getByTestId('doc').textContent!)[0].config).toEqual({});
    fireEvent.click(screen.getByTestId('connector-0-remove'));
    expect(screen.getByTestId('doc').textContent).toBe('[]');
  });
});

describe('ConnectorStatus', () => {
  it('shows each connector and restarts a failed one', async () => {
    let failed = true;
    const fetchMock = vi.fn(async (_url: string, init?: RequestInit) => {
      if (init?.method === 'POST') {
        failed = false;
        return json(connector({ name: 'big-out', kind: 'file_sink', node: 'big_orders', state: 'running', last_error: 'disk full', error_at: '2026-01-01T00:00:00Z' }));
      }
      return json([
        connector({ name: 'big-out', kind: 'file_sink', node: 'big_orders', state: failed ? 'failed' : 'running', last_tick: 4, records_out: 9, last_error: 'disk full', error_at: '2026-01-01T00:00:00Z' }),
        connector({ records_in: 12, position: { after: 'a.csv' } }),
      ]);
    });
    vi.stubGlobal('fetch', fetchMock);
    render(<ConnectorStatus runId={7} tick={4} status="running" finished={false} />);
    await waitFor(() => expect(screen.getByTestId('connector-state-big-out').textContent).toBe('failed'));
    expect(screen.getByTestId('connector-in-orders-in').textContent).toBe('12');
    expect(screen.getByTestId('connector-out-big-out').textContent).toBe('9');
    expect(screen.getByTestId('connector-error-big-out').textContent).toContain('disk full');
    expect(screen.queryByTestId('connector-restart-orders-in')).toBeNull();
    fireEvent.click(screen.getByTestId('connector-restart-big-out'));
    await waitFor(() => expect(screen.getByTestId('connector-state-big-out').textContent).toBe('running'));
    expect(fetchMock.mock.calls.some(([url, init]) => url === '/api/runs/7/connectors/big-out/restart/' && init?.method === 'POST')).toBe(true);
  });
});

describe('ConnectorStatus: lag, rows/s, dead letters, pause and start', () => {
  it('shows them and pauses then starts a connector', async () => {
    let state = 'running';
    const fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
      if (init?.method === 'POST') {
        state = url.endsWith('/pause/') ? 'paused' : 'running';
        return json(connector({ state, dead_letters: 7, lag: 3, lag_unit: 'files', rows_per_second: 2.5 }));
      }
      if (url.includes('/dead-letters/')) {
        return json({ count: 7, next: null, previous: null, results: [
          { id: 9, position: 'a.csv:4', column: 'amount', message: "expected an integer (bigint), got 'lots'", payload: '4,d,lots', created_at: '2026-01-01T00:00:00Z' },
        ] });
      }
      return json([connector({ state, dead_letters: 7, lag: 3, lag_unit: 'files', rows_per_second: 2.5 })]);
    });
    vi.stubGlobal('fetch', fetchMock);
    render(<ConnectorStatus runId={7} tick={4} status="running" finished={false} />);
    await waitFor(() => expect(screen.getByTestId('connector-lag-orders-in').textContent).toBe('3 files'));
    expect(screen.getByTestId('connector-rate-orders-in').textContent).toBe('2.5');
    expect(screen.getByTestId('connector-dead-orders-in').textContent).toBe('7');
    await waitFor(() => expect(screen.getAllByTestId('dead-letter')).toHaveLength(1));
    expect(screen.getByTestId('dead-letters-orders-in').textContent).toContain("a.csv:4amountexpected an integer (bigint), got 'lots'4,d,lots");
    expect(fetchMock.mock.calls.some(([url]) => url === '/api/runs/7/connectors/orders-in/dead-letters/?page_size=5')).toBe(true);
    expect(screen.queryByTestId('connector-start-orders-in')).toBeNull();
    fireEvent.click(screen.getByTestId('connector-pause-orders-in'));
    await waitFor(() => expect(screen.getByTestId('connector-state-orders-in').textContent).toBe('paused'));
    expect(screen.queryByTestId('connector-pause-orders-in')).toBeNull();
    fireEvent.click(screen.getByTestId('connector-start-orders-in'));
    await waitFor(() => expect(screen.getByTestId('connector-state-orders-in').textContent).toBe('running'));
    const posts = fetchMock.mock.calls.filter(([, init]) => init?.method === 'POST').map(([url]) => url);
    expect(posts).toEqual(['/api/runs/7/connectors/orders-in/pause/', '/api/runs/7/connectors/orders-in/start/']);
  });
});
