import { describe, expect, it } from 'vitest';
import type { Column } from '../api';
import { checkCell, clientErrorCount, errorCount, parseCsv, toRecords, withServerErrors } from './csvPreview';

const schema: (Column & { nullable?: boolean })[] = [
  { name: 'id', type: 'bigint', nullable: false },
  { name: 'amount', type: 'double' },
  { name: 'paid', type: 'boolean' },
  { name: 'day', type: 'date' },
  { name: 'note', type: 'string' },
];

describe('parseCsv', () => {
  it('types every cell and builds insert/delete/weighted records', () => {
    const preview = parseCsv('id,amount,paid,day,note,_weight\n1,2.5,true,2026-01-02,hi,\n2,,false,,,-1\n3,1,,,x,3\n', schema);
    expect(preview.fileErrors).toEqual([]);
    expect(errorCount(preview)).toBe(0);
    expect(preview.rows.map((r) => r.line)).toEqual([2, 3, 4]);
    expect(toRecords(preview)).toEqual([
      { insert: { id: 1, amount: 2.5, paid: true, day: '2026-01-02', note: 'hi' } },
      { delete: { id: 2, amount: null, paid: false, day: null, note: null } },
      { weight: 3, data: { id: 3, amount: 1, paid: null, day: null, note: 'x' } },
    ]);
  });

  it('marks each bad cell on its row, naming the column and the value', () => {
    const preview = parseCsv('id,amount,day,_weight\n1,3,2026-02-30,\nx,abc,2026-01-01,0\n,1,,\n', schema);
    expect(errorCount(preview)).toBe(3);
    expect(preview.rows[0]!.errors.map((e) => [e.field, e.message])).toEqual([
      ['day', 'day must be a date YYYY-MM-DD, got "2026-02-30"'],
    ]);
    expect(preview.rows[1]!.errors.map((e) => e.field)).toEqual(['id', 'amount', '_weight']);
    expect(preview.rows[1]!.errors[0]!.message).toBe('id must be a whole number, got "x"');
    expect(preview.rows[2]!.errors.map((e) => e.message)).toEqual(['id must not be empty (the column is not nullable)']);
    expect(toRecords(preview)).toEqual([]);
  });

  it('reports unknown and missing columns for the whole file', () => {
    const preview = parseCsv('amount,colour\n1,red\n', schema);
    expect(preview.fileErrors).toEqual([
      'Unknown column "colour" (columns: id, amount, paid, day, note, optional _weight).',
      'Missing column "id" (not nullable).',
    ]);
  });

  it('reports rows with too many or too few fields, and blank lines, counting rows as the server does', () => {
    const preview = parseCsv('id,amount\n1,2,3\n\n2\n3,4\n', schema);
    expect(preview.rows.map((r) => [r.index, r.line, r.errors.map((e) => e.message)])).toEqual([
      [0, 2, ['3 fields, the header has 2']],
      [1, 3, ['empty line (remove it)']],
      [2, 4, ['1 fields, the header has 2']],
      [3, 5, []],
    ]);
  });

  it('reads booleans as the server does and needs a header', () => {
    const preview = parseCsv('id,paid\n1,yes\n2,F\n3,maybe\n', schema);
    expect(preview.rows.map((r) => r.row?.paid ?? r.errors[0]!.message)).toEqual([true, false, 'paid must be true or false, got "maybe"']);
    expect(parseCsv('', schema).fileErrors).toEqual(['The file is empty: its first line must name the columns.']);
  });

  it('handles quoted fields with commas and newlines', () => {
    const preview = parseCsv('id,note\n1,"a, b\nc"\n', schema);
    expect(toRecords(preview)).toEqual([{ insert: { id: 1, amount: null, paid: null, day: null, note: 'a, b\nc' } }]);
  });
});

describe('parseCsv with list columns', () => {
  const lists: Column[] = [
    { name: 'id', type: 'bigint' },
    { name: 'tags', type: 'array<string>' },
    { name: 'scores', type: 'array<bigint>' },
  ];

  it('reads JSON array cells (CSV-quoted), an empty cell as null', () => {
    const preview = parseCsv('id,tags,scores\n1,"[""a"",""b""]","[1, null, 3]"\n2,,[]\n3," [""x""] ",\n', lists);
    expect(errorCount(preview)).toBe(0);
    expect(toRecords(preview)).toEqual([
      { insert: { id: 1, tags: ['a', 'b'], scores: [1, null, 3] } },
      { insert: { id: 2, tags: null, scores: [] } },
      { insert: { id: 3, tags: ['x'], scores: null } },
    ]);
  });

  it('marks list cells that are not JSON arrays or hold a wrong element', () => {
    const preview = parseCsv('id,tags,scores\n1,a,\n2,"[""a"",2]","[1,""2""]"\n', lists);
    expect(preview.rows.map((r) => r.errors.map((e) => [e.field, e.message]))).toEqual([
      [['tags', 'tags must be a JSON array, e.g. ["a", "b"], got "a"']],
      [
        ['tags', 'tags element 1 must be a string, got "["a",2]"'],
        ['scores', 'scores element 1 must be a whole number, got "[1,"2"]"'],
      ],
    ]);
  });
});

describe('checkCell', () => {
  it('accepts ISO timestamps and rejects others', () => {
    const ts = { name: 't', type: 'timestamp' as const };
    expect(checkCell(ts, '2026-11-21T10:00:00')).toEqual({ ok: true, value: '2026-11-21T10:00:00' });
    expect(checkCell(ts, '2026-11-21 10:00')).toMatchObject({ ok: true });
    expect(checkCell(ts, 'yesterday')).toMatchObject({ ok: false });
  });
});

describe('withServerErrors', () => {
  it("pins the server's per-row errors on the preview rows and replaces earlier ones", () => {
    const preview = parseCsv('id,amount\n1,2\n2,3\n', schema);
    const once = withServerErrors(preview, [{ row: 1, field: 'amount', message: 'row 1: too big' }, { message: 'whole push' }]);
    expect(once.rows[0]!.errors).toEqual([]);
    expect(once.rows[1]!.errors).toEqual([{ field: 'amount', message: 'row 1: too big', source: 'server' }]);
    expect(once.fileErrors).toEqual(['Server: whole push']);
    expect(errorCount(once)).toBe(1);
    expect(clientErrorCount(once)).toBe(0);
    const cleared = withServerErrors(once, []);
    expect(errorCount(cleared)).toBe(0);
    expect(cleared.fileErrors).toEqual([]);
  });
});
