import { describe, expect, it } from 'vitest';
import { editorShortcut, shortcutCommand, type KeyPress } from './shortcuts';

const press = (key: string, mods: Omit<KeyPress, 'key'> = {}): KeyPress => ({ key, ...mods });

describe('editor shortcuts', () => {
  it('maps key presses to commands (Ctrl or Cmd)', () => {
    expect(shortcutCommand(press('z', { ctrlKey: true }))).toBe('undo');
    expect(shortcutCommand(press('Z', { ctrlKey: true, shiftKey: true }))).toBe('redo');
    expect(shortcutCommand(press('y', { metaKey: true }))).toBe('redo');
    expect(shortcutCommand(press('a', { ctrlKey: true }))).toBe('select-all');
    expect(shortcutCommand(press('g', { ctrlKey: true }))).toBe('group');
    expect(shortcutCommand(press('v', { ctrlKey: true }))).toBe('paste');
    expect(shortcutCommand(press('c', { metaKey: true }))).toBe('copy');
    expect(shortcutCommand(press('Delete'))).toBe('delete');
    expect(shortcutCommand(press('Backspace'))).toBe('delete');
    expect(shortcutCommand(press('f'))).toBe('fit');
    expect(shortcutCommand(press('L', { shiftKey: true }))).toBe('layout');
    expect(shortcutCommand(press('Escape'))).toBe('clear-selection');
    expect(shortcutCommand(press('l'))).toBeNull();
    expect(shortcutCommand(press('x'))).toBeNull();
    expect(shortcutCommand(press('Delete', { ctrlKey: true }))).toBeNull();
  });

  it('offers every command when editable', () => {
    expect(editorShortcut(press('L', { shiftKey: true }), false)).toBe('layout');
    expect(editorShortcut(press('v', { ctrlKey: true }), false)).toBe('paste');
    expect(editorShortcut(press('Delete'), false)).toBe('delete');
  });

  it('ignores every edit when read-only: undo, redo, group, paste, delete, auto-layout', () => {
    const edits = [
      press('z', { ctrlKey: true }),
      press('Z', { ctrlKey: true, shiftKey: true }),
      press('y', { ctrlKey: true }),
      press('g', { ctrlKey: true }),
      press('v', { ctrlKey: true }),
      press('v', { metaKey: true }),
      press('Delete'),
      press('Backspace'),
      press('L', { shiftKey: true }),
    ];
    for (const edit of edits) expect(editorShortcut(edit, true), JSON.stringify(edit)).toBeNull();
    // Looking around still works.
    expect(editorShortcut(press('a', { ctrlKey: true }), true)).toBe('select-all');
    expect(editorShortcut(press('c', { ctrlKey: true }), true)).toBe('copy');
    expect(editorShortcut(press('f'), true)).toBe('fit');
    expect(editorShortcut(press('Escape'), true)).toBe('clear-selection');
  });
});
