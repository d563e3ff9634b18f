import { describe, expect, it } from 'vitest';
import { summary } from './nodes';

describe('summary', () => {
  it("shows an output's SQL names as Spark gives them", () => {
    const node = { id: 'total', kind: 'output', params: { sql_names: { sum_balance: 'sum(balance)', count_1: 'count(1)' } } };
    expect(summary(node as never)).toBe('sum(balance) as sum_balance, count(1) as count_1');
  });

  it('shows nothing for an output without SQL names', () => {
    expect(summary({ id: 'v', kind: 'output', params: {} } as never)).toBe('');
  });
});
