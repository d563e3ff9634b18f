import { useEffect, useState } from 'react';
import { ErrorText, messagesOf } from '../components/ErrorText';
import { formatRow, formatTime, formatWeight } from '../format';
import { briefOf, explainApi, pushesOf, type Explanation, type ExplainTarget, type InputRowRef, type Step } from './explainApi';
import { StepTree } from './StepTree';
import './explain.css';

interface Props {
  runId: number;
  target: ExplainTarget;
  onClose: () => void;
}

function causeText(cause: InputRowRef): string {
  const pushes = cause.pushes.map((p) => `push #${p.sequence}${p.user ? ` by ${p.user}` : ''}`).join(', ');
  return `${cause.input} ${formatRow(cause.row)} ${cause.before} → ${cause.after}${pushes ? ` (${pushes})` : ''}`;
}

function Brief({ step }: { step: Step }) {
  const lines = briefOf(step);
  if (lines.length === 0) return null;
  return (
    <ol className="explain-brief" data-testid="explain-brief">
      {lines.map((line) => (
        <li key={line.id}>{line.text}</li>
      ))}
    </ol>
  );
}

/** Why a row is in a view at a tick, and why it changed then: the derivation operator by
 * operator (pairs, groups, iterations), down to the input rows and their pushes. */
export function ExplainPanel({ runId, target: first, onClose }: Props) {
  const [targets, setTargets] = useState<ExplainTarget[]>([first]);
  const [explanation, setExplanation] = useState<Explanation | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const target = targets[targets.length - 1]!;

  useEffect(() => setTargets([first]), [first]);

  useEffect(() => {
    let active = true;
    setExplanation(null);
    setErrors([]);
    explainApi.explain(runId, target).then(
      (e) => active && setExplanation(e),
      (error) => active && setErrors(messagesOf(error)),
    );
    return () => {
      active = false;
    };
  }, [runId, target]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const open = (next: ExplainTarget) => setTargets((t) => [...t, next]);
  const name = target.view ?? target.node ?? '';
  const pushes = explanation ? pushesOf(explanation) : [];

  return (
    <aside className="explain-panel" data-testid="explain-panel" aria-label="Explain a row">
      <div className="explain-head">
        <h2>Explain</h2>
        {targets.length > 1 && (
          <button type="button" onClick={() => setTargets((t) => t.slice(0, -1))}>
            ‹ Back
          </button>
        )}
        <button type="button" className="explain-close" onClick={onClose} aria-label="Close">
          ×
        </button>
      </div>
      <p className="explain-target" data-testid="explain-target">
        <code>{name}</code> {formatRow(target.row)} at tick {target.tick}
      </p>
      <ErrorText messages={errors} testId="explain-error" />
      {!explanation && errors.length === 0 && <p className="muted">Working it out…</p>}
      {explanation && (
        <>
          <p className="explain-summary" data-testid="explain-summary">
            Weight {explanation.weight} at tick {explanation.tick}
            {explanation.before !== explanation.weight ? ` (was ${explanation.before} before it)` : ' (unchanged at this tick)'}.
          </p>
          {explanation.truncated && (
            <p className="warning">The derivation is long: rows marked “not followed” can be explained on their own.</p>
          )}
          {explanation.change && (
            <section className="explain-section" data-testid="explain-change">
              <h3>Why it changed at tick {explanation.tick}</h3>
              {explanation.causes.length > 0 && (
                <div className="explain-causes" data-testid="explain-causes">
                  Caused by this tick’s input change{explanation.causes.length > 1 ? 's' : ''}:
                  <ul>
                    {explanation.causes.map((c, i) => (
                      <li key={i} className={(c.after ?? 0) > (c.before ?? 0) ? 'plus' : 'minus'} data-testid="explain-cause">
                        {causeText(c)}
                      </li>
                    ))}
                  </ul>
                </div>
              )}
              <Brief step={explanation.change} />
              <StepTree step={explanation.change} runId={runId} onOpen={open} />
            </section>
          )}
          {explanation.contents && (
            <section className="explain-section" data-testid="explain-contents">
              <h3>Why it is there at tick {explanation.tick}</h3>
              <Brief step={explanation.contents} />
              <StepTree step={explanation.contents} runId={runId} onOpen={open} />
            </section>
          )}
          <section className="explain-section">
            <h3>Pushes</h3>
            {pushes.length === 0 ? (
              <p className="muted">No pushes (the derivation reaches no input row).</p>
            ) : (
              <table className="explain-push-table" data-testid="explain-pushes">
                <thead>
                  <tr>
                    <th>push</th>
                    <th>tick</th>
                    <th>received</th>
                    <th>user</th>
                    <th>input</th>
                    <th>row</th>
                    <th>weight</th>
                  </tr>
                </thead>
                <tbody>
                  {pushes.map((p) => (
                    <tr key={`${p.sequence}-${JSON.stringify(p.row)}`} data-testid="explain-push">
                      <td>#{p.sequence}</td>
                      <td>{p.tick}</td>
                      <td>{formatTime(p.received_at)}</td>
                      <td>{p.user ?? <span className="muted">unknown</span>}</td>
                      <td>
                        <code>{p.input}</code>
                      </td>
                      <td>{formatRow(p.row)}</td>
                      <td className={p.weight > 0 ? 'plus' : 'minus'}>{formatWeight(p.weight)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      )}
    </aside>
  );
}
