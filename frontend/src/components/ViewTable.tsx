import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import { formatValue } from '../format';
import { orderedRows, type Sort } from '../dashboard/tableRows';
import type { Row } from '../api';
import type { ZSet } from '../zset';

interface Props {
  view: string;
  zset: ZSet;
  /** Test id of the table (default `view-table-<view>`). */
  testId?: string;
  /** When given, each row has an "Explain" button (why is this row here?). */
  onExplain?: (row: Row) => void;
}

export const PAGE_SIZES = [100, 1000, 10000] as const;
/** Pages longer than this render only the rows in sight. */
export const VIRTUALISE_OVER = 60;
const ROW_HEIGHT = 29;

/** The integrated contents of one output view: sortable by any column, paged, and
 * virtualised (only visible rows in the DOM) for long pages. */
export function ViewTable({ view, zset, testId, onExplain }: Props) {
  const [sort, setSort] = useState<Sort>(null);
  const [pageSize, setPageSize] = useState<number>(PAGE_SIZES[0]);
  const [page, setPage] = useState(0);
  const scrollRef = useRef<HTMLDivElement>(null);

  const { columns, rows } = useMemo(() => orderedRows(zset, sort), [zset, sort]);

  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const current = Math.min(page, pages - 1);
  const pageRows = rows.slice(current * pageSize, (current + 1) * pageSize);
  const virtual = pageRows.length > VIRTUALISE_OVER;
  const showWeight = rows.some((r) => r.weight !== 1);

  const virtualizer = useVirtualizer({
    count: virtual ? pageRows.length : 0,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    initialRect: { width: 600, height: 420 },
  });
  const items = virtual ? virtualizer.getVirtualItems() : [];
  const padTop = virtual && items.length ? (items[0]?.start ?? 0) : 0;
  const padBottom = virtual && items.length ? virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0) : 0;
  const visible = virtual ? items.map((i) => ({ index: i.index, row: pageRows[i.index]! })) : pageRows.map((row, index) => ({ index, row }));

  function toggleSort(column: string) {
    setSort((s) => (s?.column === column ? (s.descending ? null : { column, descending: true }) : { column, descending: false }));
    setPage(0);
  }

  const span = columns.length + (showWeight ? 1 : 0) + (onExplain ? 1 : 0);
  return (
    <div className="view-table-block">
      <div className={`table-wrap${virtual ? ' virtual' : ''}`} ref={scrollRef} data-testid={`view-scroll-${view}`}>
        <table className="view-table" data-testid={testId ?? `view-table-${view}`} data-rows={rows.length}>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c} aria-sort={sort?.column === c ? (sort.descending ? 'descending' : 'ascending') : 'none'}>
                  <button type="button" className="sort" data-testid={`sort-${view}-${c}`} onClick={() => toggleSort(c)}>
                    {c}
                    {sort?.column === c ? (sort.descending ? ' ▼' : ' ▲') : ''}
                  </button>
                </th>
              ))}
              {showWeight && <th className="weight">weight</th>}
              {onExplain && <th aria-label="Explain" />}
            </tr>
          </thead>
          <tbody>
            {padTop > 0 && (
              <tr aria-hidden="true" style={{ height: padTop }}>
                <td colSpan={span} />
              </tr>
            )}
            {visible.map(({ row }) => (
              <tr key={row.key} data-testid="view-row" data-weight={row.weight} style={virtual ? { height: ROW_HEIGHT } : undefined}>
                {columns.map((c) => (
                  <td key={c} className={row.data[c] === null || row.data[c] === undefined ? 'null' : undefined} title={formatValue(row.data[c])}>
                    {formatValue(row.data[c])}
                  </td>
                ))}
                {showWeight && <td className={`weight ${row.weight < 0 ? 'negative' : ''}`}>{row.weight}</td>}
                {onExplain && (
                  <td className="row-action">
                    <button type="button" className="explain-row-button" data-testid="explain-row" title="Why is this row here?" onClick={() => onExplain(row.data)} aria-label="Explain" />
                  </td>
                )}
              </tr>
            ))}
            {padBottom > 0 && (
              <tr aria-hidden="true" style={{ height: padBottom }}>
                <td colSpan={span} />
              </tr>
            )}
          </tbody>
        </table>
        {rows.length === 0 && <p className="muted empty">No rows.</p>}
      </div>
      {rows.length > PAGE_SIZES[0] && (
        <div className="pager" data-testid={`pager-${view}`}>
          <button type="button" onClick={() => setPage(Math.max(0, current - 1))} disabled={current === 0} data-testid={`page-prev-${view}`}>
            ‹
          </button>
          <span data-testid={`page-label-${view}`}>
            {current * pageSize + 1}–{Math.min(rows.length, (current + 1) * pageSize)} of {rows.length}
          </span>
          <button type="button" onClick={() => setPage(Math.min(pages - 1, current + 1))} disabled={current >= pages - 1} data-testid={`page-next-${view}`}>
            ›
          </button>
          <select
            value={pageSize}
            onChange={(e) => {
              setPageSize(Number(e.target.value));
              setPage(0);
            }}
            aria-label="Rows per page"
          >
            {PAGE_SIZES.map((s) => (
              <option key={s} value={s}>
                {s} / page
              </option>
            ))}
          </select>
        </div>
      )}
    </div>
  );
}
