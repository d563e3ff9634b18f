// The comments side panel: the threads of one node (or of the whole circuit), each with its
// comments, a reply box and Resolve / Reopen; resolved threads folded away; threads whose
// node is gone from the document listed "on a removed node"; a new thread on a node.

import { useState } from 'react';
import { ErrorText } from '../../components/ErrorText';
import { formatTime } from '../../format';
import type { Comments } from './useComments';
import { MAX_BODY_CHARS, mayResolve, splitMentions, type Comment, type Thread } from './threads';
import './comments.css';

export interface CommentsPanelProps {
  comments: Comments;
  /** The node whose threads to show (null: every thread of the circuit). */
  node: string | null;
  /** Start a new thread on this node (the "Comment" action). */
  composing: string | null;
  nodeIds: Set<string>;
  me: string | null;
  canComment: boolean;
  canEdit: boolean;
  onShowAll: () => void;
  onComposed: () => void;
  onSelectNode: (node: string) => void;
  onClose: () => void;
}

function Body({ text }: { text: string }) {
  return (
    <p className="comment-body">
      {splitMentions(text).map((p, i) => (p.mention ? <b key={i} className="mention">{p.text}</b> : <span key={i}>{p.text}</span>))}
    </p>
  );
}

function Box({ label, testId, initial = '', onSubmit, onCancel }: {
  label: string;
  testId: string;
  initial?: string;
  onSubmit: (body: string) => Promise<boolean>;
  onCancel?: () => void;
}) {
  const [text, setText] = useState(initial);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (!text.trim() || busy) return;
    setBusy(true);
    const ok = await onSubmit(text);
    setBusy(false);
    if (ok) setText('');
  };
  return (
    <form className="comment-box" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
      <textarea
        value={text}
        maxLength={MAX_BODY_CHARS}
        rows={2}
        placeholder={`${label}… (@name mentions someone)`}
        aria-label={label}
        data-testid={`${testId}-text`}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) void submit();
          e.stopPropagation(); // the editor's shortcuts (Delete, Ctrl+Z…) are not for this text
        }}
      />
      <div className="comment-box-actions">
        <button type="submit" className="primary" data-testid={testId} disabled={busy || !text.trim()}>
          {label}
        </button>
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  );
}

function CommentItem({ thread, comment, me, comments }: { thread: Thread; comment: Comment; me: string | null; comments: Comments }) {
  const [editing, setEditing] = useState(false);
  const mine = me !== null && comment.author === me;
  return (
    <li className="comment" data-testid="comment" data-author={comment.author}>
      <div className="comment-head">
        <b>{comment.author}</b> <span className="muted">{formatTime(comment.created_at)}{comment.edited_at ? ' · edited' : ''}</span>
        {mine && !editing && (
          <span className="comment-own">
            <button type="button" className="inline-link" data-testid="comment-edit" onClick={() => setEditing(true)}>edit</button>
            <button type="button" className="inline-link" data-testid="comment-delete" onClick={() => window.confirm('Delete this comment?') && void comments.remove(thread.id, comment.id)}>delete</button>
          </span>
        )}
      </div>
      {editing ? (
        <Box label="Save" testId="comment-save" initial={comment.body} onCancel={() => setEditing(false)}
          onSubmit={async (body) => { const ok = await comments.edit(thread.id, comment.id, body); if (ok) setEditing(false); return ok; }} />
      ) : (
        <Body text={comment.body} />
      )}
    </li>
  );
}

function ThreadCard({ thread, props, removed }: { thread: Thread; props: CommentsPanelProps; removed: boolean }) {
  const { comments, me, canComment, canEdit } = props;
  return (
    <article className={`thread ${thread.resolved ? 'resolved' : ''}`} data-testid="thread" data-thread={thread.id} data-node={thread.node} data-resolved={String(thread.resolved)}>
      <header className="thread-head">
        {removed ? (
          <span className="thread-node removed" data-testid="thread-removed-node">on a removed node ({thread.node})</span>
        ) : (
          <button type="button" className="inline-link thread-node" onClick={() => props.onSelectNode(thread.node)} title="Select the node">
            {thread.node}
          </button>
        )}
        {mayResolve(thread, me, canEdit, canComment) &&
          (thread.resolved ? (
            <button type="button" data-testid="thread-reopen" onClick={() => void comments.reopen(thread.id)}>Reopen</button>
          ) : (
            <button type="button" data-testid="thread-resolve" onClick={() => void comments.resolve(thread.id)}>Resolve</button>
          ))}
      </header>
      {thread.resolved && thread.resolved_by && (
        <p className="muted thread-state" data-testid="thread-resolved-by">
          Resolved by {thread.resolved_by}{thread.resolved_at ? ` ${formatTime(thread.resolved_at)}` : ''}
        </p>
      )}
      <ol className="comments">
        {thread.comments.map((c) => <CommentItem key={c.id} thread={thread} comment={c} me={me} comments={comments} />)}
      </ol>
      {canComment && <Box label="Reply" testId="comment-reply" onSubmit={(body) => comments.reply(thread.id, body)} />}
    </article>
  );
}

export function CommentsPanel(props: CommentsPanelProps) {
  const { comments, node, composing, nodeIds, canComment } = props;
  const shown = comments.threads.filter((t) => node === null || t.node === node);
  const onNodes = shown.filter((t) => nodeIds.has(t.node));
  const removed = shown.filter((t) => !nodeIds.has(t.node));
  const open = onNodes.filter((t) => !t.resolved);
  const resolved = onNodes.filter((t) => t.resolved);
  return (
    <aside className="comments-panel" data-testid="comments-panel" aria-label="Comments">
      <header className="comments-panel-head">
        <h2>{node === null ? 'Comments' : <>Comments on <code>{node}</code></>}</h2>
        {node !== null && <button type="button" className="inline-link" data-testid="comments-all" onClick={props.onShowAll}>all</button>}
        <button type="button" className="inline-link" data-testid="comments-close" onClick={props.onClose} aria-label="Close the comments">×</button>
      </header>
      <ErrorText messages={comments.errors} testId="comments-error" />
      {composing !== null && canComment && (
        <div className="thread new-thread" data-testid="new-thread">
          <p className="muted">New thread on <code>{composing}</code></p>
          <Box label="Comment" testId="thread-start" onCancel={props.onComposed}
            onSubmit={async (body) => { const made = await comments.start(composing, body); if (made) props.onComposed(); return made !== null; }} />
        </div>
      )}
      {!canComment && <p className="muted" data-testid="comments-read-only">You can read the comments; the owner and the people it is shared with write them.</p>}
      {comments.loaded && shown.length === 0 && composing === null && <p className="muted">No comments{node ? ' on this node' : ''} yet.</p>}
      {open.map((t) => <ThreadCard key={t.id} thread={t} props={props} removed={false} />)}
      {resolved.length > 0 && (
        <details className="resolved-threads" data-testid="resolved-threads">
          <summary>Resolved ({resolved.length})</summary>
          {resolved.map((t) => <ThreadCard key={t.id} thread={t} props={props} removed={false} />)}
        </details>
      )}
      {removed.length > 0 && (
        <section className="removed-threads" data-testid="removed-threads">
          <h3>On a removed node ({removed.length})</h3>
          {removed.map((t) => <ThreadCard key={t.id} thread={t} props={props} removed />)}
        </section>
      )}
    </aside>
  );
}
