import { describe, expect, it } from 'vitest';
import type { Run } from './api';
import { FEED_LIMIT, initialLiveRun, liveRunReducer, type LiveRun, type LiveRunAction } from './runState';

const run: Run = {
  id: 7,
  circuit: 1,
  version: 2,
  status: 'created',
  current_tick: -1,
  error: '',
  inputs: [{ name: 'orders', schema: [{ name: 'id', type: 'bigint' }] }],
  views: ['big'],
  created_at: '2024-01-01T00:00:00Z',
};

const reduce = (actions: LiveRunAction[], from: LiveRun = initialLiveRun) => actions.reduce(liveRunReducer, from);

describe('liveRunReducer', () => {
  it('starts from the REST run, then the snapshot replaces views', () => {
    const state = reduce([
      { type: 'run', run },
      {
        type: 'snapshot',
        message: { type: 'snapshot', seq: 4, tick: 4, status: 'running', views: { big: [{ data: { id: 1 }, weight: 1 }] } },
      },
    ]);
    expect(state.status).toBe('running');
    expect(state.tick).toBe(4);
    expect([...(state.views.big?.values() ?? [])]).toEqual([{ data: { id: 1 }, weight: 1 }]);
  });

  it('integrates deltas into views and prepends them to the feed, newest tick first', () => {
    const state = reduce([
      { type: 'snapshot', message: { type: 'snapshot', seq: -1, tick: -1, status: 'running', views: { big: [] } } },
      { type: 'delta', message: { type: 'delta', seq: 0, tick: 0, views: { big: [{ data: { id: 1 }, weight: 1 }] } } },
      {
        type: 'delta',
        message: {
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
      { type: 'snapshot', message: { type: 'snapshot', seq: -1, tick: -1, status: 'running', views: {} } },
    ]);
    for (let i = 0; i < FEED_LIMIT + 10; i++) {
      state = liveRunReducer(state, {
        type: 'delta',
        message: { type: 'delta', seq: i, tick: i, views: { big: [{ data: { id: i }, weight: 1 }] } },
      });
    }
    expect(state.feeds.big).toHaveLength(FEED_LIMIT);
    expect(state.feeds.big?.[0]?.tick).toBe(FEED_LIMIT + 9);
    expect(state.views.big?.size).toBe(FEED_LIMIT + 10);
  });

  it('applies status messages', () => {
    const state = reduce([
      { type: 'run', run },
      { type: 'status', message: { type: 'status', status: 'failed', current_tick: 3, error: 'boom' } },
    ]);
    expect(state).toMatchObject({ status: 'failed', tick: 3, error: 'boom' });
  });
});
