import { useState } from 'react';
import type { RunInput } from '../api';
import { newIdempotencyKey, uploadPush } from '../api/runs';
import { ErrorText, messagesOf } from '../components/ErrorText';
import { parseJsonl, type JsonlPreview } from './jsonlPreview';

interface Props {
  runId: number;
  inputs: RunInput[];
  disabled?: boolean;
  onPushed?: () => void;
}

const PREVIEW_PUSHES = 50;

/**
 * A push file (JSON Lines, one push per line, the format `python -m dbsp run` takes):
 * choose it, see every push checked against the inputs' schemas, then send the pushes in
 * order, one request each (each with its own Idempotency-Key, so a retry never doubles).
 */
export function JsonlUpload({ runId, inputs, disabled = false, onPushed }: Props) {
  const [fileName, setFileName] = useState('');
  const [preview, setPreview] = useState<JsonlPreview | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const [sending, setSending] = useState(false);
  const [errors, setErrors] = useState<string[]>([]);

  async function choose(file: File | undefined) {
    setSent(null);
    setErrors([]);
    setPreview(null);
    if (!file) return;
    setFileName(file.name);
    setPreview(parseJsonl(await file.text(), inputs));
  }

  async function send() {
    if (!preview) return;
    setSending(true);
    setErrors([]);
    let done = 0;
    setSent(0);
    try {
      for (const push of preview.pushes) {
        await uploadPush(runId, push.input, push.body, { contentType: 'application/json', idempotencyKey: newIdempotencyKey() });
        done += 1;
        setSent(done);
      }
      onPushed?.();
    } catch (error) {
      const push = preview.pushes[done];
      setErrors(messagesOf(error).map((m) => `line ${push?.line ?? '?'} (${push?.input ?? '?'}): ${m} — ${done} earlier push${done === 1 ? ' was' : 'es were'} sent`));
    } finally {
      setSending(false);
    }
  }

  const bad = preview ? preview.pushes.filter((p) => p.errors.length).length + preview.lineErrors.length : 0;
  const rows = preview ? preview.pushes.reduce((n, p) => n + p.records.length, 0) : 0;
  return (
    <div className="card jsonl-upload" data-testid="jsonl-upload">
      <h3>Push file (JSON Lines)</h3>
      <p className="muted small">
        One push per line, as <code>python -m dbsp run</code> reads it: <code>{'{"orders": [{"insert": {...}}]}'}</code>. Sent in order, one push each.
      </p>
      <input type="file" accept=".jsonl,.ndjson,.json,application/x-ndjson" data-testid="jsonl-file" disabled={disabled} onChange={(e) => void choose(e.target.files?.[0])} />
      {preview && (
        <>
          <p data-testid="jsonl-summary" className={bad ? 'warning' : 'muted'}>
            {fileName}: {preview.pushes.length} push{preview.pushes.length === 1 ? '' : 'es'}, {rows} record{rows === 1 ? '' : 's'}
            {bad ? `, ${bad} with errors` : ', all valid'}
          </p>
          {preview.lineErrors.length > 0 && (
            <ErrorText messages={preview.lineErrors.map((e) => `line ${e.line}: ${e.message}`)} testId="jsonl-line-errors" />
          )}
          <div className="table-wrap csv-table-wrap">
            <table className="view-table" data-testid="jsonl-preview">
              <thead>
                <tr>
                  <th>line</th>
                  <th>input</th>
                  <th>records</th>
                  <th>problems / first record</th>
                </tr>
              </thead>
              <tbody>
                {preview.pushes.slice(0, PREVIEW_PUSHES).map((p, i) => (
                  <tr key={i} data-testid="jsonl-row" data-line={p.line} data-error={p.errors.length ? 'true' : 'false'} className={p.errors.length ? 'bad-row' : undefined}>
                    <td className="muted">{p.line}</td>
                    <td>{p.input}</td>
                    <td>{p.records.length}</td>
                    <td className={p.errors.length ? 'row-errors' : undefined} title={p.errors.length ? p.errors.join('\n') : JSON.stringify(p.records[0] ?? null)}>
                      {p.errors.length ? p.errors.map((e, k) => <div key={k}>{e}</div>) : JSON.stringify(p.records[0] ?? null)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {preview.pushes.length > PREVIEW_PUSHES && <p className="muted small">… and {preview.pushes.length - PREVIEW_PUSHES} more pushes.</p>}
          <div className="actions">
            <button type="button" className="primary" data-testid="jsonl-submit" disabled={disabled || sending || bad > 0 || preview.pushes.length === 0} onClick={() => void send()}>
              Send {preview.pushes.length} push{preview.pushes.length === 1 ? '' : 'es'}
            </button>
            {bad > 0 && <span className="muted small">Fix the marked lines first: nothing is sent while any is bad.</span>}
          </div>
        </>
      )}
      {sent !== null && (
        <p className="push-result" data-testid="jsonl-result" data-sent={sent}>
          {sending ? `Sending… ${sent} of ${preview?.pushes.length ?? 0}` : `Sent ${sent} push${sent === 1 ? '' : 'es'}.`}
        </p>
      )}
      <ErrorText messages={errors} testId="jsonl-error" />
    </div>
  );
}
