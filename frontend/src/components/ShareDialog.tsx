// Share a circuit: visibility, the share link (copy), and revoking the link's token.

import { useEffect, useState } from 'react';
import type { Visibility } from '../api';
import { editorApi, type EditorCircuit, type ShareInfo } from '../api/editor';
import { ErrorText, messagesOf } from './ErrorText';

/** The link to open: the server's share_url (made absolute), else /shared/<token>. */
export function shareLink(info: ShareInfo, origin: string = window.location.origin): string | null {
  if (info.share_url) return new URL(info.share_url, origin).toString();
  if (info.share_token) return `${origin}/shared/${info.share_token}`;
  return null;
}

export function ShareDialog({ circuit, onClose, onChanged }: { circuit: EditorCircuit; onClose: () => void; onChanged: (v: Visibility) => void }) {
  const [info, setInfo] = useState<ShareInfo | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [grantee, setGrantee] = useState('');
  const [canOperate, setCanOperate] = useState(false);
  const [canEdit, setCanEdit] = useState(false);

  useEffect(() => {
    editorApi.share(circuit.id).then(setInfo, (e) => setErrors(messagesOf(e)));
  }, [circuit.id]);

  const run = async (action: () => Promise<ShareInfo>, done: string): Promise<boolean> => {
    setBusy(true);
    setErrors([]);
    try {
      const next = await action();
      setInfo(next);
      onChanged(next.visibility);
      setNote(done);
      return true;
    } catch (e) {
      setErrors(messagesOf(e));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const link = info ? shareLink(info) : null;
  const copy = async () => {
    if (!link) return;
    try {
      await navigator.clipboard.writeText(link);
      setNote('Link copied.');
    } catch {
      setNote('Select the link and copy it (the browser refused the clipboard).');
    }
  };

  return (
    <div className="dialog-backdrop" onClick={onClose}>
      <div className="dialog" role="dialog" aria-label="Share" data-testid="share-dialog" onClick={(e) => e.stopPropagation()}>
        <h2>Share “{circuit.name}”</h2>
        <ErrorText messages={errors} testId="share-error" />
        {!info && errors.length === 0 && <p className="muted">Loading…</p>}
        {info && (
          <>
            <label className="row">
              Visibility
              <select
                data-testid="share-visibility"
                value={info.visibility}
                disabled={busy}
                onChange={(e) => void run(() => editorApi.updateShare(circuit.id, { visibility: e.target.value as Visibility }), 'Visibility changed.')}
              >
                <option value="private">private — only you (and people you grant)</option>
                <option value="unlisted">unlisted — anyone with the link</option>
                <option value="public">public — listed for everyone</option>
              </select>
            </label>
            <div className="row">
              <input type="text" readOnly value={link ?? ''} placeholder="no link" data-testid="share-url" onFocus={(e) => e.target.select()} />
              <button type="button" data-testid="share-copy" onClick={() => void copy()} disabled={!link}>
                Copy link
              </button>
            </div>
            {info.visibility === 'private' && <p className="muted">Private: the link works only for you and people with a grant.</p>}
            <div className="row">
              <button type="button" data-testid="share-revoke" disabled={busy || !info.share_token} onClick={() => void run(() => editorApi.revokeShare(circuit.id), 'Old link revoked; a new one was made.')}>
                Revoke link
              </button>
            </div>
            <h3>People</h3>
            <ul className="grants" data-testid="share-grants">
              {info.grants.map((g) => (
                <li key={g.username} data-testid="share-grant">
                  {g.username} {g.can_edit && <span className="badge" data-testid="share-grant-edit">can edit</span>} {g.can_operate && <span className="badge">can run</span>}
                  {!g.can_edit && !g.can_operate && <span className="muted">can view</span>}{' '}
                  <label className="grant-flag" title="Save versions and edit together (unticking makes their open page a viewer's at once)">
                    <input
                      type="checkbox"
                      checked={g.can_edit ?? false}
                      disabled={busy}
                      data-testid={`share-grant-can-edit-${g.username}`}
                      onChange={(e) => {
                        const can_edit = e.target.checked;
                        void run(
                          () => editorApi.updateShare(circuit.id, { grants: info.grants.map((x) => (x.username === g.username ? { ...x, can_edit } : x)) }),
                          `${g.username} ${can_edit ? 'may edit' : 'may no longer edit'}.`,
                        );
                      }}
                    />{' '}
                    can edit
                  </label>{' '}
                  <button
                    type="button"
                    data-testid={`share-ungrant-${g.username}`}
                    disabled={busy}
                    onClick={() => void run(() => editorApi.updateShare(circuit.id, { grants: info.grants.filter((x) => x.username !== g.username) }), `${g.username} removed.`)}
                  >
                    Remove
                  </button>
                </li>
              ))}
              {info.grants.length === 0 && <li className="muted">Nobody yet.</li>}
            </ul>
            <form
              className="row"
              onSubmit={(e) => {
                e.preventDefault();
                const name = grantee.trim();
                if (!name) return;
                void run(
                  () => editorApi.updateShare(circuit.id, { grants: [...info.grants.filter((x) => x.username !== name), { username: name, can_operate: canOperate, can_edit: canEdit }] }),
                  `Shared with ${name}.`,
                ).then((ok) => ok && setGrantee(''));
              }}
            >
              <input type="text" placeholder="username" value={grantee} onChange={(e) => setGrantee(e.target.value)} data-testid="share-grantee" />
              <label className="field-row">
                <input type="checkbox" checked={canOperate} onChange={(e) => setCanOperate(e.target.checked)} data-testid="share-can-operate" /> can run
              </label>
              <label className="field-row" title="Save versions and edit the circuit together with you (not rename, share or delete)">
                <input type="checkbox" checked={canEdit} onChange={(e) => setCanEdit(e.target.checked)} data-testid="share-can-edit" /> can edit
              </label>
              <button type="submit" data-testid="share-grant-add" disabled={busy || !grantee.trim()}>
                Share
              </button>
            </form>
          </>
        )}
        {note && (
          <p className="muted" data-testid="share-note">
            {note}
          </p>
        )}
        <button type="button" data-testid="share-close" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}
