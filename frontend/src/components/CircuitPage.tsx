// A circuit: the editor (owner) or a read-only view, with save/rename/history,
// import/export, the compiled plan, sharing, forking and its runs.

import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState, type ChangeEvent } from 'react';
import { api, type Circuit, type CircuitVersion, type Run } from '../api';
import { editorApi, versionList, type EditorCircuit, type VersionDiff } from '../api/editor';
import { CircuitEditor } from '../editor/CircuitEditor';
import { emptyDocument, parseClipboard, type Doc } from '../editor/model';
import { useDocumentHistory } from '../editor/useDocumentHistory';
import { Avatars } from '../collab/Presence';
import { useSharedDocument } from '../collab/useSharedDocument';
import { useCommentsPane } from '../collab/comments/CommentsPane';
import { formatTime } from '../format';
import { setLeaveGuard } from '../leaveGuard';
import { circuitHref, navigate, runHref } from '../route';
import { ErrorText, messagesOf } from './ErrorText';
import { SourcePane, sourceOf } from '../sources/SourcePane';
import { RunsTable } from './RunsTable';
import { ShareDialog } from './ShareDialog';
import { VersionDiffView } from './VersionDiffView';

// The compiled plan's canvas is a chunk of its own, loaded when the plan is first shown.
const PlanPane = lazy(() => import('./PlanPane').then((m) => ({ default: m.PlanPane })));

interface Props {
  /** null: a new, unsaved circuit. */
  circuitId: number | null;
  username: string | null;
  /** A comment thread to open (a mention's link). */
  thread?: number;
}

export function CircuitPage({ circuitId, username, thread }: Props) {
  const [circuit, setCircuit] = useState<EditorCircuit | null>(null);
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);

  useEffect(() => {
    if (circuitId === null) return;
    let active = true;
    Promise.all([api.getCircuit(circuitId), api.listRuns(circuitId)]).then(
      ([c, r]) => {
        if (!active) return;
        setCircuit(c);
        setRuns(r);
      },
      (error) => active && setErrors(messagesOf(error)),
    );
    return () => {
      active = false;
    };
  }, [circuitId]);

  if (errors.length) return <ErrorText messages={errors} />;
  if (circuitId !== null && !circuit) return <p className="muted">Loading…</p>;
  return (
    <CircuitWorkspace
      circuit={circuit}
      username={username}
      thread={thread}
      runs={runs ?? []}
      readOnly={circuit !== null && !circuit.can_edit}
      signedIn={username !== null}
      onCircuit={setCircuit}
      onRunStopped={(run) => setRuns((rs) => (rs ?? []).map((r) => (r.id === run.id ? run : r)))}
    />
  );
}

export function downloadJson(filename: string, value: unknown): void {
  const blob = new Blob([JSON.stringify(value, null, 2)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const fileName = (name: string) => `${name.trim().replace(/[^A-Za-z0-9_-]+/g, '_') || 'circuit'}.circuit.json`;

export function CircuitWorkspace({
  circuit,
  runs,
  readOnly: readOnlyAtLoad,
  signedIn,
  onCircuit,
  onRunStopped,
  shareToken,
  username = null,
  thread,
}: {
  username?: string | null;
  thread?: number;
  circuit: EditorCircuit | null;
  runs: Run[];
  readOnly: boolean;
  signedIn: boolean;
  onCircuit: (c: EditorCircuit) => void;
  onRunStopped?: (run: Run) => void;
  shareToken?: string;
}) {
  const initial = useMemo<Doc>(() => (circuit?.latest_version?.document as Doc | undefined) ?? emptyDocument(), [circuit?.latest_version]);
  // Until the shared document arrives (and where there is none: a new circuit), the
  // saved version is edited here; those edits join the shared document when it comes.
  const local = useDocumentHistory(initial);
  const shared = useSharedDocument(circuit?.id ?? null, {
    name: username ?? '',
    share: shareToken,
    saved: initial,
    pending: () => (readOnly || !local.isDirty() ? null : { from: initial, to: local.doc }),
    writable: !readOnlyAtLoad,
    store: circuit && username ? `${circuit.created_at}.${username}` : undefined,
  });
  // The shared document's socket says what this page may do now (the owner may have
  // changed the grant since the page loaded); until it has, the circuit's `can_edit` does.
  const viewing = shared.role ? shared.role === 'viewer' : readOnlyAtLoad;
  const readOnly = viewing || shared.settling; // (settling: a fresh copy after a change of role is on its way)
  const state = shared.state ?? local;
  const [name, setName] = useState(circuit?.name ?? 'Untitled circuit');
  const [renaming, setRenaming] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [showPlan, setShowPlan] = useState(false);
  const [showSource, setShowSource] = useState(() => sourceOf(initial) !== null);
  const [selectedIds, setSelectedIds] = useState<string[]>([]);
  const { setSelection } = shared;
  useEffect(() => setSelection(selectedIds), [selectedIds, setSelection]);
  // Whose canvas view this page follows (clicking their avatar); gone when they leave.
  const [following, setFollowing] = useState<number | null>(null);
  const followed = shared.peers.find((p) => p.clientId === following) ?? null;
  const stopFollowing = useCallback(() => setFollowing(null), []);
  const [selectNodes, setSelectNodes] = useState<{ ids: string[] } | undefined>(undefined);
  const [compiles, setCompiles] = useState(0);
  const [showComments, setShowComments] = useState(false);
  const comments = useCommentsPane({
    circuitId: circuit?.id ?? null, me: username, share: shareToken, doc: state.doc, canComment: !!circuit?.can_comment && username !== null,
    canEdit: !viewing && !!circuit?.can_edit, selectedIds, thread, onSelectNode: (id) => setSelectNodes({ ids: [id] }),
    open: showComments && !showPlan && !showSource,
    setOpen: (open) => { setShowComments(open); if (open) { setShowPlan(false); setShowSource(false); } },
  });
  const [showHistory, setShowHistory] = useState(false);
  const [sharing, setSharing] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const version = circuit?.latest_version ?? null;
  // Rename, share and delete stay the owner's; a `can_edit` grantee saves and co-edits.
  const owns = !readOnly && (circuit === null || circuit.is_owner);

  const fail = (error: unknown) => {
    setProblems(messagesOf(error));
    setStatus(null);
  };

  const [message, setMessage] = useState('');
  // The document on screen now (a save's answer may come after further edits).
  const onScreen = useRef(state.doc);
  onScreen.current = state.doc;
  const save = useCallback(async (messageOverride?: string): Promise<boolean> => {
    setBusy('save');
    setProblems([]);
    const sent = state.doc;
    try {
      if (!circuit) {
        const created = await editorApi.createCircuit(name.trim() || 'Untitled circuit', state.doc);
        state.markSaved();
        navigate(circuitHref(created.id));
        return true;
      }
      const saved = await editorApi.saveVersion(circuit.id, sent, (messageOverride ?? message).trim());
      state.markSaved(sent);
      setMessage('');
      onCircuit({ ...circuit, latest_version: saved as CircuitVersion });
      setStatus(`Saved version ${saved.number}.`);
      return true;
    } catch (error) {
      if (onScreen.current !== sent) {
        // Its problems were those of the document as it was: edited since, they are
        // stale (the editor checks the document on screen). Say only that it was not saved.
        setProblems([]);
        setStatus('Version not saved: the document as it was when you pressed Save was refused; it has changed since. Save again.');
      } else {
        fail(error);
      }
      return false;
    } finally {
      setBusy(null);
    }
  }, [circuit, name, state, onCircuit, message]);

  const rename = async () => {
    if (!circuit) return setRenaming(false);
    setBusy('rename');
    try {
      const updated = await editorApi.renameCircuit(circuit.id, name.trim());
      onCircuit({ ...circuit, name: updated.name });
      shared.setTitle(updated.name); // the others see it at once
      setRenaming(false);
      setStatus(`Renamed to ${updated.name}.`);
      setProblems([]);
    } catch (error) {
      fail(error);
    } finally {
      setBusy(null);
    }
  };

  // Leaving with unsaved changes asks first (links, back, reload, closing the tab).
  const { isDirty } = state;
  useEffect(() => {
    setLeaveGuard(() => (isDirty() ? 'This circuit has unsaved changes. Leave and lose them?' : null));
    return () => setLeaveGuard(null);
  }, [isDirty]);

  // A save's errors were about the document as it was: an edit makes them stale.
  useEffect(() => {
    setProblems([]);
  }, [state.doc]);

  const startRun = async () => {
    if (!circuit) return;
    if (state.dirty) {
      // Never saved silently: the run is of a version the user chose to save.
      const next = (version?.number ?? 0) + 1;
      const said = window.prompt(
        `Your changes are not saved. Save them as version ${next} and start a run of it? What changed (optional):`,
        message,
      );
      if (said === null) return;
      if (!(await save(said))) return;
    }
    setBusy('start');
    try {
      const run = await api.startRun(circuit.id);
      navigate(runHref(run.id));
    } catch (error) {
      fail(error);
      setBusy(null);
    }
  };

  const remove = async () => {
    if (!circuit) return;
    if (!window.confirm(`Delete "${circuit.name}" with all its versions and runs? This cannot be undone.`)) return;
    setBusy('delete');
    try {
      await api.deleteCircuit(circuit.id);
      state.markSaved(); // nothing left to lose
      navigate('#/');
    } catch (error) {
      fail(error);
      setBusy(null);
    }
  };

  const fork = async () => {
    if (!circuit) return;
    setBusy('fork');
    try {
      const forked = await editorApi.fork(circuit.id, shareToken);
      navigate(circuitHref(forked.id));
    } catch (error) {
      fail(error);
      setBusy(null);
    }
  };

  const importFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    try {
      const text = await file.text();
      const doc = parseClipboard(text);
      if (!doc) throw new Error(`${file.name} is not a dbspweb circuit document (expected "format": "dbspweb.circuit" and "nodes").`);
      state.load(doc);
      setStatus(`Imported ${file.name} (${doc.nodes.length} nodes). Save to keep it.`);
      setProblems([]);
    } catch (error) {
      fail(error);
    }
  };

  return (
    <section className="circuit-page">
      <p className="breadcrumb">
        <a href="#/">Circuits</a> /
      </p>
      <div className="page-head">
        <div>
          {renaming || !circuit ? (
            <div className="field-row">
              <input
                type="text"
                aria-label="Circuit name"
                data-testid="circuit-name-input"
                value={name}
                autoFocus={renaming}
                onChange={(e) => setName(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' && circuit) void rename();
                }}
              />
              {circuit && (
                <button type="button" data-testid="rename-save" onClick={() => void rename()} disabled={busy !== null}>
                  Rename
                </button>
              )}
            </div>
          ) : (
            <div className="field-row">
              <h1 data-testid="circuit-name">{shared.title ?? circuit.name}</h1>
              {owns && (
                <button type="button" className="inline-link" data-testid="rename" onClick={() => setRenaming(true)}>
                  rename
                </button>
              )}
            </div>
          )}
          {circuit && (
            <p className="meta">
              {circuit.owner} · <span className={`badge visibility-${circuit.visibility}`}>{circuit.visibility}</span>
              {version && ` · version ${version.number} saved ${formatTime(version.created_at)}`}
              {state.dirty && <span data-testid="unsaved"> · unsaved changes</span>}
            </p>
          )}
          {circuit?.description && (
            <details className="circuit-description" data-testid="circuit-page-description">
              <summary>About this circuit</summary>
              <p>{circuit.description}</p>
            </details>
          )}
          {shared.state && <Avatars peers={shared.peers} me={shared.me} following={followed?.clientId ?? null} onFollow={setFollowing} />}
          {followed && (
            <p className="follow-banner" data-testid="following" role="status" style={{ borderColor: followed.color }}>
              Following {followed.name || 'anonymous'}’s view. Move the canvas yourself to stop.
            </p>
          )}
          {viewing && (
            <p className="readonly-banner" data-testid="read-only">
              {readOnlyAtLoad
                ? `Read-only${circuit ? ` (owned by ${circuit.owner})` : ''}.`
                : `Read-only now: ${circuit?.owner ?? 'the owner'} took away your edit access to this circuit.`}{' '}
              Fork it to edit your own copy.
            </p>
          )}
          {!viewing && readOnlyAtLoad && (
            <p className="role-banner" data-testid="role-notice" role="status">
              You may edit this circuit now: {circuit?.owner} gave you edit access.
            </p>
          )}
          {shared.offline && (
            <p className="offline-banner" data-testid="offline" role="status">
              Offline{readOnly ? '.' : ': your edits are kept on this device and merge with everyone else’s when you are back online.'}
            </p>
          )}
        </div>
        <div className="actions">
          {!readOnly && (
            <input
              type="text"
              className="version-message"
              aria-label="Version message"
              placeholder="What changed? (optional)"
              maxLength={500}
              data-testid="version-message"
              value={message}
              onChange={(e) => setMessage(e.target.value)}
              hidden={!circuit}
            />
          )}
          {!readOnly && (
            <button type="button" className="primary" data-testid="save-version" onClick={() => void save()} disabled={busy !== null}>
              {busy === 'save' ? 'Saving…' : circuit ? 'Save version' : 'Save circuit'}
            </button>
          )}
          {!readOnly && circuit?.can_operate && (
            <button type="button" className="primary" data-testid="start-run" onClick={() => void startRun()} disabled={busy !== null || !version}>
              {busy === 'start' ? 'Starting…' : 'Start run'}
            </button>
          )}
          {readOnly && circuit && (
            <button type="button" className="primary" data-testid="fork" onClick={() => void fork()} disabled={busy !== null || !signedIn} title={signedIn ? 'Copy into your circuits' : 'Sign in to fork'}>
              {busy === 'fork' ? 'Forking…' : 'Fork'}
            </button>
          )}
          <button type="button" data-testid="export-json" onClick={() => downloadJson(fileName(circuit?.name ?? name), state.doc)}>
            Export JSON
          </button>
          {!readOnly && (
            <>
              <button type="button" data-testid="import-json" onClick={() => fileInput.current?.click()}>
                Import JSON
              </button>
              <input ref={fileInput} type="file" accept=".json,application/json" hidden data-testid="import-file" onChange={(e) => void importFile(e)} />
            </>
          )}
          <button type="button" data-testid="toggle-plan" aria-pressed={showPlan} onClick={() => { setShowPlan((s) => !s); setShowSource(false); setShowComments(false); }}>
            {showPlan ? 'Hide plan' : 'Compiled plan'}
          </button>
          <button type="button" data-testid="toggle-source" aria-pressed={showSource} onClick={() => { setShowSource((s) => !s); setShowPlan(false); setShowComments(false); }}>
            {showSource ? 'Hide SQL / Datalog' : 'SQL / Datalog'}
          </button>
          {comments.actions}
          {circuit && (
            <button type="button" data-testid="toggle-history" aria-pressed={showHistory} onClick={() => setShowHistory((s) => !s)}>
              History
            </button>
          )}
          {owns && circuit && (
            <button type="button" data-testid="share" onClick={() => setSharing(true)}>
              Share
            </button>
          )}
          {owns && circuit && (
            <button type="button" className="danger" data-testid="delete-circuit" onClick={() => void remove()} disabled={busy !== null}>
              {busy === 'delete' ? 'Deleting…' : 'Delete'}
            </button>
          )}
        </div>
      </div>
      {status && (
        <p className="muted" data-testid="save-status" role="status">
          {status}
        </p>
      )}
      <ErrorText messages={problems} testId="save-error" />

      {/* The compiled plan sits beside the circuit; the editor keeps its place in the tree
          (first child) so toggling the plan does not remount it. */}
      <div className={`circuit-split ${showPlan ? 'with-plan' : ''} ${showSource ? 'with-source' : ''} ${comments.panel ? 'with-comments' : ''}`} data-testid="circuit-split">
        <div className="circuit-split-editor">
          <CircuitEditor
            state={state}
            readOnly={readOnly}
            refitOn={`${showPlan}${showSource}${compiles}`}
            selectNodes={selectNodes}
            onSelectionChange={setSelectedIds}
            presence={shared.state ? { ...shared, followed, stopFollowing } : undefined}
            overlay={comments.overlay}
          />
        </div>
        {showPlan && (
          <Suspense fallback={<p className="muted">Loading the plan…</p>}>
            <PlanPane doc={state.doc} />
          </Suspense>
        )}
        {comments.panel}
        {showSource && <SourcePane state={state} readOnly={readOnly} sharedText={shared.state ? shared.sourceText : null} carets={shared.sourceCarets} onCaret={shared.setSourceCaret} selected={selectedIds} onSelect={(ids) => setSelectNodes({ ids })} onCompiled={() => setCompiles((n) => n + 1)} />}
      </div>
      {showHistory && circuit && (
        <VersionHistory
          circuit={circuit}
          readOnly={readOnly}
          onLoad={(doc, n) => {
            state.load(doc);
            setStatus(`Loaded version ${n} into the editor (not saved).`);
          }}
          onRestored={(v) => {
            state.reset(v.document as Doc);
            onCircuit({ ...circuit, latest_version: v });
            setStatus(`Restored as version ${v.number}.`);
          }}
        />
      )}
      {circuit && !shareToken && (
        <div className="card">
          <h2>Runs</h2>
          {runs.length === 0 ? (
            <p className="muted">No runs yet.</p>
          ) : (
            <RunsTable runs={runs} testId="circuit-runs" canStop={() => !readOnly} onStopped={onRunStopped} />
          )}
        </div>
      )}
      {sharing && circuit && <ShareDialog circuit={circuit} onClose={() => setSharing(false)} onChanged={(visibility) => onCircuit({ ...circuit, visibility })} />}
    </section>
  );
}

function VersionHistory({ circuit, readOnly, onLoad, onRestored }: {
  circuit: Circuit;
  readOnly: boolean;
  onLoad: (doc: Doc, n: number) => void;
  onRestored: (v: CircuitVersion) => void;
}) {
  const [versions, setVersions] = useState<CircuitVersion[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const latest = circuit.latest_version?.number;
  useEffect(() => {
    let active = true;
    editorApi.versions(circuit.id).then(
      (body) => active && setVersions(versionList(body)),
      (error) => active && setErrors(messagesOf(error)),
    );
    return () => {
      active = false;
    };
  }, [circuit.id, latest]);
  // Someone editing with you may have saved a version this page has not been told of: the
  // list fetched when the panel opened knows it.
  const newest = Math.max(latest ?? 0, ...(versions ?? []).map((v) => v.number)) || undefined;

  const [diff, setDiff] = useState<VersionDiff | null>(null);
  const compare = async (a: number, b: number) => {
    try {
      setDiff(await editorApi.diff(circuit.id, a, b));
    } catch (error) {
      setErrors(messagesOf(error));
    }
  };

  const restore = async (v: CircuitVersion) => {
    try {
      const doc = v.document ?? (await editorApi.version(circuit.id, v.number)).document;
      onRestored(await editorApi.saveVersion(circuit.id, doc as Doc));
    } catch (error) {
      setErrors(messagesOf(error));
    }
  };

  // Opened from the toolbar at the top: bring it into view rather than below the canvas.
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  }, []);

  return (
    <div className="card" data-testid="version-history" ref={box}>
      <h2>Version history</h2>
      <ErrorText messages={errors} />
      {versions === null && errors.length === 0 && <p className="muted">Loading…</p>}
      <ul className="versions">
        {(versions ?? []).map((v) => (
          <li key={v.number} data-testid="version-item" data-version={v.number}>
            <b>v{v.number}</b> <span className="muted">{formatTime(v.created_at)}</span> · {v.document?.nodes?.length ?? '?'} nodes
            {v.message && (
              <span className="version-note" data-testid={`version-message-${v.number}`}>
                {' '}
                — {v.message}
              </span>
            )}
            {v.number === newest && <span className="badge">latest</span>}
            <button type="button" data-testid={`version-load-${v.number}`} onClick={() => v.document && onLoad(v.document as Doc, v.number)}>
              View in editor
            </button>
            {v.number !== newest && newest !== undefined && (
              <button type="button" data-testid={`version-diff-${v.number}`} onClick={() => void compare(v.number, newest)}>
                Diff vs latest
              </button>
            )}
            {!readOnly && v.number !== newest && (
              <button type="button" data-testid={`version-restore-${v.number}`} onClick={() => void restore(v)}>
                Restore
              </button>
            )}
          </li>
        ))}
      </ul>
      {diff && <VersionDiffView diff={diff} />}
    </div>
  );
}

