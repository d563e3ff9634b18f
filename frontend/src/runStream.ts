// Websocket client for /ws/runs/<id>/: keeps snapshot/delta messages in sequence,
// drops duplicates, reconnects with ?since=<last seq> on a gap or a dropped
// connection, with exponential backoff.

import type { RunStatus } from './api';
import type { WeightedRow } from './zset';

export interface SnapshotMessage {
  type: 'snapshot';
  seq: number;
  tick: number;
  status: RunStatus;
  views: Record<string, WeightedRow[]>;
}

export interface DeltaMessage {
  type: 'delta';
  seq: number;
  tick: number;
  views: Record<string, WeightedRow[]>;
  frontier?: Record<string, { tick: number }>;
  stats?: Record<string, unknown>;
}

export interface StatusMessage {
  type: 'status';
  status: RunStatus;
  current_tick: number;
  error: string;
}

export interface ErrorMessage {
  type: 'error';
  message: string;
}

export type ServerMessage = SnapshotMessage | DeltaMessage | StatusMessage | ErrorMessage;

/** "closed": the stream gave up for good (run finished, or the server refused us). */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface RunStreamHandlers {
  onSnapshot?(message: SnapshotMessage): void;
  onDelta?(message: DeltaMessage): void;
  onStatus?(message: StatusMessage): void;
  onServerError?(message: string): void;
  onConnectionChange?(state: ConnectionState): void;
}

/** The part of the browser WebSocket this client uses (lets tests pass a fake). */
export interface SocketLike {
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: MessageEvent) => void) | null;
  onclose: ((event: CloseEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
  close(code?: number, reason?: string): void;
}

export type SocketFactory = (url: string) => SocketLike;

export interface RunStreamOptions {
  createSocket?: SocketFactory;
  /** Reconnect delay for the n-th consecutive attempt (0-based). */
  backoff?: (attempt: number) => number;
}

const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 10_000;

/** 0.5 s, 1 s, 2 s, 4 s, 8 s, then 10 s. */
export function backoffDelay(attempt: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** attempt, BACKOFF_MAX_MS);
}

/** Close codes after which reconnecting is pointless (Channels apps close with 4xxx). */
const FATAL_CLOSE_CODES = new Set([4401, 4403, 4404]);
const FINISHED: ReadonlySet<RunStatus> = new Set(['stopped', 'failed']);

export function runSocketUrl(runId: number, loc: Pick<Location, 'protocol' | 'host'> = window.location): string {
  const scheme = loc.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${loc.host}/ws/runs/${runId}/`;
}

export class RunStream {
  private socket: SocketLike | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;
  private closed = false;
  private finished = false;
  private state: ConnectionState | null = null;
  private seq: number | null = null;
  private readonly createSocket: SocketFactory;
  private readonly backoff: (attempt: number) => number;

  constructor(
    private readonly url: string,
    private readonly handlers: RunStreamHandlers,
    options: RunStreamOptions = {},
  ) {
    this.createSocket = options.createSocket ?? ((u) => new WebSocket(u));
    this.backoff = options.backoff ?? backoffDelay;
  }

  /** Sequence number of the last applied snapshot or delta; null before the first snapshot. */
  get lastSeq(): number | null {
    return this.seq;
  }

  get connectionState(): ConnectionState | null {
    return this.state;
  }

  start(): void {
    if (this.closed || this.socket || this.retryTimer) return;
    this.connect();
  }

  /** Stops for good: closes the socket, cancels any pending reconnect. */
  close(): void {
    this.closed = true;
    this.clearRetry();
    this.dropSocket();
  }

  private connect(): void {
    this.setState(this.attempt === 0 && this.seq === null ? 'connecting' : 'reconnecting');
    const url = this.seq === null ? this.url : `${this.url}?since=${this.seq}`;
    let socket: SocketLike;
    try {
      socket = this.createSocket(url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => this.setState('live');
    socket.onmessage = (event) => this.receive(event.data);
    socket.onerror = () => {
      // A close event always follows; reconnecting is handled there.
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closed) return;
      if (this.finished || FATAL_CLOSE_CODES.has(event.code)) {
        if (FATAL_CLOSE_CODES.has(event.code)) {
          this.handlers.onServerError?.(event.reason || `Connection refused (code ${event.code}).`);
        }
        this.closed = true;
        this.setState('closed');
        return;
      }
      this.scheduleReconnect();
    };
  }

  private receive(raw: unknown): void {
    let message: ServerMessage;
    try {
      message = JSON.parse(String(raw)) as ServerMessage;
    } catch {
      this.handlers.onServerError?.('Received a malformed message from the server.');
      return;
    }
    switch (message.type) {
      case 'snapshot':
        this.seq = message.seq;
        this.attempt = 0;
        this.finished = FINISHED.has(message.status);
        this.handlers.onSnapshot?.(message);
        break;
      case 'delta':
        this.receiveDelta(message);
        break;
      case 'status':
        this.finished = FINISHED.has(message.status);
        this.handlers.onStatus?.(message);
        break;
      case 'error':
        this.handlers.onServerError?.(message.message);
        break;
      default:
        // Unknown message types are ignored so the server can add new ones.
        break;
    }
  }

  private receiveDelta(message: DeltaMessage): void {
    if (this.seq === null) return; // nothing to integrate into before the snapshot
    if (message.seq <= this.seq) return; // duplicate
    if (message.seq > this.seq + 1) {
      // Missed at least one delta: reconnect and ask for everything after our last one.
      this.dropSocket();
      this.scheduleReconnect();
      return;
    }
    this.seq = message.seq;
    this.attempt = 0;
    this.handlers.onDelta?.(message);
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.setState('reconnecting');
    const delay = this.backoff(this.attempt);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed) this.connect();
    }, delay);
  }

  private dropSocket(): void {
    const socket = this.socket;
    if (!socket) return;
    this.socket = null;
    socket.onopen = null;
    socket.onmessage = null;
    socket.onerror = null;
    socket.onclose = null;
    try {
      socket.close();
    } catch {
      // already closed
    }
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private setState(state: ConnectionState): void {
    if (state === this.state) return;
    this.state = state;
    this.handlers.onConnectionChange?.(state);
  }
}
