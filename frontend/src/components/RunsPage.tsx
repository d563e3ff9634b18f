// All of the user's runs across their circuits, newest first, with status and a Stop
// that asks first. Built from the existing endpoints (the user's circuits, then each
// circuit's runs): no endpoint lists runs across circuits yet.

import { useCallback, useEffect, useState } from 'react';
import { api, type Run } from '../api';
import { editorApi, type EditorCircuit } from '../api/editor';
import { formatTime } from '../format';
import { circuitHref, runHref } from '../route';
import { ErrorText, messagesOf } from './ErrorText';

type Row = Run & { circuitName: string };

const LIVE = new Set(['created', 'running', 'paused']);

async function myCircuits(): Promise<EditorCircuit[]> {
  const all: EditorCircuit[] = [];
  for (let page = 1; page <= 20; page++) {
    const body = await editorApi.listCircuits({ scope: 'mine', page });
    all.push(...body.results);
    if (!body.next) break;
  }
  return all;
}

export function RunsPage() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState<number | null>(null);

  const load = useCallback(async () => {
    try {
      const circuits = await myCircuits();
      const runs = await Promise.all(circuits.map(async (c) => (await api.listRuns(c.id)).map((r) => ({ ...r, circuitName: c.name }))));
      setRows(runs.flat().sort((a, b) => b.id - a.id));
    } catch (error) {
      setErrors(messagesOf(error));
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  async function stop(run: Row) {
    if (!window.confirm(`Stop run #${run.id} of "${run.circuitName}"? It cannot be resumed; its outputs stay readable.`)) return;
    setBusy(run.id);
    try {
      await api.stopRun(run.id);
      await load();
    } catch (error) {
      setErrors(messagesOf(error));
    } finally {
      setBusy(null);
    }
  }

  return (
    <section>
      <div className="page-head">
        <h1>My runs</h1>
      </div>
      <ErrorText messages={errors} />
      {rows === null && errors.length === 0 && <p className="muted">Loading…</p>}
      {rows !== null && rows.length === 0 && <p className="muted">No runs yet: open a circuit and press Start run.</p>}
      {rows !== null && rows.length > 0 && (
        <table className="runs" data-testid="my-runs">
          <thead>
            <tr>
              <th>Run</th>
              <th>Circuit</th>
              <th>Status</th>
              <th>Version</th>
              <th>Tick</th>
              <th>Started</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((run) => (
              <tr key={run.id} data-testid="my-run" data-run-id={run.id} data-status={run.status}>
                <td>
                  <a href={runHref(run.id)}>Run #{run.id}</a>
                </td>
                <td>
                  <a href={circuitHref(run.circuit)}>{run.circuitName}</a>
                </td>
                <td>
                  <span className={`status status-${run.status}`}>{run.status}</span>
                </td>
                <td>{run.version}</td>
                <td>{run.current_tick}</td>
                <td>{formatTime(run.created_at)}</td>
                <td>
                  {LIVE.has(run.status) && (
                    <button type="button" className="danger" data-testid={`my-run-stop-${run.id}`} disabled={busy !== null} onClick={() => void stop(run)}>
                      {busy === run.id ? 'Stopping…' : 'Stop'}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
