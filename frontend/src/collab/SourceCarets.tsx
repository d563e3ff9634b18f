// The others' carets and selections in the SQL / Datalog pane: a layer over the textarea
// with its font, padding and wrapping (the pane's .source-backdrop; its own text transparent), where each person's
// selection is shaded and their caret drawn in their colour, named. Positions come from
// awareness as Yjs relative positions (useSharedDocument.ts), so they stay on the same
// characters while anyone types.

import { forwardRef } from 'react';

export interface TextCaret {
  clientId: number;
  name: string;
  color: string;
  /** Where the selection started and where the caret is (equal: no selection). */
  anchor: number;
  head: number;
}

interface Piece {
  text: string;
  /** The caret(s) drawn before this piece. */
  carets: TextCaret[];
  /** Whose selection covers it (the first is shown). */
  selectedBy: TextCaret[];
}

/** The text cut at every caret and selection boundary. */
export function caretPieces(text: string, carets: TextCaret[]): Piece[] {
  const clamp = (n: number) => Math.max(0, Math.min(text.length, n));
  const shown = carets.map((c) => ({ ...c, anchor: clamp(c.anchor), head: clamp(c.head) }));
  const cuts = [...new Set([0, text.length, ...shown.flatMap((c) => [c.anchor, c.head])])].sort((x, y) => x - y);
  const pieces: Piece[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [from, to] = [cuts[i]!, cuts[i + 1]!];
    pieces.push({
      text: text.slice(from, to),
      carets: shown.filter((c) => c.head === from),
      selectedBy: shown.filter((c) => c.anchor !== c.head && Math.min(c.anchor, c.head) <= from && to <= Math.max(c.anchor, c.head)),
    });
  }
  const atEnd = shown.filter((c) => c.head === text.length);
  if (atEnd.length) pieces.push({ text: '', carets: atEnd, selectedBy: [] });
  return pieces;
}

/** The layer itself; its ref is scrolled with the textarea by the pane. */
export const SourceCarets = forwardRef<HTMLPreElement, { text: string; carets: TextCaret[] }>(function SourceCarets({ text, carets }, ref) {
  return (
    <pre className="source-backdrop source-carets" ref={ref} aria-hidden="true" data-testid="source-carets">
      {caretPieces(text, carets).map((piece, i) => (
        <span key={i}>
          {piece.carets.map((c) => (
            <span key={c.clientId} className="remote-caret" style={{ borderColor: c.color }} data-testid="remote-caret" data-name={c.name} data-at={c.head}>
              <span className="remote-caret-name" style={{ background: c.color }}>
                {c.name || 'anonymous'}
              </span>
            </span>
          ))}
          {piece.selectedBy.length ? (
            <mark className="remote-selection" style={{ background: `${piece.selectedBy[0]!.color}33` }} data-testid="remote-selection" data-name={piece.selectedBy[0]!.name}>
              {piece.text}
            </mark>
          ) : (
            piece.text
          )}
        </span>
      ))}
      {'\n'}
    </pre>
  );
});
