import { describe, expect, it } from 'vitest';
import { summary } from './nodes';

describe('summary', () => {
  it("shows an output's SQL names as Spark gives them", () => {
    const node = { id: 'total', kind: 'output', params: { sql_names: { sum_balance: 'sum(balance)', count_1: 'count(1)' } } };
    expect(summary(node as never)).toBe('sum(balance) as sum_balance, count(1) as count_1');
  });

  it("shows an as-of join's keys and match condition", () => {
    const params = { left_keys: ['mod'], right_keys: ['key'], left_time: 'p_time', right_time: 's_date_time', match: '>=', outer: true };
    expect(summary({ id: 'q13_asof_join', kind: 'asof_join', params } as never)).toBe('mod = key, p_time >= s_date_time (left)');
    expect(summary({ id: 'j', kind: 'asof_join', params: { ...params, match: '<', outer: false } } as never)).toBe('mod = key, p_time < s_date_time');
  });

  it('shows nothing for an output without SQL names', () => {
    expect(summary({ id: 'v', kind: 'output', params: {} } as never)).toBe('');
  });
});
