// The edited document with undo/redo: every edit goes through `apply`.

import { useCallback, useRef, useState } from 'react';
import { History, type Doc } from './model';

export interface DocumentHistory {
  doc: Doc;
  /** Applies an edit; `coalesce` merges quick successive edits of one field into one undo step. */
  apply: (edit: (doc: Doc) => Doc, coalesce?: string | null) => void;
  undo: () => void;
  redo: () => void;
  /** Replaces the document without history (loading a version). */
  reset: (doc: Doc) => void;
  /** Replaces the document as one undoable edit that brings in a whole document (import). */
  load: (doc: Doc) => void;
  /** Counts documents brought in (initial, reset, load): the editor lays out each once. */
  generation: number;
  /** Replaces the document without an undo step (e.g. the layout of a loaded document);
   * a document without unsaved changes stays without. */
  adjust: (doc: Doc) => void;
  canUndo: boolean;
  canRedo: boolean;
  /** Changes since the last `markSaved`. */
  dirty: boolean;
  /** `dirty` as of now (for handlers that run between renders). */
  isDirty: () => boolean;
  /** The document saved is `doc` (default: the one on screen): edits made while it was
   * being saved stay unsaved. */
  markSaved: (doc?: Doc) => void;
}

export function useDocumentHistory(initial: Doc): DocumentHistory {
  const [doc, setDoc] = useState(initial);
  const [, setTick] = useState(0);
  const history = useRef(new History<Doc>());
  const current = useRef(doc);
  const saved = useRef(doc);
  const generation = useRef(0);

  const set = useCallback((next: Doc) => {
    current.current = next;
    setDoc(next);
    setTick((t) => t + 1);
  }, []);

  const apply = useCallback(
    (edit: (doc: Doc) => Doc, coalesce: string | null = null) => {
      const before = current.current;
      const after = edit(before);
      if (after === before) return;
      history.current.record(before, coalesce);
      set(after);
    },
    [set],
  );

  const undo = useCallback(() => {
    const prev = history.current.undo(current.current);
    if (prev) set(prev);
  }, [set]);

  const redo = useCallback(() => {
    const next = history.current.redo(current.current);
    if (next) set(next);
  }, [set]);

  const reset = useCallback(
    (next: Doc) => {
      history.current.clear();
      saved.current = next;
      generation.current += 1;
      set(next);
    },
    [set],
  );

  const load = useCallback(
    (next: Doc) => {
      generation.current += 1;
      apply(() => next);
    },
    [apply],
  );

  const adjust = useCallback(
    (next: Doc) => {
      if (saved.current === current.current) saved.current = next;
      set(next);
    },
    [set],
  );

  const isDirty = useCallback(() => saved.current !== current.current, []);

  const markSaved = useCallback((doc?: Doc) => {
    saved.current = doc ?? current.current;
    setTick((t) => t + 1);
  }, []);

  return {
    doc,
    apply,
    undo,
    redo,
    reset,
    load,
    adjust,
    generation: generation.current,
    canUndo: history.current.canUndo,
    canRedo: history.current.canRedo,
    dirty: saved.current !== doc,
    isDirty,
    markSaved,
  };
}
