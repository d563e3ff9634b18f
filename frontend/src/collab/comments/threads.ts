// Comments pinned to nodes: the pure parts (docs/collaboration.md, "Comments"). Threads
// belong to a circuit and a node id; the canvas shows a marker with the count of open
// threads on each node of the document; threads whose node is not in the document are
// listed "on a removed node" and show on the node again when its id comes back.

import type { ApiSchemas } from '../../api';

export type Thread = ApiSchemas['Thread'];
export type Comment = ApiSchemas['Comment'];
export type Mention = ApiSchemas['Mention'];
export type MentionList = ApiSchemas['MentionList'];

/** The window event useSharedDocument dispatches for each comment message (type 101) of the socket. */
export const COMMENT_EVENT = 'dbspweb:comment';
/** The window event a page dispatches when the user's mentions may have changed (the header's badge reloads). */
export const MENTIONS_EVENT = 'dbspweb:mentions';

/** What the server sends on the document socket when a thread changed or went (circuits/comments/live.py). */
export type CommentEvent =
  | { type: 'thread'; thread: Thread; mentioned: string[] }
  | { type: 'thread_deleted'; circuit: number; thread: number };

/** The socket message's JSON text as an event (null: not one this page understands). */
export function parseCommentEvent(text: string): CommentEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  if (v.type === 'thread' && v.thread && typeof v.thread === 'object' && typeof (v.thread as Thread).id === 'number' && Array.isArray((v.thread as Thread).comments)) {
    return { type: 'thread', thread: v.thread as Thread, mentioned: Array.isArray(v.mentioned) ? v.mentioned.map(String) : [] };
  }
  if (v.type === 'thread_deleted' && typeof v.thread === 'number' && typeof v.circuit === 'number') {
    return { type: 'thread_deleted', circuit: v.circuit, thread: v.thread };
  }
  return null;
}

/** The threads with `thread` put in (replacing the one with its id), oldest first. */
export function upsertThread(threads: Thread[], thread: Thread): Thread[] {
  const rest = threads.filter((t) => t.id !== thread.id);
  return [...rest, thread].sort((a, b) => a.id - b.id);
}

export function withoutThread(threads: Thread[], id: number): Thread[] {
  return threads.filter((t) => t.id !== id);
}

/** Apply a socket event to a circuit's threads. */
export function applyEvent(threads: Thread[], event: CommentEvent, circuitId: number): Thread[] {
  if (event.type === 'thread') return event.thread.circuit === circuitId ? upsertThread(threads, event.thread) : threads;
  return event.circuit === circuitId ? withoutThread(threads, event.thread) : threads;
}

export interface Placement {
  /** Open threads per node present in the document (the markers). */
  openOnNode: Map<string, number>;
  /** Threads (open or resolved) on nodes that are not in the document now. */
  removed: Thread[];
}

/** Where threads show, given the ids of the document's nodes as it is now. */
export function placeThreads(threads: Thread[], nodeIds: Iterable<string>): Placement {
  const present = new Set(nodeIds);
  const openOnNode = new Map<string, number>();
  const removed: Thread[] = [];
  for (const t of threads) {
    if (!present.has(t.node)) removed.push(t);
    else if (!t.resolved) openOnNode.set(t.node, (openOnNode.get(t.node) ?? 0) + 1);
  }
  return { openOnNode, removed };
}

/** A comment's text in parts, `@name` mentions apart (as the server reads them: circuits/comments/mentions.py). */
export function splitMentions(body: string): { text: string; mention: boolean }[] {
  const parts: { text: string; mention: boolean }[] = [];
  const re = /(^|[^\w@.+-])@([\w.@+-]+)/g;
  let last = 0;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    const name = m[2]!.replace(/\.+$/, '');
    if (!name) continue;
    const at = m.index + m[1]!.length;
    if (at > last) parts.push({ text: body.slice(last, at), mention: false });
    parts.push({ text: `@${name}`, mention: true });
    last = at + 1 + name.length;
    re.lastIndex = last;
  }
  if (last < body.length) parts.push({ text: body.slice(last), mention: false });
  return parts;
}

/** Who may do what (the server decides; this only hides what it would refuse). */
export function mayResolve(thread: Thread, me: string | null, canEdit: boolean, canComment: boolean): boolean {
  return !!me && (canEdit || (canComment && thread.created_by === me));
}

export const MAX_BODY_CHARS = 5000;
