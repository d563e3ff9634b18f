// The SQL / Datalog pane's text bound to the shared document's Y.Text (docs/collaboration.md),
// so that two people typing at once merge character by character:
// - a local change (the textarea's new value) is written as the smallest delete + insert,
//   placed at the caret where the diff alone is ambiguous ("aa" -> "aaa");
// - a remote change moves the caret (and selection) with the text before it, so someone
//   typing above you does not push your caret around.
// The pure functions are tested in textBinding.test.ts; `useSharedText` is the React side.

import { useCallback, useEffect, useState, type RefObject } from 'react';
import * as Y from 'yjs';

export interface TextChange {
  /** Where the change starts (in the text before it). */
  index: number;
  /** How many characters are deleted there. */
  remove: number;
  /** What is inserted there. */
  insert: string;
}

/** The smallest change turning `before` into `after`. `caret` is where the caret is in
 *  `after` (the end of what was typed): the text after it is unchanged, which places an
 *  insertion among repeated characters where it was typed. */
export function changeBetween(before: string, after: string, caret: number = after.length): TextChange | null {
  if (before === after) return null;
  const most = Math.min(before.length, after.length);
  let suffix = 0;
  const suffixCap = Math.min(most, Math.max(0, after.length - caret));
  while (suffix < suffixCap && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) suffix++;
  let prefix = 0;
  const prefixCap = most - suffix;
  while (prefix < prefixCap && before[prefix] === after[prefix]) prefix++;
  return { index: prefix, remove: before.length - prefix - suffix, insert: after.slice(prefix, after.length - suffix) };
}

/** Applies `change` to `text` (call inside a transaction to give it an origin). */
export function applyChange(text: Y.Text, change: TextChange): void {
  if (change.remove > 0) text.delete(change.index, change.remove);
  if (change.insert) text.insert(change.index, change.insert);
}

type Delta = { retain?: number; insert?: unknown; delete?: number }[];

/** Where position `at` is after the change `delta` (a Y.Text event's delta): text inserted
 *  before it moves it right, text deleted before it moves it left; text inserted exactly
 *  at it goes after it (the caret stays before someone else's typing). */
export function moveThrough(delta: Delta, at: number): number {
  let index = 0; // in the old text
  let moved = at;
  for (const op of delta) {
    if (index >= at) break;
    if (op.retain !== undefined) index += op.retain;
    else if (op.insert !== undefined) moved += typeof op.insert === 'string' ? op.insert.length : 1;
    else if (op.delete !== undefined) {
      moved -= Math.min(op.delete, at - index);
      index += op.delete;
    }
  }
  return moved;
}

export interface SharedText {
  text: Y.Text;
  /** The origin of this client's own transactions (what its undo tracks). */
  origin: object;
  /** Run inside each local change's transaction (e.g. to name the text's language). */
  prepare?: () => void;
}

/** The Y.Text's content, kept current, and `set(value, caret)` to write the textarea's new
 *  value as the smallest change. A remote change is put into the textarea at once (not at
 *  React's next render, so a keystroke in between is made on the text as it now is), with
 *  the caret and selection moved along with the text around them. */
export function useSharedText(shared: SharedText | null, area: RefObject<HTMLTextAreaElement | null>) {
  const [value, setValue] = useState(() => shared?.text.toString() ?? '');

  useEffect(() => {
    if (!shared) return;
    const { text, origin } = shared;
    let known = text.toString(); // what a textarea bound to this text shows
    setValue(known);
    const onChange = (event: Y.YTextEvent, transaction: Y.Transaction) => {
      const next = text.toString();
      const el = area.current;
      if (transaction.origin !== origin && el && el.value === known) {
        const delta = event.delta as Delta;
        const [start, end, direction] = [el.selectionStart, el.selectionEnd, el.selectionDirection];
        const focused = document.activeElement === el;
        el.value = next;
        if (focused) el.setSelectionRange(moveThrough(delta, start), moveThrough(delta, end), direction);
      }
      known = next;
      setValue(next);
    };
    text.observe(onChange);
    return () => text.unobserve(onChange);
  }, [shared, area]);

  const set = useCallback(
    (next: string, caret?: number) => {
      if (!shared) return;
      const change = changeBetween(shared.text.toString(), next, caret);
      if (!change) return;
      const ydoc = shared.text.doc;
      const write = () => {
        shared.prepare?.();
        applyChange(shared.text, change);
      };
      if (ydoc) ydoc.transact(write, shared.origin);
      else write();
    },
    [shared],
  );
  return { value, set };
}
