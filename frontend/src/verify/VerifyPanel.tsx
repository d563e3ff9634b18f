import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../api';
import { ErrorText } from '../components/ErrorText';
import { formatValue } from '../format';
import type { WeightedRow } from '../zset';
import { finished, verifyApi, type Verification, type ViewDifference } from './verifyApi';

interface Props {
  runId: number;
  /** The run's current tick: a verification of an earlier tick is marked as such. */
  tick: number;
  /** How often to poll a running verification (ms). */
  pollMs?: number;
}

/** "Verify": recompute every output view from the input log from scratch and compare it
 * with the incremental outputs at the current tick; shows a check mark or the rows
 * that differ per view. */
export function VerifyPanel({ runId, tick, pollMs = 400 }: Props) {
  const [verification, setVerification] = useState<Verification | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);

  async function poll(id: number) {
    try {
      const v = await verifyApi.verification(runId, id);
      setVerification(v);
      if (!finished(v)) timer.current = setTimeout(() => void poll(id), pollMs);
    } catch (e) {
      setErrors(e instanceof ApiError ? e.messages : [String(e)]);
    }
  }

  async function start() {
    setErrors([]);
    if (timer.current) clearTimeout(timer.current);
    try {
      const v = await verifyApi.verify(runId);
      setVerification(v);
      timer.current = setTimeout(() => void poll(v.id), pollMs);
    } catch (e) {
      setErrors(e instanceof ApiError ? e.messages : [String(e)]);
    }
  }

  const busy = verification !== null && !finished(verification);
  return (
    <div className="card verify-card" data-testid="verify-panel">
      <div className="verify-head">
        <h2>Verify</h2>
        <button type="button" data-testid="verify-button" disabled={busy || tick < 0} onClick={() => void start()}
          title="Recompute every output from the input log from scratch and compare with the incremental outputs">
          {busy ? 'Verifying…' : 'Verify'}
        </button>
      </div>
      <ErrorText messages={errors} testId="verify-error" />
      {tick < 0 && !verification && <p className="muted">Nothing to verify before the first tick.</p>}
      {verification && <VerificationResult verification={verification} currentTick={tick} />}
    </div>
  );
}

function VerificationResult({ verification: v, currentTick }: { verification: Verification; currentTick: number }) {
  if (!finished(v)) {
    return (
      <p className="muted" data-testid="verify-progress">
        {v.status === 'queued' ? 'Queued' : 'Recomputing'} tick {v.tick}… <progress max={1} value={v.progress} /> {Math.round(v.progress * 100)}%
      </p>
    );
  }
  if (v.status === 'failed') return <ErrorText messages={[`The verification failed: ${v.error ?? 'unknown error'}`]} testId="verify-failed" />;
  const how = v.method === 'spark' ? 'a batch Spark recomputation' : 'the reference evaluator';
  const stale = v.tick !== currentTick ? ` (the run is at tick ${currentTick} now)` : '';
  if (v.ok) {
    return (
      <p className="verify-ok" data-testid="verify-ok">
        <span aria-label="verified">✓</span> Tick {v.tick}: every output equals {how} from scratch{stale}.
      </p>
    );
  }
  const views = Object.entries(v.views ?? {});
  return (
    <div data-testid="verify-differences">
      <p className="verify-bad">
        <span aria-label="differs">✗</span> Tick {v.tick}: {views.length === 1 ? '1 view differs' : `${views.length} views differ`} from {how}{stale}.
      </p>
      {views.map(([view, diff]) => (
        <ViewDiff key={view} view={view} diff={diff} />
      ))}
    </div>
  );
}

function ViewDiff({ view, diff }: { view: string; diff: ViewDifference }) {
  return (
    <div className="verify-view" data-testid={`verify-view-${view}`}>
      <h3>
        <code>{view}</code>
      </h3>
      <DiffRows label="Missing (the recomputation has them; the run's output lacks them)" side="missing" rows={diff.missing} count={diff.missing_count} view={view} />
      <DiffRows label="Extra (the run's output has them; the recomputation does not)" side="extra" rows={diff.extra} count={diff.extra_count} view={view} />
    </div>
  );
}

function DiffRows({ label, side, rows, count, view }: { label: string; side: string; rows: WeightedRow[]; count?: number; view: string }) {
  if (rows.length === 0) return null;
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r.data)))];
  return (
    <>
      <h4>{label}</h4>
      <table className="view-table" data-testid={`verify-${side}-${view}`}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c}>{c}</th>
            ))}
            <th>weight</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {columns.map((c) => (
                <td key={c}>{formatValue(r.data[c])}</td>
              ))}
              <td>{r.weight}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {count !== undefined && count > rows.length && <p className="muted">… and {count - rows.length} more.</p>}
    </>
  );
}
