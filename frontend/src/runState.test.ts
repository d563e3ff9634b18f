import { describe, expect, it } from 'vitest';
import type { Run } from './api';
import { FEED_LIMIT, initialLiveRun, liveRunReducer, type LiveRun, type LiveRunAction } from './runState';

const run: Run = {
  id: 7,
  circuit: 1,
  version: 2,
  status: 'created',
  current_tick: -1,
  last_sequence: 0,
  lag: { pushes: 0, rows: 0, ticks: 0 },
  worker: '',
  error: '',
  inputs: [{ name: 'orders', schema: [{ name: 'id', type: 'bigint' }] }],
  views: ['big'],
  created_at: '2024-01-01T00:00:00Z',
};

const reduce = (actions: LiveRunAction[], from: LiveRun = initialLiveRun) => actions.reduce(liveRunReducer, from);

const quiet = { frontier: {}, stats: {}, lag: { pushes: 0, rows: 0, ticks: 0 } }; // the fields these cases do not look at
const quietTick = { ...quiet, ms: 1 };

describe('liveRunReducer', () => {
  it('starts from the REST run, then the snapshot replaces views', () => {
    const state = reduce([
      { type: 'run', run },
      {
        type: 'snapshot',
        message: { ...quiet, type: 'snapshot', seq: 4, tick: 4, status: 'running', views: { big: [{ data: { id: 1 }, weight: 1 }] } },
      },
    ]);
    expect(state.status).toBe('running');
    expect(state.tick).toBe(4);
    expect([...(state.views.big?.values() ?? [])]).toEqual([{ data: { id: 1 }, weight: 1 }]);
  });

  it('integrates deltas into views and prepends them to the feed, newest tick first', () => {
    const state = reduce([
      { type: 'snapshot', message: { ...quiet, type: 'snapshot', seq: -1, tick: -1, status: 'running', views: { big: [] } } },
      { type: 'delta', message: { ...quietTick, type: 'delta', seq: 0, tick: 0, views: { big: [{ data: { id: 1 }, weight: 1 }] } } },
      {
        type: 'delta',
        message: {
          ...quietTick,
          type: 'delta',
          seq: 1,
          tick: 1,
          views: {
            big: [
              { data: { id: 1 }, weight: -1 },
              { data: { id: 2 }, weight: 1 },
            ],
          },
        },
      },
    ]);
    expect([...(state.views.big?.values() ?? [])]).toEqual([{ data: { id: 2 }, weight: 1 }]);
    expect(state.feeds.big?.map((e) => [e.tick, e.weight, e.data])).toEqual([
      [1, -1, { id: 1 }],
      [1, 1, { id: 2 }],
      [0, 1, { id: 1 }],
    ]);
    expect(state.tick).toBe(1);
  });

  it('bounds the feed', () => {
    let state = reduce([
      { type: 'snapshot', message: { ...quiet, type: 'snapshot', seq: -1, tick: -1, status: 'running', views: {} } },
    ]);
    for (let i = 0; i < FEED_LIMIT + 10; i++) {
      state = liveRunReducer(state, {
        type: 'delta',
        message: { ...quietTick, type: 'delta', seq: i, tick: i, views: { big: [{ data: { id: i }, weight: 1 }] } },
      });
    }
    expect(state.feeds.big).toHaveLength(FEED_LIMIT);
    expect(state.feeds.big?.[0]?.tick).toBe(FEED_LIMIT + 9);
    expect(state.views.big?.size).toBe(FEED_LIMIT + 10);
  });

  it('a lag message updates the lag, unless a later tick already carried a newer one', () => {
    const lag = (tick: number, pushes: number) => ({
      type: 'lag' as const,
      message: { type: 'lag' as const, tick, lag: { pushes, rows: pushes * 10, ticks: pushes ? 1 : 0 } },
    });
    const paused = reduce([
      { type: 'run', run },
      { type: 'snapshot', message: { ...quiet, type: 'snapshot', seq: 4, tick: 4, status: 'paused', views: { big: [] } } },
      lag(4, 1),
      lag(4, 2),
    ]);
    expect(paused.lag).toEqual({ pushes: 2, rows: 20, ticks: 1 });
    const later = reduce([{ type: 'delta', message: { ...quietTick, type: 'delta', seq: 5, tick: 5, views: {}, lag: { pushes: 0, rows: 0, ticks: 0 } } }, lag(4, 2)], paused);
    expect(later.lag).toEqual({ pushes: 0, rows: 0, ticks: 0 });
  });

  it('applies status messages', () => {
    const state = reduce([
      { type: 'run', run },
      { type: 'status', message: { ...quiet, type: 'status', status: 'failed', tick: 3, current_tick: 3, error: 'boom' } },
    ]);
    expect(state).toMatchObject({ status: 'failed', tick: 3, error: 'boom' });
  });
});

describe('liveRunReducer: history, stats, chart, lag', () => {
  const snap = (tick: number, total: number | null) => ({
    type: 'snapshot' as const,
    message: {
      ...quiet,
      type: 'snapshot' as const,
      seq: tick,
      tick,
      status: 'running' as const,
      views: { total: total === null ? [] : [{ data: { total }, weight: 1 }] },
      // as the server sends it: the frontier and stats of the snapshot's tick
      frontier: (tick >= 0 ? { t: { tick } } : {}) as Record<string, { tick: number }>,
      stats: stored[tick]?.stats ?? {},
    },
  });
  const stored: { tick: number; views: Record<string, { data: Record<string, number>; weight: number }[]>; frontier: Record<string, { tick: number }>; stats: Record<string, { rows_in: number; ms: number }> }[] = [
    { tick: 0, views: { total: [{ data: { total: 0 }, weight: 1 }] }, frontier: { t: { tick: 0 } }, stats: { t: { rows_in: 1, ms: 2 } } },
    {
      tick: 1,
      views: { total: [{ data: { total: 20 }, weight: 1 }, { data: { total: 0 }, weight: -1 }] },
      frontier: { t: { tick: 1 } },
      stats: { t: { rows_in: 1, ms: 3 } },
    },
  ];

  it('prefills the feed and the chart from stored deltas after a reload', () => {
    const state = reduce([snap(1, 20), { type: 'history', upto: 1, ticks: stored }]);
    expect(state.feeds.total?.map((e) => [e.tick, e.weight, e.data.total])).toEqual([
      [1, -1, 0],
      [1, 1, 20],
      [0, 1, 0],
    ]);
    expect(state.chart.map((p) => [p.tick, p.values['total.total']])).toEqual([
      [0, 0],
      [1, 20],
    ]);
    expect(state.frontier).toEqual({ t: { tick: 1 } });
    expect(state.stats).toEqual({ t: { rows_in: 1, ms: 3 } });
    expect(state.statsTick).toBe(1);
  });

  it('does not duplicate ticks that arrived live, nor override newer stats', () => {
    let state = reduce([
      snap(0, 0),
      {
        type: 'delta',
        message: {
          ...quietTick,
          type: 'delta',
          seq: 1,
          tick: 1,
          views: stored[1]!.views,
          frontier: { t: { tick: 1 } },
          stats: { t: { ms: 9 } },
          lag: 2 as unknown as typeof quiet.lag, // an older server's bare number
        },
      },
    ]);
    expect(state.lag).toEqual({ pushes: 2 }); // an older server's bare number
    expect(state.lagFromStream).toBe(true);
    // History (for ticks up to the snapshot's tick 0) arrives after the live delta of tick 1.
    state = liveRunReducer(state, { type: 'history', upto: 0, ticks: stored });
    expect(state.feeds.total?.map((e) => [e.tick, e.weight])).toEqual([
      [1, -1],
      [1, 1],
      [0, 1],
    ]);
    expect(state.stats).toEqual({ t: { ms: 9 } });
    expect(state.statsTick).toBe(1);
    // The same history again changes nothing.
    const again = liveRunReducer(state, { type: 'history', upto: 0, ticks: stored });
    expect(again.feeds.total).toHaveLength(3);
  });

  it('takes frontier, stats and lag from a snapshot that carries them, and lag from REST', () => {
    const state = reduce([
      {
        type: 'snapshot',
        message: { ...quiet, type: 'snapshot', seq: 3, tick: 3, status: 'paused', views: {}, frontier: { a: { tick: 3, iteration: 2, converged: true } }, stats: { a: { ms: 1 } }, lag: { pushes: 4, rows: 9, ticks: 1 } },
      },
    ]);
    expect(state).toMatchObject({ status: 'paused', statsTick: 3, lag: { pushes: 4, rows: 9, ticks: 1 }, frontier: { a: { tick: 3, iteration: 2, converged: true } } });
    const after = liveRunReducer(state, { type: 'run', run: { ...run, status: 'paused', current_tick: 3, lag: 0 } as unknown as Run });
    expect(after.lag).toEqual({ pushes: 0 });
    expect(liveRunReducer(initialLiveRun, { type: 'run', run: { ...run, lag: 1 } as unknown as Run }).lagFromStream).toBe(false);
  });

  it('never lets a stale REST answer move the status back to created or out of stopped', () => {
    const running = reduce([snap(0, 0)]);
    expect(liveRunReducer(running, { type: 'run', run: { ...run, status: 'created' } }).status).toBe('running');
    const stopped = liveRunReducer(running, { type: 'run', run: { ...run, status: 'stopped' } });
    expect(stopped.status).toBe('stopped');
    expect(liveRunReducer(stopped, { type: 'run', run: { ...run, status: 'running' } }).status).toBe('stopped');
  });
});
