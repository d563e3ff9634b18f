import { useState } from 'react';
import { ApiError, elementTypeOf, type PushResult, type RunInput } from '../api';
import { newIdempotencyKey, uploadPush } from '../api/runs';
import { ErrorText, messagesOf } from '../components/ErrorText';
import { clientErrorCount, errorCount, parseCsv, toRecords, withServerErrors, WEIGHT_COLUMN, type CsvPreview, type ServerRowError } from './csvPreview';

interface Props {
  runId: number;
  input: RunInput;
  disabled?: boolean;
  onPushed?: () => void;
}

/** Rows shown in the preview table: the first ones, and rows with errors (bounded). */
const PREVIEW_ROWS = 50;
const ERROR_ROWS = 200;

function serverErrors(error: unknown): { errors: ServerRowError[]; detail?: string } | null {
  if (!(error instanceof ApiError) || error.status !== 400) return null;
  const body = error.body as { errors?: unknown; detail?: unknown } | null;
  const errors = Array.isArray(body?.errors) ? (body.errors as ServerRowError[]) : [];
  return { errors, detail: typeof body?.detail === 'string' ? body.detail : undefined };
}

/**
 * CSV upload: choose a file, see a preview with every row checked against the input's
 * schema (bad cells marked, the upload refused until they are fixed), then upload with
 * a progress bar. The server's per-row errors are shown on the same preview rows.
 */
function previewRows(preview: CsvPreview) {
  let errorsShown = 0;
  return preview.rows.filter((r, i) => {
    if (r.errors.length > 0 && errorsShown < ERROR_ROWS) {
      errorsShown += 1;
      return true;
    }
    return i < PREVIEW_ROWS && r.errors.length === 0;
  });
}

export function CsvUpload({ runId, input, disabled = false, onPushed }: Props) {
  const [fileName, setFileName] = useState('');
  const [text, setText] = useState('');
  const [preview, setPreview] = useState<CsvPreview | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [result, setResult] = useState<(PushResult & { rows: number }) | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const name = input.name;

  async function choose(file: File | undefined) {
    setResult(null);
    setErrors([]);
    setPreview(null);
    if (!file) return;
    setFileName(file.name);
    const content = await file.text();
    setText(content);
    setPreview(parseCsv(content, input.schema));
  }

  async function upload() {
    if (!preview) return;
    setResult(null);
    setErrors([]);
    setProgress(0);
    const key = newIdempotencyKey();
    try {
      let accepted: PushResult;
      try {
        accepted = await uploadPush(runId, name, text, { contentType: 'text/csv', idempotencyKey: key, onProgress: setProgress });
      } catch (error) {
        // A server without the CSV parser answers 415: send the checked rows as JSON.
        if (!(error instanceof ApiError) || error.status !== 415) throw error;
        setProgress(0);
        accepted = await uploadPush(runId, name, JSON.stringify(toRecords(preview)), {
          contentType: 'application/json',
          idempotencyKey: key,
          onProgress: setProgress,
        });
      }
      setResult({ ...accepted, rows: preview.rows.length });
      setPreview(withServerErrors(preview, []));
      onPushed?.();
    } catch (error) {
      const server = serverErrors(error);
      if (server) setPreview(withServerErrors(preview, server.errors, server.detail));
      setErrors(messagesOf(error).slice(0, 1));
    } finally {
      setProgress(null);
    }
  }

  const bad = preview ? errorCount(preview) : 0;
  const blocked = !preview || preview.rows.length === 0 || preview.fileErrors.some((f) => !f.startsWith('Server: ')) || clientErrorCount(preview) > 0;
  const shown = preview ? previewRows(preview) : [];
  // Every column the push will hold: the file's, the schema's it leaves out (null) and the
  // weight (1 unless the file says otherwise).
  const columns = preview
    ? [...preview.columns, ...input.schema.map((c) => c.name).filter((c) => !preview.columns.includes(c)), ...(preview.columns.includes(WEIGHT_COLUMN) ? [] : [WEIGHT_COLUMN])]
    : [];
  const implied = (c: string) => !preview?.columns.includes(c);

  return (
    <div className="csv-upload" data-testid={`csv-upload-${name}`}>
      <p className="muted small">
        Header row: {input.schema.map((c) => c.name).join(', ')}; optional <code>{WEIGHT_COLUMN}</code> (−1 deletes). Empty cells are null.
        {input.schema.some((c) => elementTypeOf(c.type)) && (
          <>
            {' '}
            List cells hold a JSON array, e.g. <code>{'"[""a"",""b""]"'}</code> for <code>{'["a","b"]'}</code>.
          </>
        )}
      </p>
      <input type="file" accept=".csv,text/csv" data-testid={`csv-file-${name}`} disabled={disabled} onChange={(e) => void choose(e.target.files?.[0])} />
      {preview && (
        <div className="csv-preview">
          <p data-testid={`csv-summary-${name}`} className={bad ? 'warning' : 'muted'}>
            {fileName}: {preview.rows.length} row{preview.rows.length === 1 ? '' : 's'}
            {bad ? `, ${bad} with errors` : ', all valid'}
          </p>
          {preview.fileErrors.length > 0 && <ErrorText messages={preview.fileErrors} testId={`csv-file-errors-${name}`} />}
          <div className="table-wrap csv-table-wrap">
            <table className="view-table" data-testid={`csv-preview-${name}`}>
              <thead>
                <tr>
                  <th>line</th>
                  <th>problems</th>
                  {columns.map((c) => (
                    <th key={c}>{c}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {shown.map((row) => {
                  const fields = new Set(row.errors.map((e) => e.field));
                  return (
                    <tr
                      key={row.index}
                      data-testid="csv-row"
                      data-line={row.line}
                      data-error={row.errors.length > 0 ? 'true' : 'false'}
                      className={row.errors.length ? 'bad-row' : undefined}
                    >
                      <td className="muted">{row.line}</td>
                      <td className="row-errors" data-testid="csv-row-errors">
                        {row.errors.map((e, i) => (
                          <div key={i} className={`row-error ${e.source}`}>
                            {e.source === 'server' ? 'server: ' : ''}
                            {e.message}
                          </div>
                        ))}
                      </td>
                      {columns.map((c) => (
                        <td key={c} className={fields.has(c) ? 'bad-cell' : implied(c) ? 'null' : undefined} title={implied(c) ? 'not in the file' : row.cells[c]}>
                          {implied(c) ? (c === WEIGHT_COLUMN ? '1' : 'null') : row.cells[c]}
                        </td>
                      ))}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {preview.rows.length > shown.length && <p className="muted small">… and {preview.rows.length - shown.length} more rows not shown.</p>}
          <div className="actions">
            <button type="button" className="primary" data-testid={`csv-upload-submit-${name}`} disabled={disabled || blocked || progress !== null} onClick={() => void upload()}>
              Upload {preview.rows.length} row{preview.rows.length === 1 ? '' : 's'}
            </button>
            {blocked && preview.rows.length > 0 && <span className="muted small">Fix the marked rows first: nothing is sent while any row is bad.</span>}
          </div>
        </div>
      )}
      {progress !== null && (
        <div className="progress" data-testid={`csv-progress-${name}`}>
          <progress max={1} value={progress} />
          <span>{progress < 1 ? `Uploading… ${Math.round(progress * 100)}%` : 'Uploaded; waiting for the server…'}</span>
        </div>
      )}
      {result && (
        <p className="push-result" data-testid={`csv-result-${name}`}>
          Accepted {result.rows} row{result.rows === 1 ? '' : 's'}: sequence {result.sequence}, token <code>{result.token}</code>
        </p>
      )}
      <ErrorText messages={errors} testId={`csv-error-${name}`} />
    </div>
  );
}
