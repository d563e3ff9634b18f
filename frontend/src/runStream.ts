// Websocket client for /ws/runs/<id>/: keeps snapshot/delta messages in sequence and
// drops duplicates (by seq). A dropped connection reconnects with ?since=<last seq>
// (the server replays what was missed) after an exponential backoff; a gap inside the
// stream asks for a fresh snapshot instead. Going offline (the browser's offline event)
// drops the socket at once and coming back online reconnects immediately; a heartbeat
// (ping/pong) notices connections that died without a close.

import type { components } from './api/live';

// The messages are typed from the live protocol's schema (runs/live_protocol.schema.json,
// docs/live-protocol.md): frontend/src/api/live.d.ts is generated from it by
// ./scripts/api-types, so the server and this client read one definition.
type LiveSchemas = components['schemas'];
export type SnapshotMessage = LiveSchemas['SnapshotMessage'];
export type DeltaMessage = LiveSchemas['DeltaMessage'];
export type StatusMessage = LiveSchemas['StatusMessage'];
/** Sent when a push is accepted: the run's lag as of then (paused or slow runs publish
 * no tick, so without it their watchers would see a stale lag). */
export type LagMessage = LiveSchemas['LagMessage'];
export type ErrorMessage = LiveSchemas['ErrorMessage'];
export type PingMessage = LiveSchemas['PingMessage'];
/** Watching together (docs/collaboration.md): who has the run page open, and the presenter's view. */
export type PresenceMessage = LiveSchemas['PresenceMessage'];
export type ViewMessage = LiveSchemas['ViewMessage'];
export type Watcher = LiveSchemas['Watcher'];
export type SharedView = LiveSchemas['SharedView'];
export type ClientMessage = LiveSchemas['ClientMessage'];

/** "tick 3, node by_account: boom". */
export function describeServerError(message: ErrorMessage): string {
  const text = message.error || 'Unknown error from the server.';
  const where = [
    typeof message.tick === 'number' ? `tick ${message.tick}` : null,
    message.node ? `node ${message.node}` : null,
  ].filter(Boolean);
  return where.length ? `${where.join(', ')}: ${text}` : text;
}

export type ServerMessage = LiveSchemas['ServerMessage'];

/** "offline": the browser reports no network; "closed": the stream gave up for good
 * (run finished, or the server refused us). */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'closed';

export interface RunStreamHandlers {
  onSnapshot?(message: SnapshotMessage): void;
  onDelta?(message: DeltaMessage): void;
  onStatus?(message: StatusMessage): void;
  onLag?(message: LagMessage): void;
  onPresence?(message: PresenceMessage): void;
  onView?(message: ViewMessage): void;
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
  send?(data: string): void;
}

export type SocketFactory = (url: string) => SocketLike;

/** Where the stream hears about the browser going offline and online again. */
export interface NetworkMonitor {
  isOnline(): boolean;
  /** Returns an unsubscribe function. */
  subscribe(onOnline: () => void, onOffline: () => void): () => void;
}

export interface RunStreamOptions {
  createSocket?: SocketFactory;
  /** Reconnect delay for the n-th consecutive attempt (0-based). */
  backoff?: (attempt: number) => number;
  network?: NetworkMonitor | null;
  /** Send a ping this often while connected (0 = never). */
  heartbeatMs?: number;
  /** Reconnect when nothing at all arrived for this long while connected (0 = never). */
  idleTimeoutMs?: number;
  /** Messages sent on every (re)connection, as soon as it opens (the run page's `join`
   *  and, while sharing, its view): read at each opening. */
  greeting?: () => ClientMessage[];
}

/** The browser's navigator.onLine and online/offline events (none outside a browser). */
export const browserNetwork: NetworkMonitor | null =
  typeof window === 'undefined' || typeof navigator === 'undefined'
    ? null
    : {
        isOnline: () => navigator.onLine !== false,
        subscribe(onOnline, onOffline) {
          window.addEventListener('online', onOnline);
          window.addEventListener('offline', onOffline);
          return () => {
            window.removeEventListener('online', onOnline);
            window.removeEventListener('offline', onOffline);
          };
        },
      };

export const HEARTBEAT_MS = 15_000;
export const IDLE_TIMEOUT_MS = 40_000;

const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 10_000;

/** 0.5 s, 1 s, 2 s, 4 s, 8 s, then 10 s. */
export function backoffDelay(attempt: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** attempt, BACKOFF_MAX_MS);
}

/** Close codes after which reconnecting is pointless (Channels apps close with 4xxx). */
const FATAL_CLOSE_CODES = new Set([4401, 4403, 4404]);
const FINISHED: ReadonlySet<LiveSchemas['RunStatus']> = new Set(['stopped', 'failed']);

export function runSocketUrl(runId: number, loc: Pick<Location, 'protocol' | 'host'> = window.location): string {
  const scheme = loc.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${loc.host}/ws/runs/${runId}/`;
}

export class RunStream {
  private socket: SocketLike | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private heartbeatTimer: ReturnType<typeof setInterval> | null = null;
  private lastHeard = 0;
  private attempt = 0;
  private closed = false;
  private finished = false;
  private offline = false;
  private state: ConnectionState | null = null;
  private seq: number | null = null;
  /** Set by a gap: the next connection asks for a fresh snapshot, not a replay. */
  private resync = false;
  private unsubscribeNetwork: (() => void) | null = null;
  private readonly createSocket: SocketFactory;
  private readonly backoff: (attempt: number) => number;
  private readonly network: NetworkMonitor | null;
  private readonly heartbeatMs: number;
  private readonly idleTimeoutMs: number;
  private readonly greeting: () => ClientMessage[];

  constructor(
    private readonly url: string,
    private readonly handlers: RunStreamHandlers,
    options: RunStreamOptions = {},
  ) {
    this.createSocket = options.createSocket ?? ((u) => new WebSocket(u));
    this.backoff = options.backoff ?? backoffDelay;
    this.network = options.network === undefined ? (options.createSocket ? null : browserNetwork) : options.network;
    this.heartbeatMs = options.heartbeatMs ?? (options.createSocket ? 0 : HEARTBEAT_MS);
    this.idleTimeoutMs = options.idleTimeoutMs ?? (options.createSocket ? 0 : IDLE_TIMEOUT_MS);
    this.greeting = options.greeting ?? (() => []);
  }

  /** Sends a message now if connected; false when not (the greeting says it again on the
   *  next connection). */
  send(message: ClientMessage): boolean {
    const socket = this.socket;
    if (!socket || this.state !== 'live' || !socket.send) return false;
    try {
      socket.send(JSON.stringify(message));
      return true;
    } catch {
      return false;
    }
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
    if (this.network && !this.unsubscribeNetwork) {
      this.unsubscribeNetwork = this.network.subscribe(
        () => this.wentOnline(),
        () => this.wentOffline(),
      );
      if (!this.network.isOnline()) {
        this.wentOffline();
        return;
      }
    }
    this.connect();
  }

  /** Stops for good: closes the socket, cancels any pending reconnect. */
  close(): void {
    this.closed = true;
    this.clearRetry();
    this.dropSocket();
    this.unsubscribeNetwork?.();
    this.unsubscribeNetwork = null;
  }

  /** Drops the connection and reconnects now (e.g. the user asked to retry). */
  reconnectNow(): void {
    if (this.closed) return;
    this.clearRetry();
    this.dropSocket();
    this.attempt = 0;
    this.connect();
  }

  private wentOffline(): void {
    if (this.closed) return;
    this.offline = true;
    this.clearRetry();
    this.dropSocket();
    this.setState('offline');
  }

  private wentOnline(): void {
    if (this.closed || !this.offline) return;
    this.offline = false;
    this.attempt = 0;
    this.clearRetry();
    this.connect();
  }

  private connect(): void {
    if (this.resync) {
      this.resync = false;
      this.seq = null;
      this.setState('reconnecting');
    } else {
      this.setState(this.attempt === 0 && this.seq === null && this.state === null ? 'connecting' : 'reconnecting');
    }
    const url = this.seq === null ? this.url : `${this.url}?since=${this.seq}`;
    let socket: SocketLike;
    try {
      socket = this.createSocket(url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.lastHeard = Date.now();
      this.startHeartbeat(socket);
      this.setState('live');
      for (const message of this.greeting()) this.send(message);
    };
    socket.onmessage = (event) => {
      this.lastHeard = Date.now();
      this.receive(event.data);
    };
    socket.onerror = () => {
      // A close event always follows; reconnecting is handled there.
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.stopHeartbeat();
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

  private startHeartbeat(socket: SocketLike): void {
    this.stopHeartbeat();
    if (!this.heartbeatMs) return;
    this.heartbeatTimer = setInterval(() => {
      if (this.socket !== socket) return;
      if (this.idleTimeoutMs && Date.now() - this.lastHeard > this.idleTimeoutMs) {
        // Nothing heard (not even a pong): the connection is dead without having closed.
        this.dropSocket();
        this.scheduleReconnect();
        return;
      }
      try {
        const ping: PingMessage = { type: 'ping' };
        socket.send?.(JSON.stringify(ping));
      } catch {
        // the close handler reconnects
      }
    }, this.heartbeatMs);
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
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
      case 'lag':
        this.handlers.onLag?.(message);
        break;
      case 'presence':
        this.handlers.onPresence?.(message);
        break;
      case 'view':
        this.handlers.onView?.(message);
        break;
      case 'error':
        this.handlers.onServerError?.(describeServerError(message));
        break;
      default:
        // pong, and unknown message types (so the server can add new ones), are ignored.
        break;
    }
  }

  private receiveDelta(message: DeltaMessage): void {
    if (this.seq === null) return; // nothing to integrate into before the snapshot
    if (message.seq <= this.seq) return; // duplicate
    if (message.seq > this.seq + 1) {
      // Missed at least one delta: start over from a fresh snapshot.
      this.resync = true;
      this.dropSocket();
      this.scheduleReconnect();
      return;
    }
    this.seq = message.seq;
    this.attempt = 0;
    this.handlers.onDelta?.(message);
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer || this.offline) return;
    this.setState('reconnecting');
    const delay = this.backoff(this.attempt);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed && !this.offline) this.connect();
    }, delay);
  }

  private dropSocket(): void {
    const socket = this.socket;
    this.stopHeartbeat();
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
