// The circuit's shared document (docs/collaboration.md): a Y.Doc synced with the server
// over y-websocket, offered to the editor as the same DocumentHistory the local editor
// used, so the canvas, side panel and source pane edit it unchanged. Undo and redo are
// Y.UndoManager's, tracking this client's own edits only; presence is y-protocols'
// awareness (name, colour, cursor, selection).
//
// - Role: the server tells the socket its role (ROLE_MESSAGE) when it opens and when it
//   changes; the page follows it (read-only for a viewer). A change of role starts a fresh
//   Y.Doc: edits the server dropped leave a gap in this client's clock that no later edit
//   of the same client could pass, and a fresh client id starts from the server's document.
// - Offline: a writer's document is kept in IndexedDB (y-indexeddb) under a name of its
//   user and circuit, so edits made offline survive closing the tab; the browser's
//   offline / online events close and reopen the socket (Chromium keeps a socket open
//   while offline), and on reconnect both sides send what the other lacks.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Awareness } from 'y-protocols/awareness';
import { IndexeddbPersistence } from 'y-indexeddb';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import type { Doc } from '../editor/model';
import type { DocumentHistory } from '../editor/useDocumentHistory';
import { colorOf } from './colors';
import { ownUndo, parts, readDocument, same, titleOf, writeDocument } from './circuitDoc';
import type { TextCaret } from './SourceCarets';
import type { SharedText } from './textBinding';
import { COMMENT_EVENT } from './comments/threads';

/** A canvas view: its centre in the canvas's coordinates, and its zoom. */
export interface View {
  x: number;
  y: number;
  zoom: number;
}

export interface Peer {
  clientId: number;
  name: string;
  color: string;
  role: 'writer' | 'viewer';
  cursor: { x: number; y: number } | null;
  selection: string[];
  /** Their caret and selection in the SQL / Datalog text, as Yjs relative positions (JSON). */
  source: { anchor: unknown; head: unknown } | null;
  /** Their canvas's view (to follow it). */
  view: View | null;
}

export type Role = 'writer' | 'viewer';

/** dbspweb's message type beside y-protocols' 0-3: the socket's role (circuits/collab/consumer.py). */
export const ROLE_MESSAGE = 100;
/** dbspweb's message type: a comment thread changed (JSON; collab/comments/threads.ts reads it). */
export const COMMENT_MESSAGE = 101;

export interface SharedDocument {
  /** What the server says this page may do (null until the socket said). */
  role: Role | null;
  /** The browser is offline: edits are kept here and sent when it is back. */
  offline: boolean;
  /** The role changed and a fresh copy of the document is on its way: nothing to edit meanwhile. */
  settling: boolean;
  /** The document and its history, once synced with the server (null before). */
  state: DocumentHistory | null;
  /** The circuit's title as the shared document has it (null before it arrives). */
  title: string | null;
  /** Tells everyone present the circuit's new title (after it was renamed). */
  setTitle: (title: string) => void;
  /** Everyone else present. */
  peers: Peer[];
  me: { name: string; color: string };
  setCursor: (at: { x: number; y: number } | null) => void;
  setSelection: (ids: string[]) => void;
  /** Tells everyone this page's canvas view (so they can follow it). */
  setView: (view: View) => void;
  /** The SQL / Datalog pane's text (`source`), to bind the pane to (null before it syncs). */
  sourceText: SharedText | null;
  /** Tells the others where this person's caret and selection are in that text (null: not in it). */
  setSourceCaret: (at: { anchor: number; head: number } | null) => void;
  /** The others' carets and selections in that text, as indexes into it now. */
  sourceCarets: TextCaret[];
}

export { colorOf };

const isView = (v: unknown): v is View =>
  !!v && typeof v === 'object' && ['x', 'y', 'zoom'].every((k) => Number.isFinite((v as Record<string, unknown>)[k]));

function socketBase(): string {
  const loc = window.location;
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/ws/circuits`;
}

export function useSharedDocument(
  circuitId: number | null,
  options: {
    name: string;
    share?: string;
    saved: Doc;
    pending: () => { from: Doc; to: Doc } | null;
    /** What the page may do before the socket says (the circuit's `can_edit`). */
    writable: boolean;
    /** Names this user's copy of this circuit in IndexedDB (none: nothing kept offline). */
    store?: string;
  },
): SharedDocument {
  const { name, share, saved: savedDoc, store } = options;
  const pending = useRef(options.pending);
  pending.current = options.pending;
  const [doc, setDoc] = useState<Doc | null>(null);
  const [peers, setPeers] = useState<Peer[]>([]);
  const [title, setTitleState] = useState<string | null>(null);
  const [tick, setTick] = useState(0); // undo stack or saved version changed
  const saved = useRef<Doc>(savedDoc);
  /** The document as last read from the Y.Doc (set by the update handler, before React renders). */
  const current = useRef<Doc | null>(null);
  const generation = useRef(0);
  /** The circuit whose pending edits (made before its document arrived) have joined it. */
  const joined = useRef<number | null>(null);
  const me = useMemo(() => ({ name, color: colorOf(name) }), [name]);
  const [role, setRole] = useState<Role | null>(null);
  const [offline, setOffline] = useState(() => typeof navigator !== 'undefined' && navigator.onLine === false);
  const writable = role ? role === 'writer' : options.writable;

  // One Y.Doc per circuit and role (see the top of this file).
  const session = useMemo(() => {
    if (circuitId === null || typeof WebSocket === 'undefined') return null;
    const ydoc = new Y.Doc();
    const origin = { local: true }; // this client's edits: the only ones its undo tracks
    const undo = ownUndo(ydoc, origin);
    return { ydoc, origin, undo, awareness: new Awareness(ydoc), writable };
  }, [circuitId, writable]);
  /** The session whose document is on screen (it synced); another one is settling. */
  const [live, setLive] = useState<typeof session>(null);
  const settling = live !== null && live !== session;

  useEffect(() => {
    if (!session || circuitId === null) return;
    const { ydoc, undo, awareness } = session;
    // Until this session has synced, the previous one's document stays on screen, but
    // nothing edits it (`settling`: the page is read-only for that moment).
    current.current = null;
    const kept = session.writable && store && typeof indexedDB !== 'undefined' ? new IndexeddbPersistence(`dbspweb.circuit.${circuitId}.${store}`, ydoc) : null;
    // disableBc: tabs of one browser meet through the server, whose role check they pass.
    const provider = new WebsocketProvider(socketBase(), `${circuitId}/doc`, ydoc, { params: share ? { share } : {}, awareness, disableBc: true });
    provider.messageHandlers[ROLE_MESSAGE] = (_encoder, decoder) => {
      const told: Role = new TextDecoder().decode(decoder.arr.subarray(decoder.pos)) === 'writer' ? 'writer' : 'viewer';
      decoder.pos = decoder.arr.length;
      // A viewer's copy may hold what the server dropped: never keep or send it again.
      if (told === 'viewer' && kept) void kept.clearData();
      setRole(told); // a role other than this session's starts a new one
    };
    provider.messageHandlers[COMMENT_MESSAGE] = (_encoder, decoder) => {
      const text = new TextDecoder().decode(decoder.arr.subarray(decoder.pos));
      decoder.pos = decoder.arr.length;
      window.dispatchEvent(new CustomEvent(COMMENT_EVENT, { detail: { circuit: circuitId, text } }));
    };
    provider.on('closed', ({ code }) => {
      if (code === 4403 && kept) void kept.clearData(); // access ended: nothing of it stays here
    });
    const goOffline = () => {
      setOffline(true);
      provider.disconnect();
    };
    const goOnline = () => {
      setOffline(false);
      provider.connect();
    };
    window.addEventListener('offline', goOffline);
    window.addEventListener('online', goOnline);
    if (navigator.onLine === false) goOffline();
    awareness.setLocalStateField('user', me);
    const read = () => {
      const d = readDocument(ydoc);
      current.current = d;
      setDoc(d);
      setTitleState(titleOf(ydoc));
    };
    let arrived = false;
    const onSync = (synced: boolean) => {
      if (!synced) return;
      arrived = true;
      // Edits made before the document first arrived (on the saved version) join it now,
      // once (not again on a reconnect, whose provider sends what was edited meanwhile, nor
      // in the fresh session after a change of role).
      const edits = joined.current === circuitId ? null : pending.current();
      joined.current = circuitId;
      if (edits && !same(edits.from, edits.to)) ydoc.transact(() => writeDocument(ydoc, edits.from, edits.to), session.origin);
      generation.current += 1;
      read();
      setLive(session);
      // The shared document as saved (e.g. freshly seeded from the version): nothing unsaved.
      if (!edits && same(saved.current, current.current)) saved.current = current.current!;
    };
    const onUpdate = () => {
      // Once the document has arrived, every change shows, made online or offline (the
      // provider is not `synced` while its socket is closed).
      if (arrived) read();
    };
    const onStack = () => setTick((t) => t + 1);
    const onPresence = () => {
      const out: Peer[] = [];
      awareness.getStates().forEach((state, clientId) => {
        if (clientId === ydoc.clientID || !state.user) return;
        out.push({
          clientId,
          name: String(state.user.name ?? ''),
          color: String(state.user.color ?? '#888'),
          role: state.role === 'writer' ? 'writer' : 'viewer',
          cursor: state.cursor ?? null,
          selection: Array.isArray(state.selection) ? state.selection : [],
          source: state.source && typeof state.source === 'object' ? state.source : null,
          view: isView(state.view) ? state.view : null,
        });
      });
      setPeers(out);
    };
    provider.on('sync', onSync);
    ydoc.on('update', onUpdate);
    undo.on('stack-item-added', onStack);
    undo.on('stack-item-popped', onStack);
    awareness.on('change', onPresence);
    return () => {
      window.removeEventListener('offline', goOffline);
      window.removeEventListener('online', goOnline);
      awareness.off('change', onPresence);
      ydoc.off('update', onUpdate);
      provider.destroy();
      void kept?.destroy();
    };
  }, [session, circuitId, share, me, store]);

  const write = useCallback(
    (next: Doc, origin: unknown): Doc | null => {
      const before = current.current;
      if (!session || !before || next === before) return before;
      session.ydoc.transact(() => writeDocument(session.ydoc, before, next), origin);
      return current.current; // read back by the update handler, synchronously
    },
    [session],
  );

  const state = useMemo<DocumentHistory | null>(() => {
    if (!session || !doc) return null;
    const { undo, origin } = session;
    return {
      doc,
      apply: (edit) => void (current.current && write(edit(current.current), origin)),
      undo: () => void undo.undo(),
      redo: () => void undo.redo(),
      reset: (next) => {
        generation.current += 1;
        saved.current = write(next, 'reset') ?? saved.current;
        undo.clear();
      },
      load: (next) => {
        generation.current += 1;
        write(next, origin);
      },
      adjust: (next) => {
        const wasSaved = saved.current === current.current;
        const laid = write(next, 'layout');
        if (wasSaved && laid) saved.current = laid;
      },
      generation: generation.current,
      canUndo: undo.undoStack.length > 0,
      canRedo: undo.redoStack.length > 0,
      dirty: saved.current !== doc, // any change since the last save, yours or someone else's
      // Leaving asks while the document differs from the last saved version, as before.
      isDirty: () => saved.current !== current.current,
      markSaved: (d) => {
        saved.current = d ?? current.current ?? saved.current;
        setTick((t) => t + 1);
      },
    };
    // tick: the undo stacks and `saved` live in refs
  }, [session, doc, write, tick]);

  const setCursor = useCallback(
    (at: { x: number; y: number } | null) => session?.awareness.setLocalStateField('cursor', at),
    [session],
  );
  const setSelection = useCallback((ids: string[]) => session?.awareness.setLocalStateField('selection', ids), [session]);
  const setView = useCallback((view: View) => session?.awareness.setLocalStateField('view', view), [session]);
  const setTitle = useCallback((t: string) => session?.ydoc.transact(() => parts(session.ydoc).meta.set('title', t), 'title'), [session]);
  const sourceText = useMemo<SharedText | null>(() => {
    if (!live) return null;
    const { source, meta } = parts(live.ydoc);
    // Text typed into a document without a source language is SQL's (the pane's first tab).
    const prepare = () => void (meta.get('source_language') === undefined && meta.set('source_language', 'sql'));
    return { text: source, origin: live.origin, prepare };
  }, [live]);
  const setSourceCaret = useCallback(
    (at: { anchor: number; head: number } | null) => {
      if (!live) return;
      const { source } = parts(live.ydoc);
      const relative = (index: number) => Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(source, index));
      live.awareness.setLocalStateField('source', at && { anchor: relative(at.anchor), head: relative(at.head) });
    },
    [live],
  );
  // Recomputed when the document changes (`doc`): the same characters, new indexes.
  const sourceCarets = useMemo<TextCaret[]>(() => {
    if (!live || !doc) return [];
    const { source } = parts(live.ydoc);
    const absolute = (json: unknown) => {
      try {
        const at = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(json), live.ydoc);
        return at && at.type === source ? at.index : null;
      } catch {
        return null; // not a relative position: someone else's page, ignored
      }
    };
    return peers.flatMap((p) => {
      const [anchor, head] = p.source ? [absolute(p.source.anchor), absolute(p.source.head)] : [null, null];
      return anchor === null || head === null ? [] : [{ clientId: p.clientId, name: p.name, color: p.color, anchor, head }];
    });
  }, [live, doc, peers]);
  return { role, offline, settling, state, title, setTitle, peers, me, setCursor, setSelection, setView, sourceText, setSourceCaret, sourceCarets };
}
