import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  backoffDelay,
  RunStream,
  runSocketUrl,
  type ConnectionState,
  type DeltaMessage,
  type ServerMessage,
  type SnapshotMessage,
  type SocketLike,
} from './runStream';

/** Minimal stand-in for the browser WebSocket, driven by the test. */
class FakeSocket implements SocketLike {
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closedByClient = false;

  constructor(readonly url: string) {}

  open() {
    this.onopen?.(new Event('open'));
  }

  send(message: ServerMessage | string) {
    const data = typeof message === 'string' ? message : JSON.stringify(message);
    this.onmessage?.({ data } as MessageEvent);
  }

  serverClose(code = 1006, reason = '') {
    this.onclose?.({ code, reason } as CloseEvent);
  }

  close() {
    this.closedByClient = true;
  }
}

const URL = 'ws://example.test/ws/runs/7/';
const quiet = { frontier: {}, stats: {}, lag: { pushes: 0, rows: 0, ticks: 0 } }; // the fields these cases do not look at
const quietTick = { ...quiet, ms: 1 };

const snapshot = (seq: number, status: SnapshotMessage['status'] = 'running'): SnapshotMessage => ({
  type: 'snapshot',
  seq,
  tick: seq,
  status,
  views: { big: [{ data: { id: 1 }, weight: 1 }] },
  ...quiet,
});

const delta = (seq: number): DeltaMessage => ({
  type: 'delta',
  seq,
  tick: seq,
  views: { big: [{ data: { id: 100 + seq }, weight: 1 }] },
  ...quietTick,
  frontier: {},
  stats: {},
});

function setup() {
  const sockets: FakeSocket[] = [];
  const events: string[] = [];
  const states: ConnectionState[] = [];
  const errors: string[] = [];
  const stream = new RunStream(
    URL,
    {
      onSnapshot: (m) => events.push(`snapshot ${m.seq}`),
      onDelta: (m) => events.push(`delta ${m.seq}`),
      onStatus: (m) => events.push(`status ${m.status} ${m.current_tick}`),
      onLag: (m) => events.push(`lag ${m.tick} ${m.lag.pushes}`),
      onServerError: (m) => errors.push(m),
      onConnectionChange: (s) => states.push(s),
    },
    {
      createSocket: (url) => {
        const socket = new FakeSocket(url);
        sockets.push(socket);
        return socket;
      },
    },
  );
  const last = () => {
    const socket = sockets[sockets.length - 1];
    if (!socket) throw new Error('no socket opened');
    return socket;
  };
  return { stream, sockets, events, states, errors, last };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('runSocketUrl', () => {
  it('uses ws on http and wss on https, with the page host', () => {
    expect(runSocketUrl(7, { protocol: 'http:', host: 'localhost:8000' })).toBe('ws://localhost:8000/ws/runs/7/');
    expect(runSocketUrl(7, { protocol: 'https:', host: 'dbsp.example' })).toBe('wss://dbsp.example/ws/runs/7/');
  });
});

describe('backoffDelay', () => {
  it('doubles from 0.5 s up to 10 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map(backoffDelay)).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000, 10000]);
  });
});

describe('RunStream', () => {
  it('connects without since, goes live on open, applies snapshot then deltas in order', () => {
    const { stream, sockets, events, states, last } = setup();
    stream.start();
    expect(sockets).toHaveLength(1);
    expect(last().url).toBe(URL);
    expect(states).toEqual(['connecting']);

    last().open();
    expect(states).toEqual(['connecting', 'live']);

    last().send(snapshot(-1));
    last().send(delta(0));
    last().send(delta(1));
    expect(events).toEqual(['snapshot -1', 'delta 0', 'delta 1']);
    expect(stream.lastSeq).toBe(1);
  });

  it('passes lag messages on without moving its position in the stream', () => {
    const { stream, events, last } = setup();
    stream.start();
    last().open();
    last().send(snapshot(2));
    last().send({ type: 'lag', tick: 2, lag: { pushes: 3, rows: 30, ticks: 1 } });
    expect(events).toEqual(['snapshot 2', 'lag 2 3']);
    expect(stream.lastSeq).toBe(2);
    last().send(delta(3));
    expect(events).toEqual(['snapshot 2', 'lag 2 3', 'delta 3']);
  });

  it('ignores deltas with seq <= the last applied one', () => {
    const { stream, events, last } = setup();
    stream.start();
    last().open();
    last().send(snapshot(3));
    last().send(delta(3));
    last().send(delta(2));
    last().send(delta(4));
    last().send(delta(4));
    expect(events).toEqual(['snapshot 3', 'delta 4']);
    expect(stream.lastSeq).toBe(4);
  });

  it('ignores deltas that arrive before any snapshot', () => {
    const { stream, events, last } = setup();
    stream.start();
    last().open();
    last().send(delta(0));
    expect(events).toEqual([]);
    expect(stream.lastSeq).toBeNull();
  });

  it('on a gap, closes the socket and resyncs from a fresh snapshot', () => {
    const { stream, sockets, events, states, last } = setup();
    stream.start();
    const first = last();
    first.open();
    first.send(snapshot(2));
    first.send(delta(3));
    first.send(delta(5)); // 4 is missing

    expect(events).toEqual(['snapshot 2', 'delta 3']);
    expect(first.closedByClient).toBe(true);
    expect(states[states.length - 1]).toBe('reconnecting');

    vi.advanceTimersByTime(499);
    expect(sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(2);
    // No ?since: the server answers with a snapshot of the current state.
    expect(last().url).toBe(URL);
    expect(stream.lastSeq).toBeNull();

    // Late messages from the old socket are not delivered any more.
    first.send(delta(4));
    expect(events).toEqual(['snapshot 2', 'delta 3']);

    last().open();
    last().send(snapshot(5));
    last().send(delta(5)); // already in the snapshot
    last().send(delta(6));
    expect(events).toEqual(['snapshot 2', 'delta 3', 'snapshot 5', 'delta 6']);
    expect(states[states.length - 1]).toBe('live');
  });

  it('after a dropped connection, replays from since=<last seq> and drops what it already has', () => {
    const { stream, sockets, events, states, last } = setup();
    stream.start();
    last().open();
    last().send(snapshot(0));
    last().send(delta(1));
    last().send(delta(2));
    last().serverClose(1006);
    expect(states[states.length - 1]).toBe('reconnecting');
    vi.advanceTimersByTime(500);
    expect(sockets).toHaveLength(2);
    expect(last().url).toBe(`${URL}?since=2`);
    last().open();
    // The server's replay can overlap with what the live group sends: each seq once, in order.
    last().send({ ...quiet, type: 'status', status: 'running', tick: 4, current_tick: 4, error: '' });
    last().send(delta(2));
    last().send(delta(3));
    last().send(delta(3));
    last().send(delta(4));
    expect(events).toEqual(['snapshot 0', 'delta 1', 'delta 2', 'status running 4', 'delta 3', 'delta 4']);
    expect(stream.lastSeq).toBe(4);
  });

  it('accepts a fresh snapshot after reconnecting, replacing its position', () => {
    const { stream, last } = setup();
    stream.start();
    last().open();
    last().send(snapshot(1));
    last().serverClose();
    vi.advanceTimersByTime(500);
    expect(last().url).toBe(`${URL}?since=1`);
    last().open();
    last().send(snapshot(9));
    expect(stream.lastSeq).toBe(9);
    last().send(delta(10));
    expect(stream.lastSeq).toBe(10);
  });

  it('backs off 0.5 s, 1 s, 2 s ... 10 s while the connection keeps failing', () => {
    const { stream, sockets, states, last } = setup();
    stream.start();
    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      last().serverClose();
      const before = sockets.length;
      let waited = 0;
      while (sockets.length === before) {
        vi.advanceTimersByTime(100);
        waited += 100;
      }
      delays.push(waited);
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000]);
    expect(states).toEqual(['connecting', 'reconnecting']);
  });

  it('resets the backoff once a message is applied', () => {
    const { stream, sockets, last } = setup();
    stream.start();
    last().serverClose();
    vi.advanceTimersByTime(500);
    last().serverClose();
    vi.advanceTimersByTime(1000);
    expect(sockets).toHaveLength(3);

    last().open();
    last().send(snapshot(0));
    last().serverClose();
    vi.advanceTimersByTime(499);
    expect(sockets).toHaveLength(3);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(4);
  });

  it('does not reconnect after close()', () => {
    const { stream, sockets, last } = setup();
    stream.start();
    const socket = last();
    socket.open();
    stream.close();
    expect(socket.closedByClient).toBe(true);
    socket.serverClose();
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
  });

  it('close() cancels a pending reconnect', () => {
    const { stream, sockets, last } = setup();
    stream.start();
    last().serverClose();
    stream.close();
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
  });

  it('stops for good when the run has finished and the server closes', () => {
    const { stream, sockets, states, events, last } = setup();
    stream.start();
    last().open();
    last().send(snapshot(4));
    last().send({ ...quiet, type: 'status', status: 'stopped', tick: 4, current_tick: 4, error: '' });
    last().serverClose(1000);
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
    expect(states[states.length - 1]).toBe('closed');
    expect(events).toEqual(['snapshot 4', 'status stopped 4']);
  });

  it('does not retry when the server refuses access (4403)', () => {
    const { stream, sockets, states, errors, last } = setup();
    stream.start();
    last().serverClose(4403, 'Forbidden');
    vi.advanceTimersByTime(60_000);
    expect(sockets).toHaveLength(1);
    expect(states[states.length - 1]).toBe('closed');
    expect(errors).toEqual(['Forbidden']);
  });

  it('retries when Redis is unreachable (4503) or the server failed (1011)', () => {
    for (const code of [4503, 1011]) {
      const { stream, sockets, states, last } = setup();
      stream.start();
      last().open();
      last().serverClose(code, 'retry');
      expect(states[states.length - 1]).toBe('reconnecting');
      vi.advanceTimersByTime(60_000);
      expect(sockets.length).toBeGreaterThan(1);
      stream.close();
    }
  });

  it('reports server error messages and malformed frames', () => {
    const { stream, errors, last } = setup();
    stream.start();
    last().open();
    last().send({ type: 'error', error: 'input "x" not found' });
    last().send('not json');
    last().send({ type: 'error', error: 'ZeroDivisionError', tick: 3, node: 'by_account' });
    expect(errors).toEqual([
      'input "x" not found',
      'Received a malformed message from the server.',
      'tick 3, node by_account: ZeroDivisionError',
    ]);
  });
});

describe('RunStream network awareness', () => {
  function withNetwork() {
    let online = true;
    const listeners: { on: () => void; off: () => void }[] = [];
    const sockets: FakeSocket[] = [];
    const events: string[] = [];
    const states: ConnectionState[] = [];
    const stream = new RunStream(
      URL,
      {
        onSnapshot: (m) => events.push(`snapshot ${m.seq}`),
        onDelta: (m) => events.push(`delta ${m.seq}`),
        onConnectionChange: (s) => states.push(s),
      },
      {
        createSocket: (url) => {
          const socket = new FakeSocket(url);
          sockets.push(socket);
          return socket;
        },
        network: {
          isOnline: () => online,
          subscribe(on, off) {
            const entry = { on, off };
            listeners.push(entry);
            return () => listeners.splice(listeners.indexOf(entry), 1);
          },
        },
        heartbeatMs: 1000,
        idleTimeoutMs: 2500,
      },
    );
    const goOffline = () => {
      online = false;
      listeners.forEach((l) => l.off());
    };
    const goOnline = () => {
      online = true;
      listeners.forEach((l) => l.on());
    };
    const last = () => sockets[sockets.length - 1]!;
    return { stream, sockets, events, states, goOffline, goOnline, last, listeners };
  }

  it('drops the socket when the browser goes offline and catches up with since= when back', () => {
    const { stream, sockets, events, states, goOffline, goOnline, last } = withNetwork();
    stream.start();
    last().open();
    last().send(snapshot(3));
    const first = last();
    goOffline();
    expect(first.closedByClient).toBe(true);
    expect(states[states.length - 1]).toBe('offline');
    // No reconnect attempts while offline, however long it lasts.
    vi.advanceTimersByTime(120_000);
    expect(sockets).toHaveLength(1);
    goOnline();
    expect(sockets).toHaveLength(2); // at once, no backoff
    expect(last().url).toBe(`${URL}?since=3`);
    last().open();
    last().send(delta(4));
    last().send(delta(5));
    expect(events).toEqual(['snapshot 3', 'delta 4', 'delta 5']);
    expect(states[states.length - 1]).toBe('live');
  });

  it('starts offline without connecting, and unsubscribes on close()', () => {
    const { stream, sockets, states, goOffline, goOnline, listeners } = withNetwork();
    goOffline();
    stream.start();
    expect(sockets).toHaveLength(0);
    expect(states).toEqual(['offline']);
    goOnline();
    expect(sockets).toHaveLength(1);
    stream.close();
    expect(listeners).toHaveLength(0);
  });

  it('pings while connected and reconnects when nothing arrives for too long', () => {
    const { stream, sockets, last } = withNetwork();
    stream.start();
    const socket = last();
    const sent: string[] = [];
    (socket as unknown as { send: (d: string) => void }).send = (d: string) => sent.push(d);
    socket.open();
    socket.onmessage?.({ data: JSON.stringify(snapshot(1)) } as MessageEvent);
    vi.advanceTimersByTime(1000);
    expect(sent).toEqual(['{"type":"ping"}']);
    socket.onmessage?.({ data: '{"type":"pong"}' } as MessageEvent);
    vi.advanceTimersByTime(2000);
    expect(sockets).toHaveLength(1); // the pong kept it alive
    vi.advanceTimersByTime(2000); // silence past the idle timeout
    expect(socket.closedByClient).toBe(true);
    vi.advanceTimersByTime(500);
    expect(sockets).toHaveLength(2);
    expect(last().url).toBe(`${URL}?since=1`);
  });
});
