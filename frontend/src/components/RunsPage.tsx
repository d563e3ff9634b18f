// All of the user's runs across their circuits (GET /api/runs/), newest first, with their
// status, a status filter, pages, and a Stop that asks first.

import { useCallback, useEffect, useState } from 'react';
import { api, type Page, type RunListItem, type RunStatus } from '../api';
import { ErrorText, messagesOf } from './ErrorText';
import { RunsTable } from './RunsTable';

const PAGE_SIZE = 50;
const FILTERS: { value: string; label: string }[] = [
  { value: '', label: 'All runs' },
  { value: 'created,running,paused', label: 'Live (created, running, paused)' },
  ...(['running', 'paused', 'stopped', 'failed'] satisfies RunStatus[]).map((s) => ({ value: s, label: s[0]!.toUpperCase() + s.slice(1) })),
];

export function RunsPage() {
  const [body, setBody] = useState<Page<RunListItem> | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);

  const load = useCallback(async () => {
    try {
      setBody(await api.myRuns({ status, page, pageSize: PAGE_SIZE }));
      setErrors([]);
    } catch (error) {
      setErrors(messagesOf(error));
    }
  }, [status, page]);

  useEffect(() => {
    void load();
  }, [load]);

  const pages = body ? Math.max(1, Math.ceil(body.count / PAGE_SIZE)) : 1;
  return (
    <section>
      <div className="page-head">
        <h1>My runs</h1>
        <label className="runs-filter">
          <span className="muted">Show</span>
          <select
            data-testid="my-runs-status"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value);
              setPage(1);
            }}
          >
            {FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorText messages={errors} />
      {body === null && errors.length === 0 && <p className="muted">Loading…</p>}
      {body !== null && body.count === 0 && (
        <p className="muted" data-testid="my-runs-empty">
          {status ? 'No runs in this status.' : 'No runs yet: open a circuit and press Start run.'}
        </p>
      )}
      {body !== null && body.results.length > 0 && (
        <>
          <RunsTable runs={body.results} showCircuit testId="my-runs" onStopped={() => void load()} />
          {pages > 1 && (
            <div className="pager" data-testid="my-runs-pager">
              <button type="button" onClick={() => setPage(page - 1)} disabled={page <= 1}>
                ‹
              </button>
              <span>
                {(page - 1) * PAGE_SIZE + 1}–{Math.min(body.count, page * PAGE_SIZE)} of {body.count}
              </span>
              <button type="button" onClick={() => setPage(page + 1)} disabled={page >= pages}>
                ›
              </button>
            </div>
          )}
        </>
      )}
    </section>
  );
}
