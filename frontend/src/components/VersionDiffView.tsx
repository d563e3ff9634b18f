/**
 * Two versions compared, in the history panel: nodes added / removed / changed (each
 * changed field with its old and new value), wires added / removed, the document's own
 * fields (the SQL / Datalog text), and beside each item who changed it (the server's
 * `authors`, docs/collaboration.md "Who changed what"): "params.predicate: … · alice, bob".
 */
import { useEffect, useRef } from 'react';
import type { ChangeAuthors, VersionDiff } from '../api/editor';

const wire = (e: { from: { node: string; port: string }; to: { node: string; port: string } }) =>
  `${e.from.node}.${e.from.port} → ${e.to.node}.${e.to.port}`;

/** The server's name of a wire (`from.port->to.port`), as `authors` entries carry it. */
const edgeName = (e: { from: { node: string; port: string }; to: { node: string; port: string } }) =>
  `${e.from.node}.${e.from.port}->${e.to.node}.${e.to.port}`;

/** A changed value as the document holds it ("—" when the field was absent). */
const shown = (value: unknown) => (value === undefined || value === null ? '—' : typeof value === 'string' ? value : JSON.stringify(value));

/** The document's text (a whole SQL program) cut to a line's worth; the whole on hover. */
function Text({ value, className }: { value: unknown; className: string }) {
  const text = shown(value);
  return (
    <span className={className} title={text}>
      {text.length > 120 ? `${text.slice(0, 119)}…` : text}
    </span>
  );
}

type Item = Pick<ChangeAuthors, 'change' | 'node' | 'field' | 'edge'>;
const keyOf = (i: Item) => [i.change, i.node ?? '', i.field ?? '', i.edge ?? ''].join('\u001f');

/** Who changed an item of the diff: names after a dot, nothing when nobody is known. */
function By({ names, item }: { names: Map<string, string[]>; item: Item }) {
  const who = names.get(keyOf(item));
  if (!who?.length) return null;
  return (
    <span className="diff-authors" data-testid="diff-authors" data-item={keyOf(item)}>
      {' · '}
      {who.join(', ')}
    </span>
  );
}

export function VersionDiffView({ diff }: { diff: VersionDiff }) {
  const { nodes, edges } = diff;
  const documentFields = Object.entries(diff.document ?? {});
  const names = new Map((diff.authors ?? []).map((a) => [keyOf(a), a.authors]));
  const empty =
    !nodes.added.length && !nodes.removed.length && !nodes.changed.length && !edges.added.length && !edges.removed.length && !documentFields.length;
  // Shown below the list when asked for: brought into view (at once, not smoothly scrolled).
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.scrollIntoView?.({ block: 'nearest' });
  }, [diff]);
  return (
    <div data-testid="version-diff" ref={box}>
      <h3>
        v{diff.a} → v{diff.b}
      </h3>
      {empty && <p className="muted">No differences.</p>}
      <ul className="diff">
        {nodes.added.map((n) => (
          <li key={`+${n.id}`} data-testid="diff-added">
            <span className="plus">+ node {n.id} {n.kind ? `(${n.kind})` : ''}</span>
            <By names={names} item={{ change: 'node_added', node: n.id }} />
          </li>
        ))}
        {nodes.removed.map((n) => (
          <li key={`-${n.id}`} data-testid="diff-removed">
            <span className="minus">− node {n.id} {n.kind ? `(${n.kind})` : ''}</span>
            <By names={names} item={{ change: 'node_removed', node: n.id }} />
          </li>
        ))}
        {nodes.changed.map((n) => (
          <li key={`~${n.id}`} data-testid="diff-changed">
            ~ node {n.id}:
            <ul>
              {n.fields.map((field) => (
                <li key={field} data-testid="diff-field" data-field={field}>
                  {field}: <span className="minus">{shown(n.changes?.[field]?.from)}</span> → <span className="plus">{shown(n.changes?.[field]?.to)}</span>
                  <By names={names} item={{ change: 'node_changed', node: n.id, field }} />
                </li>
              ))}
            </ul>
          </li>
        ))}
        {edges.added.map((e) => (
          <li key={`+${wire(e)}`}>
            <span className="plus">+ wire {wire(e)}</span>
            <By names={names} item={{ change: 'edge_added', edge: edgeName(e) }} />
          </li>
        ))}
        {edges.removed.map((e) => (
          <li key={`-${wire(e)}`}>
            <span className="minus">− wire {wire(e)}</span>
            <By names={names} item={{ change: 'edge_removed', edge: edgeName(e) }} />
          </li>
        ))}
        {documentFields.map(([field, change]) => (
          <li key={`doc ${field}`} data-testid="diff-document-field" data-field={field}>
            ~ {field}: <Text className="minus" value={change?.from} /> → <Text className="plus" value={change?.to} />
            <By names={names} item={{ change: 'document_changed', field }} />
          </li>
        ))}
      </ul>
    </div>
  );
}
