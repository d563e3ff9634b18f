import { useEffect, useState } from 'react';
import { api, type Circuit } from '../api';
import { formatTime } from '../format';
import { circuitHref } from '../route';
import { ErrorText, messagesOf } from './ErrorText';

export function CircuitList() {
  const [circuits, setCircuits] = useState<Circuit[] | null>(null);
  const [errors, setErrors] = useState<string[]>([]);

  useEffect(() => {
    let active = true;
    api.listCircuits().then(
      (list) => active && setCircuits(list),
      (error) => active && setErrors(messagesOf(error)),
    );
    return () => {
      active = false;
    };
  }, []);

  return (
    <section>
      <h1>Circuits</h1>
      <ErrorText messages={errors} />
      {circuits === null && errors.length === 0 && <p className="muted">Loading…</p>}
      {circuits !== null && (
        <ul className="circuit-list" data-testid="circuit-list">
          {circuits.map((circuit) => (
            <li key={circuit.id} className="card circuit-item" data-testid="circuit-item">
              <div className="circuit-item-head">
                <a href={circuitHref(circuit.id)} className="circuit-link">
                  {circuit.name}
                </a>
                <span className={`badge visibility-${circuit.visibility}`}>{circuit.visibility}</span>
              </div>
              {circuit.description && <p className="description">{circuit.description}</p>}
              <p className="meta">
                {circuit.owner}
                {circuit.latest_version ? ` · version ${circuit.latest_version.number}` : ' · no version'}
                {` · updated ${formatTime(circuit.updated_at)}`}
              </p>
            </li>
          ))}
        </ul>
      )}
      {circuits !== null && circuits.length === 0 && (
        <p className="muted">
          No circuits yet. Create one in the <a href="/admin/">admin</a>.
        </p>
      )}
    </section>
  );
}
