// Browser-side cost of a live run page per tick, as ratios inside one run:
// a 10-row delta (integrate + feed + chart sums) and re-ordering the table, against
// rebuilding the view from a snapshot of N rows. `npx vitest bench --run` (frontend/).

import { bench, describe } from 'vitest';
import { initialLiveRun, liveRunReducer, type LiveRun } from '../runState';
import type { WeightedRow } from '../zset';
import { orderedRows } from './tableRows';

function rows(n: number, offset = 0): WeightedRow[] {
  return Array.from({ length: n }, (_, i) => ({ data: { account: offset + i, balance: (offset + i) * 7 % 1000 }, weight: 1 }));
}


const quiet = { frontier: {}, stats: {}, lag: { pushes: 0, rows: 0, ticks: 0 } }; // the fields these cases do not look at
const quietTick = { ...quiet, ms: 1 };
for (const n of [1_000, 10_000, 100_000]) {
  const base: LiveRun = liveRunReducer(initialLiveRun, {
    type: 'snapshot',
    message: { ...quiet, type: 'snapshot', seq: 0, tick: 0, status: 'running', views: { balance: rows(n) } },
  });
  let tick = 1;
  describe(`view of ${n} rows`, () => {
    bench('snapshot: rebuild the view', () => {
      liveRunReducer(initialLiveRun, {
        type: 'snapshot',
        message: { ...quiet, type: 'snapshot', seq: 0, tick: 0, status: 'running', views: { balance: rows(n) } },
      });
    });
    bench('delta: 10 changed rows', () => {
      const changed = rows(5, tick % n).map((r) => ({ ...r, weight: -1 }));
      liveRunReducer(base, {
        type: 'delta',
        message: { ...quietTick, type: 'delta', seq: tick, tick: tick++, views: { balance: [...changed, ...rows(5, n + tick)] } },
      });
    });
    bench('table: order the rows for display', () => {
      orderedRows(base.views.balance!, { column: 'balance', descending: true });
    });
  });
}
