import { useState } from 'react';
import { formatRow, formatTime, formatWeight } from '../format';
import { messagesOf } from '../components/ErrorText';
import { chainOf, explainApi, type ExplainTarget, type Group, type PushRef, type Step, type Use } from './explainApi';

interface Props {
  step: Step;
  runId: number;
  /** Open another explanation in the panel (a row the walk did not follow). */
  onOpen: (target: ExplainTarget) => void;
  /** The tick explained: a step at another tick (z⁻¹, I, D, a late row) says its own. */
  rootTick?: number;
}

function iterationText(iteration: Step['iteration']): string {
  if (iteration === null) return '';
  return Array.isArray(iteration) ? iteration.join('.') : String(iteration);
}

function weightText(item: { weight: number; before?: number; after?: number }, mode: Step['mode']): string {
  if (mode === 'change' && item.before !== undefined) return `${item.before} → ${item.after}`;
  return `×${item.weight}`;
}

function changeClass(item: { before?: number; after?: number }): string {
  if (item.before === undefined || item.before === item.after) return '';
  return (item.after ?? 0) > item.before ? ' plus' : ' minus';
}

export function PushList({ pushes, count }: { pushes: PushRef[]; count: number }) {
  return (
    <ul className="explain-pushes">
      {pushes.map((p) => (
        <li key={`${p.sequence}-${JSON.stringify(p.row)}`} data-testid="explain-step-push" className={p.weight > 0 ? 'plus' : 'minus'}>
          {formatWeight(p.weight)} push #{p.sequence} · tick {p.tick} · {formatTime(p.received_at)} · {p.user ?? 'unknown user'}
        </li>
      ))}
      {count > pushes.length && <li className="muted">… {count - pushes.length} earlier pushes</li>}
    </ul>
  );
}

/** Steps that pass their input's row on unchanged: drawn as one short line each. */
export const PASSING = new Set(['output', 'export', 'fixedpoint', 'import', 'delta0', 'delay']);

function TickBadge({ step, rootTick }: { step: Step; rootTick?: number }) {
  if (rootTick === undefined || step.tick === rootTick) return null;
  return (
    <span className="badge tick" data-testid="explain-step-tick">
      tick {step.tick}
    </span>
  );
}

function StepLine({ step, rootTick }: { step: Step; rootTick?: number }) {
  const iteration = iterationText(step.iteration);
  if (PASSING.has(step.kind) && step.groups.length === 1) {
    return (
      <div className="explain-step passing" data-testid="explain-step" data-kind={step.kind} data-node={step.node}
        data-iteration={iteration} data-mode={step.mode}>
        <span className="badge kind">{step.kind === 'fixedpoint' ? 'fixed point' : step.kind}</span>
        <code className="explain-node">{step.node}</code>
        {iteration && <span className="badge iteration">iteration {iteration}</span>}
        <TickBadge step={step} rootTick={rootTick} />
        <span className="explain-note">{step.note || step.groups[0]!.label}</span>
      </div>
    );
  }
  return (
    <div
      className={`explain-step${changeClass(step)}`}
      data-testid="explain-step"
      data-kind={step.kind}
      data-node={step.node}
      data-iteration={iteration}
      data-mode={step.mode}
    >
      <span className="badge kind">{step.kind === 'fixedpoint' ? 'fixed point' : step.kind}</span>
      <code className="explain-node">{step.node}</code>
      {iteration && (
        <span className="badge iteration" title={step.first_iteration ? `first found at iteration ${iteration}` : undefined}>
          iteration {iteration}
        </span>
      )}
      <TickBadge step={step} rootTick={rootTick} />
      <span className="explain-row">{formatRow(step.row)}</span>
      <span className="explain-weight">{weightText(step, step.mode)}</span>
      {step.note && <span className="explain-note">{step.note}</span>}
      {step.pushes && <PushList pushes={step.pushes} count={step.pushes_count ?? step.pushes.length} />}
    </div>
  );
}

function UseView({ use, runId, onOpen, owner, rootTick }: { use: Use; runId: number; onOpen: Props['onOpen']; owner: Step; rootTick?: number }) {
  const mode = owner.mode;
  if (use.step) return <StepTree step={use.step} runId={runId} onOpen={onOpen} rootTick={rootTick} />;
  const text = `${use.node} ${formatRow(use.row)} ${weightText(use, mode)}`;
  if (use.ref !== undefined) {
    return (
      <div className="explain-ref muted" data-testid="explain-ref">
        ↑ {text} — explained above
      </div>
    );
  }
  const changed = use.before !== undefined && use.before !== use.after;
  return (
    <div className="explain-ref muted">
      … {text} — not followed (the explanation is long){' '}
      <button
        type="button"
        className="link"
        onClick={() =>
          onOpen({
            node: use.node,
            iteration: use.iteration,
            row: use.row,
            tick: use.tick ?? owner.tick,
            // run as drawn, a row of a value is the change of the node's contents then
            mode: changed || owner.mode === 'value' ? 'change' : 'contents',
          })
        }
      >
        Explain this row
      </button>
    </div>
  );
}

/** One group of a step (a join's pair, an aggregate's group...), paged when large. */
function GroupView({ group, owner, runId, onOpen, rootTick }: { group: Group; owner: Step; runId: number; onOpen: Props['onOpen']; rootTick?: number }) {
  const [shown, setShown] = useState<Group>(group);
  const [error, setError] = useState<string | null>(null);
  const pageSize = group.uses.length || 1;
  const index = owner.groups.indexOf(group);

  async function turn(page: number) {
    setError(null);
    try {
      // a value (run as drawn) is the change of the node's contents at its tick: the same groups
      const mode = owner.mode === 'value' ? 'change' : owner.mode;
      const e = await explainApi.explain(runId, {
        node: owner.node, iteration: owner.iteration, row: owner.row, tick: owner.tick, mode, page,
      });
      const root = mode === 'change' ? e.change : e.contents;
      const next = root?.groups[index];
      if (next) setShown(next);
    } catch (err) {
      setError(messagesOf(err).join(' '));
    }
  }

  const page = Math.floor(shown.offset / pageSize);
  const paged = shown.total > shown.uses.length || shown.offset > 0;
  return (
    <div className={`explain-group${group.dropped ? ' dropped' : ''}`} data-testid="explain-group" data-dropped={group.dropped ? 'true' : undefined}>
      <div className="explain-label">
        ⤷ {shown.label}
        {paged && (
          <span className="explain-pager" data-testid="explain-pager">
            {' '}
            showing {shown.offset + 1}–{shown.offset + shown.uses.length} of {shown.total}{' '}
            <button type="button" disabled={page === 0} onClick={() => void turn(page - 1)}>
              ‹
            </button>
            <button type="button" disabled={shown.offset + shown.uses.length >= shown.total} onClick={() => void turn(page + 1)}>
              ›
            </button>
          </span>
        )}
        {error && <span className="error-inline"> {error}</span>}
      </div>
      {shown.uses.length === 0 && <div className="muted explain-ref">(no rows)</div>}
      <ul className="explain-children">
        {shown.uses.map((use, i) => (
          <li key={`${shown.offset}-${i}`}>
            <UseView use={use} runId={runId} onOpen={onOpen} owner={owner} rootTick={rootTick} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A derivation: a chain of single-input steps on one level, then the groups where it
 * branches (pairs, groups), each nested below. */
export function StepTree({ step, runId, onOpen, rootTick }: Props) {
  const chain = chainOf(step);
  const last = chain[chain.length - 1]!;
  return (
    <div className="explain-chain">
      {chain.map((s, i) => (
        <div key={s.id}>
          {i > 0 && !PASSING.has(chain[i - 1]!.kind) && <div className="explain-label">⤷ {chain[i - 1]!.groups[0]!.label}</div>}
          <StepLine step={s} rootTick={rootTick ?? step.tick} />
        </div>
      ))}
      {last.groups.map((group, i) => (
        <GroupView key={i} group={group} owner={last} runId={runId} onOpen={onOpen} rootTick={rootTick ?? step.tick} />
      ))}
    </div>
  );
}
