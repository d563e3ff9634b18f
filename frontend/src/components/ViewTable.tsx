import { formatValue } from '../format';
import { sortedRows, type ZSet } from '../zset';

interface Props {
  view: string;
  zset: ZSet;
}

/** The integrated contents of one output view. */
export function ViewTable({ view, zset }: Props) {
  const { columns, rows } = sortedRows(zset);
  const showWeight = rows.some((r) => r.weight !== 1);
  return (
    <div className="table-wrap">
      <table className="view-table" data-testid={`view-table-${view}`}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
            {showWeight && <th className="weight">weight</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.key} data-testid="view-row" data-weight={row.weight}>
              {columns.map((c) => (
                <td key={c} className={row.data[c] === null || row.data[c] === undefined ? 'null' : undefined}>
                  {formatValue(row.data[c])}
                </td>
              ))}
              {showWeight && <td className={`weight ${row.weight < 0 ? 'negative' : ''}`}>{row.weight}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && <p className="muted empty">No rows.</p>}
    </div>
  );
}
