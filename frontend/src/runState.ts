// Live state of one run as shown on the run page: status, tick, lag, the integrated
// contents of every output view, a bounded feed of recent deltas per view, the latest
// frontier and stats per node, and the chart's column totals per tick.
//
// A snapshot replaces the views; deltas after it integrate into them. Stored deltas up
// to the snapshot's tick ("history", from GET /api/runs/<id>/deltas/) prefill the feed
// and the chart after a reload, without duplicating what arrived live.

import type { Run, RunStatus } from './api';
import { normaliseLag, type Frontier, type Lag, type RunDetail, type Stats, type TickRecord } from './api/runs';
import { addDelta, backfill, columnSums, putPoint, type ChartPoint, type ColumnSums } from './dashboard/chartSeries';
import type { ConnectionState, DeltaMessage, LagMessage, SnapshotMessage, StatusMessage } from './runStream';
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
  /** Accepted pushes not yet applied; null until known. */
  lag: Lag | null;
  /** Whether the websocket reports the lag (newer servers): the page then polls rarely. */
  lagFromStream: boolean;
  connection: ConnectionState;
  streamError: string;
  views: Record<string, ZSet>;
  feeds: Record<string, FeedEntry[]>;
  nextFeedId: number;
  /** Tick of the last snapshot (history at or below it fills the feed and chart). */
  snapshotTick: number | null;
  frontier: Frontier;
  stats: Stats;
  /** The tick the frontier and stats belong to. */
  statsTick: number | null;
  sums: ColumnSums;
  chart: ChartPoint[];
}

export type LiveRunAction =
  | { type: 'run'; run: Run | RunDetail }
  | { type: 'snapshot'; message: SnapshotMessage }
  | { type: 'delta'; message: DeltaMessage }
  | { type: 'history'; upto: number; ticks: TickRecord[] }
  | { type: 'status'; message: StatusMessage }
  | { type: 'lag'; message: LagMessage }
  | { type: 'connection'; state: ConnectionState }
  | { type: 'streamError'; message: string };

export const initialLiveRun: LiveRun = {
  status: null,
  tick: null,
  error: '',
  lag: null,
  lagFromStream: false,
  connection: 'connecting',
  streamError: '',
  views: {},
  feeds: {},
  nextFeedId: 1,
  snapshotTick: null,
  frontier: {},
  stats: {},
  statsTick: null,
  sums: {},
  chart: [],
};

/** A tick's rows of one view as feed entries: retractions (-) before insertions (+), each
 * group in the server's order. */
function feedEntries(record: { tick: number; views?: Record<string, WeightedRow[]> }, view: string, firstId: number) {
  const rows = record.views?.[view] ?? [];
  const ordered = [...rows.filter((r) => r.weight < 0), ...rows.filter((r) => r.weight >= 0)];
  return ordered.map((row, i) => ({ id: firstId + i, tick: record.tick, weight: row.weight, data: row.data }));
}

const TERMINAL: ReadonlySet<RunStatus> = new Set(['stopped', 'failed']);

/** A REST answer may have been in flight while the websocket moved on: never go back to
 * "created", never leave stopped/failed. */
function mergeStatus(current: RunStatus | null, reported: RunStatus): RunStatus {
  if (current === null) return reported;
  if (TERMINAL.has(current)) return current;
  if (reported === 'created' && current !== 'created') return current;
  return reported;
}

function streamLag(state: LiveRun, value: unknown): Pick<LiveRun, 'lag' | 'lagFromStream'> {
  const lag = normaliseLag(value);
  return lag ? { lag, lagFromStream: true } : { lag: state.lag, lagFromStream: state.lagFromStream };
}

export function liveRunReducer(state: LiveRun, action: LiveRunAction): LiveRun {
  switch (action.type) {
    case 'run': {
      const { run } = action;
      const lag = normaliseLag((run as RunDetail).lag);
      return {
        ...state,
        status: mergeStatus(state.status, run.status),
        tick: state.tick === null ? run.current_tick : Math.max(state.tick, run.current_tick),
        error: run.error,
        lag: lag ?? state.lag,
      };
    }
    case 'snapshot': {
      const { message } = action;
      const views: Record<string, ZSet> = {};
      for (const [name, rows] of Object.entries(message.views ?? {})) views[name] = fromRows(rows);
      const sums = columnSums(views);
      const hasStats = message.stats !== undefined || message.frontier !== undefined;
      return {
        ...state,
        status: message.status ?? state.status,
        tick: message.tick,
        views,
        sums,
        snapshotTick: message.tick,
        chart: message.tick >= 0 ? putPoint(state.chart, { tick: message.tick, values: sums }) : state.chart,
        frontier: message.frontier ?? state.frontier,
        stats: message.stats ?? state.stats,
        statsTick: hasStats ? message.tick : state.statsTick,
        ...streamLag(state, message.lag),
      };
    }
    case 'delta': {
      const { message } = action;
      const views = { ...state.views };
      const feeds = { ...state.feeds };
      let nextFeedId = state.nextFeedId;
      for (const [name, rows] of Object.entries(message.views ?? {})) {
        if (rows.length === 0) continue;
        views[name] = integrate(views[name] ?? emptyZSet, rows);
        const entries = feedEntries(message, name, nextFeedId);
        nextFeedId += entries.length;
        // Newest tick first; within a tick, retractions before insertions.
        feeds[name] = [...entries, ...(feeds[name] ?? [])].slice(0, FEED_LIMIT);
      }
      const sums = addDelta(state.sums, message.views ?? {});
      return {
        ...state,
        tick: message.tick,
        views,
        feeds,
        nextFeedId,
        sums,
        chart: putPoint(state.chart, { tick: message.tick, values: sums }),
        frontier: message.frontier ?? state.frontier,
        stats: message.stats ?? state.stats,
        statsTick: message.frontier || message.stats ? message.tick : state.statsTick,
        ...streamLag(state, message.lag),
      };
    }
    case 'history': {
      const records = action.ticks.filter((t) => t.tick <= action.upto);
      if (!records.length) return state;
      const feeds = { ...state.feeds };
      let nextFeedId = state.nextFeedId;
      const viewNames = new Set(records.flatMap((r) => Object.keys(r.views ?? {})));
      for (const view of viewNames) {
        const current = feeds[view] ?? [];
        const present = new Set(current.map((e) => e.tick));
        const added: FeedEntry[] = [];
        for (const record of records) {
          if (present.has(record.tick)) continue;
          const entries = feedEntries(record, view, nextFeedId);
          nextFeedId += entries.length;
          added.push(...entries);
        }
        if (!added.length) continue;
        // Stable sort: rows of one tick keep their order (- before +).
        feeds[view] = [...current, ...added].sort((a, b) => b.tick - a.tick).slice(0, FEED_LIMIT);
      }
      const anchor = state.chart.find((p) => p.tick === action.upto);
      const chart = anchor ? backfill(state.chart, anchor, records) : state.chart;
      const latest = records.reduce((a, b) => (b.tick > a.tick ? b : a));
      const newerStats = (state.statsTick === null || latest.tick > state.statsTick) && (latest.frontier || latest.stats);
      return {
        ...state,
        feeds,
        nextFeedId,
        chart,
        frontier: newerStats ? (latest.frontier ?? {}) : state.frontier,
        stats: newerStats ? (latest.stats ?? {}) : state.stats,
        statsTick: newerStats ? latest.tick : state.statsTick,
      };
    }
    case 'status': {
      const { message } = action;
      return {
        ...state,
        status: message.status,
        tick: message.current_tick ?? state.tick,
        error: message.error ?? '',
        ...streamLag(state, message.lag),
      };
    }
    case 'lag':
      // A push was accepted: the lag grew (or a tick may already have applied it: a
      // lag older than the tick we show is stale, keep ours).
      if (state.tick !== null && action.message.tick < state.tick) return state;
      return { ...state, ...streamLag(state, action.message.lag) };
    case 'connection':
      return { ...state, connection: action.state, streamError: action.state === 'live' ? '' : state.streamError };
    case 'streamError':
      return { ...state, streamError: action.message };
  }
}
