// The editor's keyboard shortcuts as a pure function: which command a key press means.
// Commands that change the document are not offered in read-only mode (a shared link,
// someone else's circuit), so a read-only view can only select, copy, zoom and clear.

export type EditorCommand =
  | 'undo'
  | 'redo'
  | 'select-all'
  | 'group'
  | 'paste'
  | 'copy'
  | 'delete'
  | 'fit'
  | 'layout'
  | 'clear-selection';

/** Commands that edit the document (or its positions); refused when read-only. */
export const EDITING_COMMANDS: ReadonlySet<EditorCommand> = new Set<EditorCommand>(['undo', 'redo', 'group', 'paste', 'delete', 'layout']);

export interface KeyPress {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  shiftKey?: boolean;
}

/** The command a key press means, ignoring read-only. */
export function shortcutCommand(event: KeyPress): EditorCommand | null {
  const mod = !!(event.ctrlKey || event.metaKey);
  const shift = !!event.shiftKey;
  const key = event.key.toLowerCase();
  if (mod && key === 'z' && !shift) return 'undo';
  if (mod && ((key === 'z' && shift) || key === 'y')) return 'redo';
  if (mod && key === 'a') return 'select-all';
  if (mod && key === 'g') return 'group';
  if (mod && key === 'v') return 'paste';
  if (mod && key === 'c') return 'copy';
  if ((event.key === 'Delete' || event.key === 'Backspace') && !mod) return 'delete';
  if (key === 'f' && !mod) return 'fit';
  if (key === 'l' && !mod && shift) return 'layout';
  if (event.key === 'Escape') return 'clear-selection';
  return null;
}

/** The command to run for a key press: null for no shortcut, or an edit while read-only. */
export function editorShortcut(event: KeyPress, readOnly: boolean): EditorCommand | null {
  const command = shortcutCommand(event);
  if (command && readOnly && EDITING_COMMANDS.has(command)) return null;
  return command;
}
