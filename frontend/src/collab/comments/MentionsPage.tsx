// The comments that mention me (unread first), each linking to its thread on its circuit.

import { useCallback, useEffect, useState } from 'react';
import { ErrorText, messagesOf } from '../../components/ErrorText';
import { formatTime } from '../../format';
import { threadHref } from '../../route';
import { commentsApi } from './commentsApi';
import { MENTIONS_EVENT, splitMentions, type MentionList } from './threads';
import './comments.css';

export function MentionsPage() {
  const [state, setState] = useState<'unread' | 'all'>('unread');
  const [list, setList] = useState<MentionList | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const load = useCallback(() => commentsApi.mentions(state).then(setList, (e) => setErrors(messagesOf(e))), [state]);
  useEffect(() => void load(), [load]);
  const read = async (ids: number[] | 'all') => {
    try {
      await commentsApi.markRead(ids);
      window.dispatchEvent(new Event(MENTIONS_EVENT));
      await load();
    } catch (e) {
      setErrors(messagesOf(e));
    }
  };
  return (
    <section className="card mentions-page" data-testid="mentions-page">
      <div className="mentions-head">
        <h1>Mentions</h1>
        <button type="button" aria-pressed={state === 'unread'} onClick={() => setState('unread')}>Unread{list ? ` (${list.unread})` : ''}</button>
        <button type="button" aria-pressed={state === 'all'} onClick={() => setState('all')}>All</button>
        {!!list?.unread && <button type="button" data-testid="mentions-read-all" onClick={() => void read('all')}>Mark all read</button>}
      </div>
      <ErrorText messages={errors} />
      {list && list.results.length === 0 && <p className="muted">{state === 'unread' ? 'No unread mentions.' : 'Nobody mentioned you yet.'}</p>}
      <ul className="mentions">
        {list?.results.map((m) => (
          <li key={m.id} className={`mention-item ${m.read ? 'read' : 'unread'}`} data-testid="mention" data-read={String(m.read)}>
            <a href={threadHref(m.circuit, m.thread)} data-testid="mention-open" onClick={() => !m.read && void commentsApi.markRead([m.id]).then(() => window.dispatchEvent(new Event(MENTIONS_EVENT)))}>
              <b>{m.author}</b> on <b>{m.circuit_name}</b> · node <code>{m.node}</code>{m.resolved ? ' · resolved' : ''}
            </a>
            <span className="muted"> {formatTime(m.created_at)}</span>
            <p className="comment-body">
              {splitMentions(m.body).map((p, i) => (p.mention ? <b key={i} className="mention">{p.text}</b> : <span key={i}>{p.text}</span>))}
            </p>
            {!m.read && <button type="button" className="inline-link" data-testid="mention-read" onClick={() => void read([m.id])}>mark read</button>}
          </li>
        ))}
      </ul>
    </section>
  );
}
