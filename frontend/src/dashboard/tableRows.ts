// The rows of an integrated view in display order (the table's sort, else column by column).

import { columnsOf, compareRows, type WeightedRow, type ZSet } from '../zset';

export type Sort = { column: string; descending: boolean } | null;

export function orderedRows(zset: ZSet, sort: Sort): { columns: string[]; rows: (WeightedRow & { key: string })[] } {
  const rows = [...zset.entries()].map(([key, row]) => ({ key, ...row }));
  const columns = columnsOf(rows);
  const order = sort ? [sort.column, ...columns.filter((c) => c !== sort.column)] : columns;
  const direction = sort?.descending ? -1 : 1;
  rows.sort((a, b) => compareRows(a.data, b.data, order) * direction);
  return { columns, rows };
}
