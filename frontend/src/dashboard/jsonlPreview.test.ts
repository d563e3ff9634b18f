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
      "row 0, column 'id': null in a non-null column",
      "row 0, column 'amount': expected an integer (bigint), got 1.5",
    ]);
    expect(preview.lineErrors.map((e) => e.line)).toEqual([2, 3]);
    expect(preview.lineErrors[1]!.message).toContain('unknown input "shipments"');
    expect(preview.pushes[1]!.errors).toEqual([
      'row 0: weight must be a nonzero integer, got 0',
      "row 1: unknown column 'colour' (columns: id, customer, amount)",
    ]);
  });

  // Issue 31: NaN and Infinity are named by row and column, in the server's words, not "not JSON".
  it('names the row and column of NaN and Infinity, as the server does', () => {
    const withDouble = [{ name: 'm', schema: [{ name: 'id', type: 'bigint' as const }, { name: 'x', type: 'double' as const }] }];
    const text = '{"m": [{"insert": {"id": 1, "x": 1.5}}, {"insert": {"id": NaN, "x": -Infinity}}, {"insert": {"id": 3, "x": "NaN"}}]}';
    const preview = parseJsonl(text, withDouble);
    expect(preview.lineErrors).toEqual([]);
    expect(preview.pushes[0]!.errors).toEqual([
      "row 1, column 'id': expected an integer (bigint), got nan",
      "row 1, column 'x': -inf is not a finite number",
      "row 2, column 'x': expected a number (double), got 'NaN'",
    ]);
  });

  // Issue 30: a browser number past 2^53 is not the file's digits; what is sent is the file's own text.
  it("sends each push's records as the file writes them", () => {
    const line = '{"orders": [{"insert": {"id": 9007199254740993, "customer": "a, \\"b\\" [c]", "amount": 1e3}}], "other": {"x": [1, {"y": 2}]}}';
    const preview = parseJsonl(line, inputs);
    expect(preview.pushes[0]!.body).toBe('[{"insert": {"id": 9007199254740993, "customer": "a, \\"b\\" [c]", "amount": 1e3}}]');
    expect(preview.pushes[0]!.errors).toEqual([]);
    expect(JSON.stringify(preview.pushes[0]!.records)).toContain('9007199254740992'); // what the browser's number would have sent
    expect(preview.lineErrors.map((e) => e.message)).toEqual(['unknown input "other" (inputs: orders)']);
  });

  it('refuses a bigint out of range even as the browser reads it', () => {
    const preview = parseJsonl('{"orders": [{"insert": {"id": 1, "amount": 9223372036854775808}}]}', inputs);
    expect(preview.pushes[0]!.errors).toEqual(["row 0, column 'amount': 9223372036854776000 is out of the bigint range"]);
  });
});
