import { formatRow, formatWeight } from '../format';
import type { Row } from '../api';
import type { FeedEntry } from '../runState';

interface Props {
  view: string;
  entries: FeedEntry[];
  /** When given, each change has an "Explain" button (why did it change at its tick?). */
  onExplain?: (row: Row, tick: number) => void;
}

/** Recent output deltas of one view, newest first. */
export function DeltaFeed({ view, entries, onExplain }: Props) {
  return (
    <div className="delta-feed-wrap">
      <ol className="delta-feed" data-testid={`delta-feed-${view}`}>
        {entries.map((entry) => (
          <li
            key={entry.id}
            data-testid="delta-row"
            data-tick={entry.tick}
            data-weight={entry.weight}
            className={entry.weight > 0 ? 'plus' : 'minus'}
            title={formatRow(entry.data)}
          >
            {`${formatWeight(entry.weight)}  tick ${entry.tick}  ${formatRow(entry.data)}`}
            {onExplain && (
              <button type="button" className="explain-row-button" data-testid="explain-delta" title="Why did this row change?" onClick={() => onExplain(entry.data, entry.tick)} aria-label="Explain" />
            )}
          </li>
        ))}
      </ol>
      {entries.length === 0 && <p className="muted empty">No changes yet.</p>}
    </div>
  );
}
