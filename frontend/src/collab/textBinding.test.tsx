// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { useRef } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { applyChange, changeBetween, moveThrough, useSharedText, type SharedText } from './textBinding';

afterEach(cleanup);

/** Two documents joined as the server joins them: each one's updates reach the other. */
function pair(initial: string) {
  const a = new Y.Doc();
  const b = new Y.Doc();
  a.getText('source').insert(0, initial);
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a));
  return { a, b, sync: () => { Y.applyUpdate(a, Y.encodeStateAsUpdate(b)); Y.applyUpdate(b, Y.encodeStateAsUpdate(a)); } };
}

/** What a textarea edit does to the Y.Text: the new value and the caret after it. */
function type(doc: Y.Doc, value: string, caret: number) {
  const text = doc.getText('source');
  const change = changeBetween(text.toString(), value, caret);
  if (change) doc.transact(() => applyChange(text, change), 'local');
}

describe('changeBetween', () => {
  it('is one insert or one delete where the text changed', () => {
    expect(changeBetween('SELECT a FROM t', 'SELECT a, b FROM t', 11)).toEqual({ index: 8, remove: 0, insert: ', b' });
    expect(changeBetween('SELECT a, b FROM t', 'SELECT a FROM t', 8)).toEqual({ index: 8, remove: 3, insert: '' });
    expect(changeBetween('SELECT a FROM t', 'SELECT z FROM t', 8)).toEqual({ index: 7, remove: 1, insert: 'z' });
    expect(changeBetween('same', 'same', 2)).toBeNull();
  });

  it('places an insertion among repeated characters at the caret', () => {
    // "aa": typing "a" after the first one (caret 2 after it) inserts at 1, not at the end.
    expect(changeBetween('aa', 'aaa', 2)).toEqual({ index: 1, remove: 0, insert: 'a' });
    expect(changeBetween('aa', 'aaa', 1)).toEqual({ index: 0, remove: 0, insert: 'a' });
    expect(changeBetween('a\n\nb', 'a\n\n\nb', 2)).toEqual({ index: 1, remove: 0, insert: '\n' });
  });
});

describe('two people typing in the shared text', () => {
  it('keeps both concurrent inserts at different positions', () => {
    const { a, b, sync } = pair('SELECT a FROM t;');
    type(a, 'SELECT a, x FROM t;', 11); // ada adds a column
    type(b, 'SELECT a FROM t WHERE a > 1;', 26); // bob adds a filter, before seeing ada's
    sync();
    expect(a.getText('source').toString()).toBe('SELECT a, x FROM t WHERE a > 1;');
    expect(b.getText('source').toString()).toBe(a.getText('source').toString());
  });

  it('keeps both when they type at the same place, character by character', () => {
    const { a, b, sync } = pair('ab');
    type(a, 'aXb', 2);
    type(b, 'aYb', 2);
    sync();
    const merged = a.getText('source').toString();
    expect(merged === 'aXYb' || merged === 'aYXb').toBe(true);
    expect(b.getText('source').toString()).toBe(merged);
  });
});

describe('moveThrough', () => {
  it('moves a caret with the text before it and not with the text after it', () => {
    expect(moveThrough([{ insert: 'abc' }], 5)).toBe(8);
    expect(moveThrough([{ retain: 6 }, { insert: 'abc' }], 5)).toBe(5);
    expect(moveThrough([{ retain: 5 }, { insert: 'abc' }], 5)).toBe(5); // typed exactly at it: goes after the caret
    expect(moveThrough([{ retain: 1 }, { delete: 2 }], 5)).toBe(3);
    expect(moveThrough([{ retain: 3 }, { delete: 4 }], 5)).toBe(3); // its character was deleted
  });
});

function Pane({ shared }: { shared: SharedText }) {
  const area = useRef<HTMLTextAreaElement>(null);
  const { value, set } = useSharedText(shared, area);
  return <textarea data-testid="pane" ref={area} value={value} onChange={(e) => set(e.target.value, e.target.selectionEnd)} />;
}

describe('useSharedText', () => {
  it('writes typing into the Y.Text and keeps the caret in place when someone types before it', () => {
    const { a, b, sync } = pair('SELECT a FROM t;');
    const origin = {};
    render(<Pane shared={{ text: a.getText('source'), origin }} />);
    const pane = screen.getByTestId('pane') as HTMLTextAreaElement;
    pane.focus();
    // Typing ", b" after "a": the textarea's new value with the caret after it.
    pane.setSelectionRange(11, 11);
    fireEvent.change(pane, { target: { value: 'SELECT a, b FROM t;', selectionStart: 11, selectionEnd: 11 } });
    expect(a.getText('source').toString()).toBe('SELECT a, b FROM t;');
    pane.setSelectionRange(11, 11); // the caret after "b"
    // Bob, meanwhile, puts a comment at the start.
    act(() => {
      b.getText('source').insert(0, '-- bob\n');
      sync();
    });
    expect(pane.value).toBe('-- bob\nSELECT a, b FROM t;');
    expect([pane.selectionStart, pane.selectionEnd]).toEqual([18, 18]); // still after "b"
    // Bob types after the caret: it does not move.
    act(() => {
      const t = b.getText('source');
      t.insert(t.length - 1, ' WHERE a > 1');
      sync();
    });
    expect(pane.value).toBe('-- bob\nSELECT a, b FROM t WHERE a > 1;');
    expect(pane.selectionStart).toBe(18);
    expect(b.getText('source').toString()).toBe(pane.value);
  });

  it('shows a remote change before React renders, so a keystroke right after it loses nothing', () => {
    const { a, b, sync } = pair('SELECT a FROM t;');
    render(<Pane shared={{ text: a.getText('source'), origin: {} }} />);
    const pane = screen.getByTestId('pane') as HTMLTextAreaElement;
    pane.focus();
    pane.setSelectionRange(8, 8); // after "a"
    // Bob's change arrives from the socket (outside any React event: rendered later).
    b.getText('source').insert(0, '-- bob\n');
    sync();
    expect(pane.value).toBe('-- bob\nSELECT a FROM t;'); // already on screen
    expect(pane.selectionStart).toBe(15);
    // Alice's next keystroke, at once.
    const typed = pane.value.slice(0, 15) + 'Z' + pane.value.slice(15);
    fireEvent.change(pane, { target: { value: typed } });
    expect(a.getText('source').toString()).toBe('-- bob\nSELECT aZ FROM t;');
  });
});
