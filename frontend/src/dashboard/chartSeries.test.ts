import { describe, expect, it } from 'vitest';
import { fromRows } from '../zset';
import { addDelta, backfill, chartData, columnSums, defaultSeries, putPoint, seriesKeys, seriesLabel } from './chartSeries';

describe('chart series', () => {
  it('sums numeric columns times weight per view', () => {
    const views = {
      total: fromRows([{ data: { total: 20 }, weight: 1 }]),
      balance: fromRows([
        { data: { account: 1, balance: -30, name: 'x' }, weight: 1 },
        { data: { account: 2, balance: 20, name: 'y' }, weight: 2 },
      ]),
    };
    expect(columnSums(views)).toEqual({
      'total.total': 20,
      'total.count(*)': 1,
      'balance.account': 5,
      'balance.balance': 10,
      'balance.count(*)': 3,
    });
    expect(addDelta({ 'total.total': 20, 'total.count(*)': 1 }, { total: [{ data: { total: 20 }, weight: -1 }, { data: { total: 0 }, weight: 1 }] })).toEqual({
      'total.total': 0,
      'total.count(*)': 1,
    });
  });

  it('rebuilds earlier ticks backwards from the snapshot (total 0, 20, 0)', () => {
    const anchor = { tick: 2, values: { 'total.total': 0 } };
    const records = [
      { tick: 0, views: { total: [{ data: { total: 0 }, weight: 1 }] } },
      { tick: 1, views: { total: [{ data: { total: 0 }, weight: -1 }, { data: { total: 20 }, weight: 1 }] } },
      { tick: 2, views: { total: [{ data: { total: 20 }, weight: -1 }, { data: { total: 0 }, weight: 1 }] } },
    ];
    const points = backfill([anchor], anchor, records);
    expect(points.map((p) => [p.tick, p.values['total.total']])).toEqual([
      [0, 0],
      [1, 20],
      [2, 0],
    ]);
    expect(chartData(points, ['total.total'])).toEqual([[0, 1, 2], [0, 20, 0]]);
  });

  it('keeps points sorted, one per tick, and picks one-row views by default', () => {
    let points = putPoint([], { tick: 2, values: { a: 1 } });
    points = putPoint(points, { tick: 1, values: { a: 0 } });
    points = putPoint(points, { tick: 2, values: { a: 5 } });
    expect(points).toEqual([{ tick: 1, values: { a: 0 } }, { tick: 2, values: { a: 5 } }]);
    const views = { total: fromRows([{ data: { total: 1 }, weight: 1 }]), many: fromRows([{ data: { x: 1 }, weight: 1 }, { data: { x: 2 }, weight: 1 }]) };
    const keys = seriesKeys([{ tick: 0, values: { 'many.x': 3, 'many.count(*)': 2, 'total.total': 1, 'total.count(*)': 1 } }]);
    expect(keys).toEqual(['many.count(*)', 'many.x', 'total.count(*)', 'total.total']);
    // The scalar's value and the other view's row count; never the sum of a column of many rows.
    expect(defaultSeries(views, keys)).toEqual(['many.count(*)', 'total.total']);
    // A one-row view with a key column is not a scalar: its row count, not Σ to_acct.
    const withGroup = { ...views, credits: fromRows([{ data: { to_acct: 2, credits: 50 }, weight: 1 }]) };
    expect(defaultSeries(withGroup, ['credits.count(*)', 'credits.credits', 'credits.to_acct', 'many.count(*)', 'many.x', 'total.total'])).toEqual([
      'credits.count(*)',
      'many.count(*)',
      'total.total',
    ]);
    expect(seriesLabel('credits.count(*)')).toBe('credits rows');
    expect(seriesLabel('many.x', views)).toBe('Σ many.x');
    expect(seriesLabel('total.total', views)).toBe('total.total');
  });
});
