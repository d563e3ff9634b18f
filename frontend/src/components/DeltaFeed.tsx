import { formatRow, formatWeight } from '../format';
import type { FeedEntry } from '../runState';

interface Props {
  view: string;
  entries: FeedEntry[];
}

/** Recent output deltas of one view, newest first. */
export function DeltaFeed({ view, entries }: Props) {
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
          </li>
        ))}
      </ol>
      {entries.length === 0 && <p className="muted empty">No changes yet.</p>}
    </div>
  );
}
