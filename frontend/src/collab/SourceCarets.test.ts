import { describe, expect, it } from 'vitest';
import { caretPieces, type TextCaret } from './SourceCarets';

const caret = (clientId: number, anchor: number, head: number): TextCaret => ({ clientId, name: `p${clientId}`, color: '#e11d48', anchor, head });
const flat = (text: string, carets: TextCaret[]) =>
  caretPieces(text, carets).map((p) => `${p.carets.map((c) => `|${c.name}`).join('')}${p.selectedBy.length ? `[${p.text}]` : p.text}`).join('');

describe('caretPieces', () => {
  it('puts each caret before the character it is at, and at the end of the text', () => {
    expect(flat('SELECT 1', [caret(1, 3, 3), caret(2, 8, 8)])).toBe('SEL|p1ECT 1|p2');
  });
  it('shades a selection, forwards or backwards, with the caret at its head', () => {
    expect(flat('abcdef', [caret(1, 1, 4)])).toBe('a[bcd]|p1ef');
    expect(flat('abcdef', [caret(1, 4, 1)])).toBe('a|p1[bcd]ef');
  });
  it('keeps the text whole, whatever the carets (overlapping, out of range, on an empty text)', () => {
    const carets = [caret(1, 0, 5), caret(2, 3, 9), caret(3, -2, -2)];
    expect(caretPieces('abcdef', carets).map((p) => p.text).join('')).toBe('abcdef');
    expect(flat('abcdef', carets)).toBe('|p3[abc][de]|p1[f]|p2');
    expect(flat('', [caret(1, 0, 0)])).toBe('|p1');
  });
});
