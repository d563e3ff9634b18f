// The SQL and Datalog panes beside the canvas: compile the text to a circuit (laid out
// by elkjs) that replaces the edited one (one undo step), then link both ways — the
// selected nodes' source is highlighted, and the cursor or a selection in the text
// selects the nodes it came from. Problems are marked at their line:column. "Export SQL"
// writes the edited circuit as SQL, or names the node SQL cannot express.
// The text is kept in the document's `metadata.source`, so a saved version shows it again.
// In a shared document the pane's text (of the document's source language, else SQL) is
// bound to the document's `source` text as it is typed (collab/textBinding.ts): two
// people typing at once merge character by character.

import { useEffect, useMemo, useRef, useState, type UIEvent } from 'react';
import { sourcesApi, type Compiled } from '../api/sources';
import { SourceCarets, type TextCaret } from '../collab/SourceCarets';
import { useSharedText, type SharedText } from '../collab/textBinding';
import { messagesOf } from '../components/ErrorText';
import { autoLayout } from '../editor/layout';
import type { Doc } from '../editor/model';
import type { DocumentHistory } from '../editor/useDocumentHistory';
import { nodeRanges, nodesAt, problemRange, segments, type Language, type Range, type SourceProblem } from './spans';
import './sources.css';

export interface SourceMetadata {
  language: Language;
  text: string;
}

/** The source a document was compiled from (its `metadata.source`), if any. */
export function sourceOf(doc: Doc): SourceMetadata | null {
  const meta = doc.metadata as { source?: SourceMetadata } | undefined;
  const source = meta?.source;
  return source && (source.language === 'sql' || source.language === 'datalog') && typeof source.text === 'string' ? source : null;
}

const LABEL: Record<Language, string> = { sql: 'SQL', datalog: 'Datalog' };
const PLACEHOLDER: Record<Language, string> = {
  sql: 'CREATE TABLE t (a BIGINT NOT NULL, b BIGINT);\nCREATE VIEW big AS SELECT a, b FROM t WHERE b > 10;',
  datalog: '.decl edge(src: number, dst: number)\npath(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n.output path',
};

export interface SourcePaneProps {
  state: DocumentHistory;
  readOnly?: boolean;
  /** The nodes selected in the editor. */
  selected: string[];
  /** Select these nodes in the editor. */
  onSelect: (ids: string[]) => void;
  /** Told when a compile replaced the circuit (e.g. to zoom it to fit). */
  onCompiled?: () => void;
  /** The shared document's source text: the pane's text is bound to it as it is typed. */
  sharedText?: SharedText | null;
  /** The others' carets and selections in the bound text. */
  carets?: TextCaret[];
  /** Tells the others where this caret and selection are in the bound text (null: elsewhere). */
  onCaret?: (at: { anchor: number; head: number } | null) => void;
}

export function SourcePane({ state, readOnly = false, selected, onSelect, onCompiled, sharedText = null, carets = [], onCaret }: SourcePaneProps) {
  const linked = sourceOf(state.doc);
  const [language, setLanguage] = useState<Language>(linked?.language ?? 'sql');
  const [texts, setTexts] = useState<Record<Language, string>>(() => ({
    sql: linked?.language === 'sql' ? linked.text : '',
    datalog: linked?.language === 'datalog' ? linked.text : '',
  }));
  const [problems, setProblems] = useState<SourceProblem[]>([]);
  const [problemsOf, setProblemsOf] = useState<string | null>(null);
  const [notice, setNotice] = useState<{ text: string; bad: boolean } | null>(null);
  const [busy, setBusy] = useState<'compile' | 'export' | null>(null);
  const [exported, setExported] = useState<string | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const backdrop = useRef<HTMLPreElement>(null);
  const bound = useSharedText(sharedText, area);
  const isBound = sharedText !== null && language === (linked?.language ?? 'sql');
  const text = isBound ? bound.value : texts[language];
  // Bound, the document's source text is the live text: links need the text compiled.
  const [compiledText, setCompiledText] = useState<string | null>(() => linked?.text ?? null);

  // Links hold while the text is the one the edited circuit was compiled from.
  const isLinked = !!linked && linked.language === language && linked.text === text && (!isBound || compiledText === text);
  const ranges = useMemo(() => (isLinked ? nodeRanges(state.doc, text) : []), [isLinked, state.doc, text]);
  const shownProblems = problemsOf === text ? problems : [];
  const marks = useMemo(() => {
    const byId = new Map(ranges.map((r) => [r.id, r.range]));
    const out: { range: Range; kind: string }[] = [];
    for (const id of selected) {
      const range = byId.get(id);
      if (range) out.push({ range, kind: 'linked' });
    }
    for (const p of shownProblems) {
      const range = problemRange(text, p);
      if (range) out.push({ range, kind: 'problem' });
    }
    return out;
  }, [ranges, selected, shownProblems, text]);

  const setText = (value: string, caret?: number) => {
    if (isBound) bound.set(value, caret);
    else setTexts((t) => ({ ...t, [language]: value }));
  };

  const compile = async () => {
    setBusy('compile');
    setNotice(null);
    try {
      const result: Compiled = language === 'sql' ? await sourcesApi.compileSql(text) : await sourcesApi.compileDatalog(text);
      setProblems(result.errors);
      setProblemsOf(text);
      if (!result.document) {
        setNotice({ text: `${result.errors.length} problem(s): nothing compiled.`, bad: true });
        return;
      }
      const laid = await autoLayout(result.document);
      let doc: Doc = laid;
      state.apply((now) => {
        // Bound, the live text stays as it is now (typed meanwhile, by anyone); it is linked while it is `text`.
        const live = sourceOf(now);
        const source = isBound && live?.language === language ? live : { language, text };
        doc = { ...laid, metadata: { ...((now.metadata as object) ?? {}), source } };
        return doc;
      });
      setCompiledText(text);
      onCompiled?.();
      const count = countNodes(doc.nodes);
      setNotice({ text: `Compiled to ${count} node(s)${result.valid ? '' : `, ${result.errors.length} problem(s)`}. Save to keep it as a version.`, bad: !result.valid });
    } catch (err) {
      setNotice({ text: messagesOf(err).join(' '), bad: true });
    } finally {
      setBusy(null);
    }
  };

  const exportSql = async () => {
    setBusy('export');
    setNotice(null);
    setExported(null);
    try {
      const result = await sourcesApi.exportSql(state.doc);
      if (result.sql === null) {
        const nodes = result.errors.map((e) => e.node).filter((n): n is string => !!n);
        if (nodes.length) onSelect(nodes);
        setNotice({ text: `SQL cannot express this circuit: ${result.errors.map((e) => e.message).join('; ')}`, bad: true });
      } else {
        setExported(result.sql);
      }
    } catch (err) {
      setNotice({ text: messagesOf(err).join(' '), bad: true });
    } finally {
      setBusy(null);
    }
  };

  // The cursor or a selection in the text selects the nodes it came from.
  const lastPointed = useRef('');
  const pointAt = () => {
    const el = area.current;
    if (el && isBound && onCaret) {
      const backward = el.selectionDirection === 'backward';
      onCaret({ anchor: backward ? el.selectionEnd : el.selectionStart, head: backward ? el.selectionStart : el.selectionEnd });
    }
    if (!el || !isLinked) return;
    const ids = nodesAt(ranges, { from: el.selectionStart, to: el.selectionEnd });
    const key = ids.join('\n');
    if (ids.length && key !== lastPointed.current) onSelect(ids);
    lastPointed.current = key;
  };

  // Scroll the first highlighted node's text into view when the editor's selection changes.
  useEffect(() => {
    const first = backdrop.current?.querySelector('mark.linked') as HTMLElement | null;
    if (!first || !area.current || document.activeElement === area.current) return;
    const top = first.offsetTop - area.current.clientHeight / 3;
    if (first.offsetTop < area.current.scrollTop || first.offsetTop > area.current.scrollTop + area.current.clientHeight - 20) {
      area.current.scrollTop = Math.max(0, top);
    }
  }, [selected, marks]);

  const caretLayer = useRef<HTMLPreElement>(null);
  const syncScroll = (event: UIEvent<HTMLTextAreaElement>) => {
    for (const layer of [backdrop.current, caretLayer.current]) {
      if (!layer) continue;
      layer.scrollTop = event.currentTarget.scrollTop;
      layer.scrollLeft = event.currentTarget.scrollLeft;
    }
  };
  useEffect(() => {
    for (const layer of [backdrop.current, caretLayer.current]) if (layer && area.current) layer.scrollTop = area.current.scrollTop;
  });
  // Out of the bound text (the other language's tab): the others no longer see a caret.
  useEffect(() => {
    if (!isBound) onCaret?.(null);
  }, [isBound, onCaret]);

  const goTo = (p: SourceProblem) => {
    const range = problemRange(text, p);
    const el = area.current;
    if (!range || !el) return;
    el.focus();
    el.setSelectionRange(range.from, range.to);
  };

  return (
    <section className="source-pane card" data-testid="source-pane" data-language={language}>
      <div className="source-tabs" role="tablist">
        {(['sql', 'datalog'] as Language[]).map((l) => (
          <button key={l} type="button" role="tab" aria-selected={language === l} data-testid={`source-tab-${l}`} onClick={() => setLanguage(l)}>
            {LABEL[l]}
          </button>
        ))}
      </div>
      <div className="source-editor">
        <pre className="source-backdrop" ref={backdrop} aria-hidden="true" data-testid="source-highlights">
          {segments(text, marks).map((s, i) =>
            s.kinds.length ? (
              <mark key={i} className={s.kinds.join(' ')} data-testid={s.kinds.includes('problem') ? 'source-problem-mark' : 'source-linked-mark'}>
                {s.text}
              </mark>
            ) : (
              <span key={i}>{s.text}</span>
            ),
          )}
          {'\n'}
        </pre>
        <textarea
          ref={area}
          className="source-text"
          data-testid="source-text"
          aria-label={`${LABEL[language]} text`}
          spellCheck={false}
          value={text}
          placeholder={PLACEHOLDER[language]}
          readOnly={readOnly && isBound}
          onChange={(e) => setText(e.target.value, e.target.selectionEnd)}
          onSelect={pointAt}
          onScroll={syncScroll}
        />
        {/* Above the text (its own text transparent), so a name label is not hidden under it. */}
        {isBound && carets.length > 0 && <SourceCarets ref={caretLayer} text={text} carets={carets} />}
      </div>
      <div className="source-actions">
        <button type="button" className="primary" data-testid="source-compile" onClick={() => void compile()} disabled={readOnly || busy !== null || !text.trim()}
          title={readOnly ? 'Fork the circuit to edit it' : `Compile the ${LABEL[language]} into the circuit (replaces it; Undo brings it back)`}>
          {busy === 'compile' ? 'Compiling…' : `Compile ${LABEL[language]}`}
        </button>
        {language === 'sql' && (
          <button type="button" data-testid="export-sql" onClick={() => void exportSql()} disabled={busy !== null} title="Write the circuit as SQL views">
            {busy === 'export' ? 'Exporting…' : 'Export SQL'}
          </button>
        )}
        <span className="muted" data-testid="source-link-state">
          {isLinked ? 'linked: select a node or put the cursor in the text' : linked && (!isBound || compiledText !== null) ? 'edited since the compile: compile again to link' : ''}
        </span>
      </div>
      {notice && (
        <p className={notice.bad ? 'field-error' : 'muted'} data-testid="source-notice" role="status">
          {notice.text}
        </p>
      )}
      {shownProblems.length > 0 && (
        <ul className="problems source-problems" data-testid="source-problems">
          {shownProblems.map((p, i) => (
            <li key={i}>
              <button type="button" className="linklike" data-testid="source-problem" onClick={() => goTo(p)}>
                {p.line !== undefined ? `${p.line}:${p.column ?? 1}` : ''}
                {p.node ? ` ${p.node}` : ''}
              </button>{' '}
              {p.message}
            </li>
          ))}
        </ul>
      )}
      {exported !== null && (
        <div className="exported-sql" data-testid="exported-sql">
          <div className="source-actions">
            <strong>The circuit as SQL</strong>
            <button type="button" data-testid="exported-sql-use" onClick={() => {
              if (isBound && language === 'sql') bound.set(exported);
              else setTexts((t) => ({ ...t, sql: exported }));
              setExported(null);
            }}>
              Put in the SQL pane
            </button>
            <button type="button" onClick={() => void navigator.clipboard?.writeText(exported).catch(() => undefined)}>
              Copy
            </button>
          </div>
          <pre>{exported}</pre>
        </div>
      )}
    </section>
  );
}

function countNodes(nodes: Doc['nodes']): number {
  return nodes.reduce((n, node) => n + 1 + (node.subcircuit ? countNodes(node.subcircuit.nodes) : 0), 0);
}
