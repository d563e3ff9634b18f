// REST calls of comments and mentions (circuits/api/comments.py).

import { request } from '../../api';
import type { MentionList, Thread } from './threads';

const base = (circuit: number) => `/api/circuits/${circuit}/threads/`;
const shared = (share?: string) => (share ? `?share=${encodeURIComponent(share)}` : '');

export const commentsApi = {
  threads: (circuit: number, share?: string) => request<Thread[]>('GET', `${base(circuit)}${shared(share)}`),
  start: (circuit: number, node: string, body: string) => request<Thread>('POST', base(circuit), { node, body }),
  reply: (circuit: number, thread: number, body: string) => request<Thread>('POST', `${base(circuit)}${thread}/comments/`, { body }),
  edit: (circuit: number, thread: number, comment: number, body: string) =>
    request<Thread>('PATCH', `${base(circuit)}${thread}/comments/${comment}/`, { body }),
  remove: (circuit: number, thread: number, comment: number) => request<void>('DELETE', `${base(circuit)}${thread}/comments/${comment}/`),
  resolve: (circuit: number, thread: number) => request<Thread>('POST', `${base(circuit)}${thread}/resolve/`),
  reopen: (circuit: number, thread: number) => request<Thread>('POST', `${base(circuit)}${thread}/reopen/`),
  mentions: (state: 'unread' | 'read' | 'all' = 'all') => request<MentionList>('GET', `/api/mentions/?state=${state}`),
  markRead: (ids: number[] | 'all') => request<MentionList>('POST', '/api/mentions/read/', ids === 'all' ? { all: true } : { ids }),
};
