import { useState, type FormEvent } from 'react';
import { elementTypeOf, type ChangeRecord, type Column, type PushResult, type RunInput } from '../api';
import { newIdempotencyKey, pushRecords } from '../api/runs';
import { CsvUpload } from '../dashboard/CsvUpload';
import { GeneratorPanel } from '../dashboard/GeneratorPanel';
import { formatRow, formatWeight } from '../format';
import { DATE_FORMAT, TIMESTAMP_FORMAT, buildRow, emptyValues, LIST_EXAMPLES, type FieldValue } from '../rowValues';
import { ErrorText, messagesOf } from './ErrorText';

interface Props {
  runId: number;
  input: RunInput;
  disabled?: boolean;
  /** Called after the server accepted a push (the page refreshes the lag). */
  onPushed?: () => void;
}

const PLACEHOLDERS: Partial<Record<Column['type'], string>> = {
  date: DATE_FORMAT,
  timestamp: TIMESTAMP_FORMAT,
};

/** Placeholder of a column's field: a format hint, JSON array text for lists, else "null". */
function placeholderOf(type: Column['type']): string {
  const element = elementTypeOf(type);
  return element ? LIST_EXAMPLES[element] : (PLACEHOLDERS[type] ?? 'null');
}

type Tab = 'form' | 'csv' | 'generator';

interface FieldsProps {
  input: RunInput;
  values: Record<string, FieldValue>;
  onChange(values: Record<string, FieldValue>): void;
  /** Test id prefix: `${prefix}-${input}-${column}`. */
  prefix: string;
  /** Messages "<column> <problem>": each shown under its field. */
  errors?: string[];
}

/** The messages about one column ("amount must be a whole number"). */
const errorsOf = (errors: readonly string[], column: string) => errors.filter((e) => e.startsWith(`${column} `));

function RowFields({ input, values, onChange, prefix, errors = [] }: FieldsProps) {
  return (
    <div className="fields">
      {input.schema.map((column) => (
        <label key={column.name} className={column.type === 'boolean' ? 'checkbox' : undefined}>
          <span className="field-name">
            {column.name} <span className="type">{column.type}</span>
          </span>
          {column.type === 'boolean' ? (
            <input
              type="checkbox"
              data-testid={`${prefix}-${input.name}-${column.name}`}
              checked={values[column.name] === true}
              onChange={(e) => onChange({ ...values, [column.name]: e.target.checked })}
            />
          ) : (
            <input
              type={column.type === 'bigint' || column.type === 'double' ? 'number' : 'text'}
              step={column.type === 'bigint' ? '1' : column.type === 'double' ? 'any' : undefined}
              placeholder={placeholderOf(column.type)}
              spellCheck={elementTypeOf(column.type) ? false : undefined}
              title={elementTypeOf(column.type) ? `JSON array, e.g. ${placeholderOf(column.type)}; empty is null` : undefined}
              data-testid={`${prefix}-${input.name}-${column.name}`}
              value={String(values[column.name] ?? '')}
              onChange={(e) => onChange({ ...values, [column.name]: e.target.value })}
            />
          )}
          {errorsOf(errors, column.name).map((message) => (
            <span key={message} className="field-error" data-testid={`${prefix}-error-${input.name}-${column.name}`}>
              {message}
            </span>
          ))}
        </label>
      ))}
    </div>
  );
}

function describe(record: ChangeRecord): { weight: number; text: string } {
  if ('insert' in record) return { weight: 1, text: formatRow(record.insert) };
  if ('delete' in record) return { weight: -1, text: formatRow(record.delete) };
  return { weight: record.weight, text: formatRow(record.data) };
}

/**
 * Pushes changes into one input table: a single insert or delete, an edit (delete the
 * old row and insert the new one in one push), a staged batch of several changes, a CSV
 * upload, or a stream of generated rows.
 */
export function PushForm({ runId, input, disabled = false, onPushed }: Props) {
  const [tab, setTab] = useState<Tab>('form');
  const [values, setValues] = useState<Record<string, FieldValue>>(() => emptyValues(input.schema));
  const [newValues, setNewValues] = useState<Record<string, FieldValue> | null>(null);
  const [staged, setStaged] = useState<ChangeRecord[]>([]);
  const [result, setResult] = useState<PushResult | null>(null);
  const [resultRows, setResultRows] = useState(0);
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  async function send(records: ChangeRecord[]): Promise<boolean> {
    setBusy(true);
    try {
      setResult(await pushRecords(runId, input.name, records, { idempotencyKey: newIdempotencyKey() }));
      setResultRows(records.length);
      onPushed?.();
      return true;
    } catch (error) {
      setErrors(messagesOf(error));
      return false;
    } finally {
      setBusy(false);
    }
  }

  function current(): ReturnType<typeof buildRow> {
    setResult(null);
    setErrors([]);
    const built = buildRow(input.schema, values);
    if (!built.ok) setErrors(built.errors);
    return built;
  }

  async function push(kind: 'insert' | 'delete') {
    const built = current();
    if (!built.ok) return;
    await send([kind === 'insert' ? { insert: built.row } : { delete: built.row }]);
  }

  function stage(kind: 'insert' | 'delete') {
    const built = current();
    if (!built.ok) return;
    setStaged([...staged, kind === 'insert' ? { insert: built.row } : { delete: built.row }]);
  }

  async function pushStaged() {
    setResult(null);
    setErrors([]);
    if (await send(staged)) setStaged([]);
  }

  async function pushEdit() {
    const oldRow = current();
    if (!oldRow.ok || !newValues) return;
    const newRow = buildRow(input.schema, newValues);
    if (!newRow.ok) {
      setErrors(newRow.errors.map((e) => `new ${e}`));
      return;
    }
    if (await send([{ delete: oldRow.row }, { insert: newRow.row }])) {
      setValues(newValues);
      setNewValues(null);
    }
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    void push('insert');
  }

  const name = input.name;
  return (
    <div className="card push-card" data-testid={`push-card-${name}`}>
      <div className="push-head">
        <h3>
          <code>{name}</code>
        </h3>
        <div className="tabs" role="tablist">
          {(['form', 'csv', 'generator'] as Tab[]).map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              aria-selected={tab === t}
              className={tab === t ? 'tab active' : 'tab'}
              data-testid={`push-tab-${t}-${name}`}
              onClick={() => setTab(t)}
            >
              {t === 'form' ? 'Rows' : t === 'csv' ? 'CSV' : 'Generator'}
            </button>
          ))}
        </div>
      </div>

      {tab === 'form' && (
        <form className="push-form" data-testid={`push-form-${name}`} onSubmit={onSubmit} noValidate>
          <RowFields input={input} values={values} onChange={setValues} prefix="push-field" errors={errors} />
          <div className="actions">
            <button type="submit" className="primary" data-testid={`push-insert-${name}`} disabled={busy || disabled}>
              Insert
            </button>
            <button type="button" data-testid={`push-delete-${name}`} disabled={busy || disabled} onClick={() => void push('delete')}>
              Delete
            </button>
            <button
              type="button"
              data-testid={`push-edit-open-${name}`}
              disabled={busy || disabled}
              onClick={() => setNewValues(newValues ? null : { ...values })}
              title="Replace the row above by another one (a delete and an insert in one push)"
            >
              {newValues ? 'Cancel edit' : 'Edit…'}
            </button>
            <span className="spacer" />
            <button type="button" data-testid={`push-stage-insert-${name}`} disabled={busy || disabled} onClick={() => stage('insert')} title="Add an insert of this row to the batch">
              + batch
            </button>
            <button type="button" data-testid={`push-stage-delete-${name}`} disabled={busy || disabled} onClick={() => stage('delete')} title="Add a delete of this row to the batch">
              − batch
            </button>
          </div>

          {newValues && (
            <div className="edit-box" data-testid={`push-edit-${name}`}>
              <h4>Replace with</h4>
              <RowFields input={input} values={newValues} onChange={setNewValues} prefix="push-new-field" />
              <div className="actions">
                <button type="button" className="primary" data-testid={`push-edit-submit-${name}`} disabled={busy || disabled} onClick={() => void pushEdit()}>
                  Push edit (−old +new)
                </button>
              </div>
            </div>
          )}

          {staged.length > 0 && (
            <div className="staged" data-testid={`staged-${name}`}>
              <h4>Batch ({staged.length})</h4>
              <ol className="delta-feed">
                {staged.map((record, i) => {
                  const { weight, text } = describe(record);
                  return (
                    <li key={i} data-testid="staged-row" className={weight > 0 ? 'plus' : 'minus'}>
                      {`${formatWeight(weight)}  ${text}`}
                      <button type="button" className="link" onClick={() => setStaged(staged.filter((_, j) => j !== i))} aria-label="Remove from batch">
                        ×
                      </button>
                    </li>
                  );
                })}
              </ol>
              <div className="actions">
                <button type="button" className="primary" data-testid={`push-staged-${name}`} disabled={busy || disabled} onClick={() => void pushStaged()}>
                  Push {staged.length} change{staged.length > 1 ? 's' : ''}
                </button>
                <button type="button" onClick={() => setStaged([])} disabled={busy}>
                  Clear
                </button>
              </div>
            </div>
          )}

          {busy && <p className="muted progress-line">Sending…</p>}
          {result && (
            <p className="push-result" data-testid={`push-result-${name}`}>
              Accepted {resultRows} change{resultRows === 1 ? '' : 's'}: sequence {result.sequence}, token <code>{result.token}</code>
            </p>
          )}
          {/* What is about one field sits under it; the rest (the server's answer) here. */}
          <ErrorText messages={errors.filter((e) => !input.schema.some((c) => e.startsWith(`${c.name} `)))} testId={`push-error-${name}`} />
        </form>
      )}
      {tab === 'csv' && <CsvUpload runId={runId} input={input} disabled={disabled} onPushed={onPushed} />}
      {/* The generator keeps streaming while other tabs are shown. */}
      <div hidden={tab !== 'generator'}>
        <GeneratorPanel runId={runId} input={input} disabled={disabled} onPushed={onPushed} />
      </div>
    </div>
  );
}
