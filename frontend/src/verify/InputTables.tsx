import { useEffect, useState } from 'react';
import { ApiError, type RunInput } from '../api';
import { ErrorText } from '../components/ErrorText';
import { ViewTable } from '../components/ViewTable';
import { canonicalKey, type WeightedRow, type ZSet } from '../zset';
import { verifyApi, type InputRows } from './verifyApi';

const PAGE_SIZE = 50;

interface Props {
  runId: number;
  inputs: RunInput[];
  /** Reloaded when this changes (the run's tick). */
  tick: number;
}

/** Each input table's current contents (every accepted push), paged by the server. */
export function InputTables({ runId, inputs, tick }: Props) {
  if (inputs.length === 0) return null;
  return (
    <div className="input-tables">
      <h2>Input tables</h2>
      {inputs.map((input) => (
        <InputTable key={input.name} runId={runId} input={input.name} tick={tick} />
      ))}
    </div>
  );
}

function toZSet(rows: WeightedRow[]): ZSet {
  return new Map(rows.map((r) => [canonicalKey(r.data), r]));
}

function InputTable({ runId, input, tick }: { runId: number; input: string; tick: number }) {
  const [page, setPage] = useState(1);
  const [rows, setRows] = useState<InputRows | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let live = true;
    verifyApi
      .inputRows(runId, input, page, PAGE_SIZE)
      .then((r) => live && (setRows(r), setErrors([])))
      .catch((e) => live && setErrors(e instanceof ApiError ? e.messages : [String(e)]));
    return () => {
      live = false;
    };
  }, [runId, input, page, tick, reload]);

  const pages = rows ? Math.max(1, Math.ceil(rows.count / PAGE_SIZE)) : 1;
  return (
    <div className="card input-table" data-testid={`input-table-${input}`}>
      <h3>
        <code>{input}</code> <small className="muted" data-testid={`input-rows-count-${input}`}>{rows ? `${rows.count} row${rows.count === 1 ? '' : 's'}` : ''}</small>
      </h3>
      <ErrorText messages={errors} testId={`input-rows-error-${input}`} />
      {rows && <ViewTable view={`input-${input}`} zset={toZSet(rows.results)} testId={`input-rows-${input}`} />}
      <div className="pager">
        <button type="button" disabled={page <= 1} onClick={() => setPage((p) => p - 1)} data-testid={`input-rows-prev-${input}`}>
          ‹ Previous
        </button>
        <span>
          page {page} of {pages}
        </span>
        <button type="button" disabled={page >= pages} onClick={() => setPage((p) => p + 1)} data-testid={`input-rows-next-${input}`}>
          Next ›
        </button>
        <button type="button" onClick={() => setReload((n) => n + 1)} data-testid={`input-rows-refresh-${input}`}>
          Refresh
        </button>
      </div>
    </div>
  );
}
