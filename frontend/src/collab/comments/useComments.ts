// A circuit's comment threads: loaded over REST, kept current by the document socket's
// comment messages (COMMENT_EVENT), and the actions of the panel.

import { useCallback, useEffect, useState } from 'react';
import { messagesOf } from '../../components/ErrorText';
import { commentsApi } from './commentsApi';
import { applyEvent, COMMENT_EVENT, MENTIONS_EVENT, parseCommentEvent, upsertThread, withoutThread, type Thread } from './threads';

export interface Comments {
  threads: Thread[];
  loaded: boolean;
  errors: string[];
  clearErrors: () => void;
  start: (node: string, body: string) => Promise<Thread | null>;
  reply: (thread: number, body: string) => Promise<boolean>;
  edit: (thread: number, comment: number, body: string) => Promise<boolean>;
  remove: (thread: number, comment: number) => Promise<boolean>;
  resolve: (thread: number) => Promise<boolean>;
  reopen: (thread: number) => Promise<boolean>;
}

export function useComments(circuitId: number | null, me: string | null, share?: string): Comments {
  const [threads, setThreads] = useState<Thread[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [errors, setErrors] = useState<string[]>([]);

  useEffect(() => {
    if (circuitId === null) return;
    let active = true;
    commentsApi.threads(circuitId, share).then(
      (list) => {
        if (!active) return;
        setThreads((now) => list.reduce(upsertThread, now)); // a live message that came first stays
        setLoaded(true);
      },
      (error) => active && setErrors(messagesOf(error)),
    );
    const onEvent = (e: Event) => {
      const { circuit, text } = (e as CustomEvent<{ circuit: number; text: string }>).detail;
      const event = circuit === circuitId ? parseCommentEvent(text) : null;
      if (!event) return;
      setThreads((now) => applyEvent(now, event, circuitId));
      if (event.type === 'thread' && me && event.mentioned.includes(me)) window.dispatchEvent(new Event(MENTIONS_EVENT));
    };
    window.addEventListener(COMMENT_EVENT, onEvent);
    return () => {
      active = false;
      window.removeEventListener(COMMENT_EVENT, onEvent);
    };
  }, [circuitId, share, me]);

  const run = useCallback(async <T,>(call: () => Promise<T>, then: (value: T) => void): Promise<boolean> => {
    try {
      then(await call());
      setErrors([]);
      return true;
    } catch (error) {
      setErrors(messagesOf(error));
      return false;
    }
  }, []);
  const put = (t: Thread) => setThreads((now) => upsertThread(now, t));
  const id = circuitId ?? -1;

  return {
    threads,
    loaded,
    errors,
    clearErrors: () => setErrors([]),
    start: async (node, body) => {
      let made: Thread | null = null;
      await run(() => commentsApi.start(id, node, body), (t) => ((made = t), put(t)));
      return made;
    },
    reply: (thread, body) => run(() => commentsApi.reply(id, thread, body), put),
    edit: (thread, comment, body) => run(() => commentsApi.edit(id, thread, comment, body), put),
    remove: (thread, comment) =>
      run(
        () => commentsApi.remove(id, thread, comment),
        () => setThreads((now) => {
          const t = now.find((x) => x.id === thread);
          if (!t) return now;
          const rest = t.comments.filter((c) => c.id !== comment);
          return rest.length ? upsertThread(now, { ...t, comments: rest }) : withoutThread(now, thread);
        }),
      ),
    resolve: (thread) => run(() => commentsApi.resolve(id, thread), put),
    reopen: (thread) => run(() => commentsApi.reopen(id, thread), put),
  };
}
