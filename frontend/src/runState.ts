// Live state of one run as shown on the run page: status, tick, the integrated
// contents of every output view and a bounded feed of recent deltas per view.

import type { Run, RunStatus } from './api';
import type { ConnectionState, DeltaMessage, SnapshotMessage, StatusMessage } from './runStream';
import { emptyZSet, fromRows, integrate, type WeightedRow, type ZSet } from './zset';

export const FEED_LIMIT = 200;

export interface FeedEntry {
  id: number;
  tick: number;
  weight: number;
  data: WeightedRow['data'];
}

export interface LiveRun {
  status: RunStatus | null;
  tick: number | null;
  error: string;
  connection: ConnectionState;
  streamError: string;
  views: Record<string, ZSet>;
  feeds: Record<string, FeedEntry[]>;
  nextFeedId: number;
}

export type LiveRunAction =
  | { type: 'run'; run: Run }
  | { type: 'snapshot'; message: SnapshotMessage }
  | { type: 'delta'; message: DeltaMessage }
  | { type: 'status'; message: StatusMessage }
  | { type: 'connection'; state: ConnectionState }
  | { type: 'streamError'; message: string };

export const initialLiveRun: LiveRun = {
  status: null,
  tick: null,
  error: '',
  connection: 'connecting',
  streamError: '',
  views: {},
  feeds: {},
  nextFeedId: 1,
};

export function liveRunReducer(state: LiveRun, action: LiveRunAction): LiveRun {
  switch (action.type) {
    case 'run': {
      const { run } = action;
      return {
        ...state,
        status: run.status,
        tick: state.tick === null ? run.current_tick : Math.max(state.tick, run.current_tick),
        error: run.error,
      };
    }
    case 'snapshot': {
      const { message } = action;
      const views: Record<string, ZSet> = {};
      for (const [name, rows] of Object.entries(message.views ?? {})) views[name] = fromRows(rows);
      return { ...state, status: message.status ?? state.status, tick: message.tick, views };
    }
    case 'delta': {
      const { message } = action;
      const views = { ...state.views };
      const feeds = { ...state.feeds };
      let nextFeedId = state.nextFeedId;
      for (const [name, rows] of Object.entries(message.views ?? {})) {
        if (rows.length === 0) continue;
        views[name] = integrate(views[name] ?? emptyZSet, rows);
        const entries = rows.map((row) => ({
          id: nextFeedId++,
          tick: message.tick,
          weight: row.weight,
          data: row.data,
        }));
        // Newest tick first; rows within a tick keep the server's order.
        feeds[name] = [...entries, ...(feeds[name] ?? [])].slice(0, FEED_LIMIT);
      }
      return { ...state, tick: message.tick, views, feeds, nextFeedId };
    }
    case 'status': {
      const { message } = action;
      return {
        ...state,
        status: message.status,
        tick: message.current_tick ?? state.tick,
        error: message.error ?? '',
      };
    }
    case 'connection':
      return { ...state, connection: action.state, streamError: action.state === 'live' ? '' : state.streamError };
    case 'streamError':
      return { ...state, streamError: action.message };
  }
}
