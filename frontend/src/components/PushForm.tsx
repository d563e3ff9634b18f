import { useState, type FormEvent } from 'react';
import { api, type ChangeRecord, type Column, type PushResult, type RunInput } from '../api';
import { buildRow, emptyValues, type FieldValue } from '../rowValues';
import { ErrorText, messagesOf } from './ErrorText';

interface Props {
  runId: number;
  input: RunInput;
  disabled?: boolean;
}

const PLACEHOLDERS: Partial<Record<Column['type'], string>> = {
  date: 'YYYY-MM-DD',
  timestamp: 'YYYY-MM-DD HH:MM:SS',
};

/** Pushes one insert or delete of a single row into an input table. */
export function PushForm({ runId, input, disabled = false }: Props) {
  const [values, setValues] = useState<Record<string, FieldValue>>(() => emptyValues(input.schema));
  const [result, setResult] = useState<PushResult | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  async function push(kind: 'insert' | 'delete') {
    setResult(null);
    setErrors([]);
    const built = buildRow(input.schema, values);
    if (!built.ok) {
      setErrors(built.errors);
      return;
    }
    const record: ChangeRecord = kind === 'insert' ? { insert: built.row } : { delete: built.row };
    setBusy(true);
    try {
      setResult(await api.push(runId, input.name, [record]));
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(false);
    }
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    void push('insert');
  }

  const name = input.name;
  return (
    <form className="card push-form" data-testid={`push-form-${name}`} onSubmit={onSubmit} noValidate>
      <h3>
        <code>{name}</code>
      </h3>
      <div className="fields">
        {input.schema.map((column) => (
          <label key={column.name} className={column.type === 'boolean' ? 'checkbox' : undefined}>
            <span className="field-name">
              {column.name} <span className="type">{column.type}</span>
            </span>
            {column.type === 'boolean' ? (
              <input
                type="checkbox"
                data-testid={`push-field-${name}-${column.name}`}
                checked={values[column.name] === true}
                onChange={(e) => setValues({ ...values, [column.name]: e.target.checked })}
              />
            ) : (
              <input
                type={column.type === 'bigint' || column.type === 'double' ? 'number' : 'text'}
                step={column.type === 'bigint' ? '1' : column.type === 'double' ? 'any' : undefined}
                placeholder={PLACEHOLDERS[column.type] ?? 'null'}
                data-testid={`push-field-${name}-${column.name}`}
                value={String(values[column.name] ?? '')}
                onChange={(e) => setValues({ ...values, [column.name]: e.target.value })}
              />
            )}
          </label>
        ))}
      </div>
      <div className="actions">
        <button type="submit" className="primary" data-testid={`push-insert-${name}`} disabled={busy || disabled}>
          Insert
        </button>
        <button type="button" data-testid={`push-delete-${name}`} disabled={busy || disabled} onClick={() => void push('delete')}>
          Delete
        </button>
      </div>
      {result && (
        <p className="push-result" data-testid={`push-result-${name}`}>
          Accepted: sequence {result.sequence}, token <code>{result.token}</code>
        </p>
      )}
      <ErrorText messages={errors} testId={`push-error-${name}`} />
    </form>
  );
}
