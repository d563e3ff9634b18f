// The header's badge: how many comments mention me unread, linking to the list of them.
// Reloads when a page says mentions may have changed (MENTIONS_EVENT), when the window
// regains focus, and every minute.

import { useEffect, useState } from 'react';
import { mentionsHref } from '../../route';
import { commentsApi } from './commentsApi';
import { MENTIONS_EVENT } from './threads';

const EVERY_MS = 60_000;

export function MentionsBadge() {
  const [unread, setUnread] = useState<number | null>(null);
  useEffect(() => {
    let active = true;
    const load = () => commentsApi.mentions('unread').then((m) => active && setUnread(m.unread), () => undefined);
    load();
    const timer = setInterval(load, EVERY_MS);
    window.addEventListener(MENTIONS_EVENT, load);
    window.addEventListener('focus', load);
    return () => {
      active = false;
      clearInterval(timer);
      window.removeEventListener(MENTIONS_EVENT, load);
      window.removeEventListener('focus', load);
    };
  }, []);
  return (
    <a href={mentionsHref} className="nav-link mentions-link" data-testid="nav-mentions" data-unread={unread ?? 0} title="Comments that mention you">
      Mentions{unread ? <span className="mentions-badge" data-testid="mentions-badge">{unread}</span> : null}
    </a>
  );
}
