// The compiled incremental plan of the edited document (`/api/plan/`), shown beside the
// circuit: inserted state nodes (integrators, delays) are dashed. Recompiled, debounced,
// when the document changes; a loading line shows while a compile is under way.

import { useEffect, useState } from 'react';
import { editorApi } from '../api/editor';
import { CircuitCanvas } from '../editor/CircuitCanvas';
import type { ApiSchemas } from '../api';
import type { Doc, DocNode } from '../editor/model';
import { ErrorText, messagesOf } from './ErrorText';

/** The plan opens no smaller than this zoom: its labels stay readable (pan for the rest). */
export const PLAN_MIN_ZOOM = 0.7;

const planNodeClass = (node: DocNode) => (node.inserted === true ? 'inserted' : undefined);

export function PlanPane({ doc, debounceMs = 300 }: { doc: Doc; debounceMs?: number }) {
  const [plan, setPlan] = useState<ApiSchemas['Plan'] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [loading, setLoading] = useState(true);
  useEffect(() => {
    let active = true;
    setLoading(true);
    const timer = setTimeout(() => {
      editorApi.plan(doc).then(
        (p) => {
          if (!active) return;
          setPlan(p);
          setErrors([]);
          setLoading(false);
        },
        (error) => {
          if (!active) return;
          setErrors(messagesOf(error));
          setLoading(false);
        },
      );
    }, debounceMs);
    return () => {
      active = false;
      clearTimeout(timer);
    };
  }, [doc, debounceMs]);
  const inserted = plan ? plan.nodes.filter((n) => n.inserted === true).length : 0;
  // Beside the editor the plan is narrow: "Full size" opens it over the page, readable.
  const [full, setFull] = useState(false);
  return (
    <div className={`card plan-pane${full ? ' full' : ''}`} data-testid="plan-pane" aria-busy={loading}>
      <button type="button" className="plan-size" data-testid="plan-full-size" aria-pressed={full} onClick={() => setFull((f) => !f)}>
        {full ? 'Close full size' : 'Full size'}
      </button>
      <h2>
        Compiled incremental plan{' '}
        {plan && (
          <small className="muted">
            (mode {String(plan.mode ?? '')}; {inserted} inserted state nodes, dashed)
          </small>
        )}
      </h2>
      {loading && (
        <p className="plan-loading muted" data-testid="plan-loading" role="status">
          <progress aria-label="Compiling the plan" /> {plan ? 'Recompiling the plan…' : 'Compiling the incremental plan…'}
        </p>
      )}
      <ErrorText messages={errors} testId="plan-error" />
      {plan && (
        <CircuitCanvas
          key={full ? 'full' : 'side'}
          document={plan}
          minFitZoom={PLAN_MIN_ZOOM}
          testIdPrefix="plan-"
          layout="always"
          layoutDirection="DOWN"
          height={full ? 'calc(94vh - 90px)' : 'max(460px, calc(100vh - 340px))'}
          nodeClass={planNodeClass}
          className={loading ? 'stale' : ''}
        />
      )}
      {plan && (
        <details>
          <summary>Per-node incremental form</summary>
          <ul>
            {plan.nodes
              .filter((n) => !n.inserted)
              .map((n) => {
                const inc = n.incremental;
                return (
                  <li key={n.id}>
                    <code>{n.id}</code>: {inc?.form ?? '?'}
                    {inc?.state?.length ? ` — state: ${inc.state.join('; ')}` : ''}
                  </li>
                );
              })}
          </ul>
        </details>
      )}
    </div>
  );
}
