import { useEffect, useRef, useState } from 'react';
import type { RunInput } from '../api';
import { pushRecords } from '../api/runs';
import { RowGenerator, type GeneratorStatus } from './generator';

interface Props {
  runId: number;
  input: RunInput;
  disabled?: boolean;
  onPushed?: () => void;
}

/** Streams random rows of the input's schema at a chosen rate, honouring backpressure. */
export function GeneratorPanel({ runId, input, disabled = false, onPushed }: Props) {
  const [rate, setRate] = useState(5);
  const [status, setStatus] = useState<GeneratorStatus | null>(null);
  const [now, setNow] = useState(() => Date.now());
  const generator = useRef<RowGenerator | null>(null);
  const pushed = useRef(onPushed);
  pushed.current = onPushed;
  const name = input.name;

  useEffect(() => () => generator.current?.stop(), []);
  useEffect(() => {
    if (disabled) generator.current?.stop();
  }, [disabled]);
  useEffect(() => {
    if (!status?.backpressureUntil) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [status?.backpressureUntil]);

  function start() {
    generator.current?.stop();
    const g = new RowGenerator({
      schema: input.schema,
      rate,
      firstSerial: 1_000_000 + Math.floor(Math.random() * 1_000_000) * 100,
      push: async (records, key) => {
        const result = await pushRecords(runId, name, records, { idempotencyKey: key });
        pushed.current?.();
        return result;
      },
      onStatus: setStatus,
    });
    generator.current = g;
    g.start();
  }

  function changeRate(value: number) {
    setRate(value);
    generator.current?.setRate(value);
  }

  const running = status?.running ?? false;
  return (
    <div className="generator" data-testid={`generator-${name}`}>
      <label className="rate">
        <span className="field-name">rows / second</span>
        <input
          type="number"
          min={0.1}
          max={10000}
          step="any"
          value={rate}
          data-testid={`generator-rate-${name}`}
          onChange={(e) => changeRate(Math.max(0, Number(e.target.value) || 0))}
        />
      </label>
      <div className="actions">
        {!running ? (
          <button type="button" className="primary" data-testid={`generator-start-${name}`} disabled={disabled || rate <= 0} onClick={start}>
            Start generator
          </button>
        ) : (
          <button type="button" data-testid={`generator-stop-${name}`} onClick={() => generator.current?.stop()}>
            Stop generator
          </button>
        )}
      </div>
      {status && (
        <p className="muted small" data-testid={`generator-status-${name}`} data-rows={status.rowsSent}>
          {running ? 'Streaming' : status.inFlight ? 'Stopping (a push on its way)' : 'Stopped'}: {status.rowsSent} rows in{' '}
          {status.pushes} pushes
          {status.backpressureUntil
            ? ` · server busy (429), retrying in ${Math.max(0, Math.ceil((status.backpressureUntil - now) / 1000))} s`
            : ''}
          {status.backpressureHits > 0 && !status.backpressureUntil ? ` · slowed by backpressure ${status.backpressureHits}×` : ''}
        </p>
      )}
      {status?.error && (
        <div className="error" role="alert" data-testid={`generator-error-${name}`}>
          Generator stopped: {status.error}
        </div>
      )}
      <p className="muted small">Values follow the schema: ids count up, account-like keys fall in 1–5, lists hold 0–4 elements, others are random.</p>
    </div>
  );
}
