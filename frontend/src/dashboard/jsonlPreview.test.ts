import { describe, expect, it } from 'vitest';
import { parseJsonl } from './jsonlPreview';

const inputs = [
  {
    name: 'orders',
    schema: [
      { name: 'id', type: 'bigint' as const, nullable: false },
      { name: 'customer', type: 'string' as const },
      { name: 'amount', type: 'bigint' as const },
    ],
  },
];

describe('push files (JSON Lines)', () => {
  it('reads the Big orders demo file: one push per line, in order', () => {
    const text = [
      '{"orders": [{"insert": {"id": 1, "customer": "ada", "amount": 250}}, {"insert": {"id": 2, "customer": "bob", "amount": 20}}]}',
      '{"orders": [{"insert": {"id": 3, "customer": "cy", "amount": 120}}]}',
      '{"orders": [{"delete": {"id": 1, "customer": "ada", "amount": 250}}]}',
      '',
    ].join('\n');
    const preview = parseJsonl(text, inputs);
    expect(preview.lineErrors).toEqual([]);
    expect(preview.pushes.map((p) => [p.line, p.input, p.records.length, p.errors])).toEqual([
      [1, 'orders', 2, []],
      [2, 'orders', 1, []],
      [3, 'orders', 1, []],
    ]);
  });

  it('names the line, record and column of every problem', () => {
    const text = [
      '{"orders": [{"insert": {"id": null, "amount": 1.5}}]}',
      'not json',
      '{"shipments": []}',
      '{"orders": [{"weight": 0, "data": {"id": 1}}, {"insert": {"id": 2, "colour": "red"}}]}',
    ].join('\n');
    const preview = parseJsonl(text, inputs);
    expect(preview.pushes[0]!.errors).toEqual([
      'record 0: id must not be null (the column is not nullable)',
      'record 0: amount must be a whole number, got 1.5',
    ]);
    expect(preview.lineErrors.map((e) => e.line)).toEqual([2, 3]);
    expect(preview.lineErrors[1]!.message).toContain('unknown input "shipments"');
    expect(preview.pushes[1]!.errors).toEqual([
      'record 0 weight must be a nonzero whole number, got 0',
      'record 1: unknown column "colour" (columns: id, customer, amount)',
    ]);
  });
});
