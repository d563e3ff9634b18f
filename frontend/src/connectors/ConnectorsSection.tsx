// The editor's Connectors section of an input or output node: the node's
// `params.connectors` (docs/connectors.md, "Declaring them in the editor"), one form per
// connector built from GET /api/connector-kinds/ (so kinds added on the server appear
// here without frontend changes), secrets named as environment variables (never typed
// here), and a "Test connection" button.

import { useEffect, useState } from 'react';
import { messagesOf } from '../components/ErrorText';
import { connectorsApi, type ConnectorKind, type KindOption, type TestResult } from './connectorsApi';

/** One connector as the document holds it. */
export interface DeclaredConnector {
  name: string;
  kind: string;
  config?: Record<string, unknown>;
  secrets_env?: Record<string, string>;
}

let kindsOnce: Promise<ConnectorKind[]> | null = null;
/** The server's kinds, asked once per page load (a failure is asked again next time). */
export function loadKinds(): Promise<ConnectorKind[]> {
  if (!kindsOnce) {
    kindsOnce = connectorsApi.kinds().catch((error: unknown) => {
      kindsOnce = null;
      throw error;
    });
  }
  return kindsOnce;
}

/** A name not taken yet: `<node>-in`, `<node>-in2`, ... */
export function freshName(node: string, source: boolean, taken: string[]): string {
  const base = `${node.replace(/[^A-Za-z0-9_-]/g, '_').replace(/^[^A-Za-z]+/, '') || 'c'}-${source ? 'in' : 'out'}`;
  let name = base;
  for (let i = 2; taken.includes(name); i++) name = `${base}${i}`;
  return name;
}

/** An option's text as typed back into a value (undefined: not set; an Error: not valid). */
export function optionValue(option: KindOption, text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (option.type === 'integer') {
    const n = Number(trimmed);
    return Number.isInteger(n) ? n : new Error(`${option.name}: a whole number`);
  }
  if (option.type === 'list' || option.type === 'object') {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      const fits = option.type === 'list' ? Array.isArray(parsed) : parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
      return fits ? parsed : new Error(`${option.name}: a JSON ${option.type === 'list' ? 'list, e.g. ["a", "b"]' : 'object, e.g. {"k": "v"}'}`);
    } catch {
      return new Error(`${option.name}: not valid JSON`);
    }
  }
  return text;
}

function optionText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

interface Props {
  node: string;
  source: boolean;
  connectors: DeclaredConnector[];
  readOnly: boolean;
  onChange(connectors: DeclaredConnector[], field: string): void;
}

export function ConnectorsSection({ node, source, connectors, readOnly, onChange }: Props) {
  const [kinds, setKinds] = useState<ConnectorKind[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  useEffect(() => {
    let active = true;
    loadKinds().then(
      (k) => active && setKinds(k),
      (error) => active && setLoadError(messagesOf(error).join(' ')),
    );
    return () => {
      active = false;
    };
  }, []);
  const fitting = (kinds ?? []).filter((k) => k.source === source);
  // a new connector starts as the kind that needs nothing else running: files
  const first = fitting.find((k) => k.name === (source ? 'file_source' : 'file_sink')) ?? fitting[0];

  const update = (index: number, next: DeclaredConnector, field: string) =>
    onChange(connectors.map((c, i) => (i === index ? next : c)), `connectors:${index}:${field}`);

  return (
    <div className="connector-editor" data-testid="connectors-editor">
      <h4>Connectors</h4>
      <p className="muted">
        {source
          ? 'Sources that feed this table when a run of this version starts (files, Kafka, …).'
          : 'Sinks that receive this view’s changes, each tick, when a run of this version starts.'}{' '}
        Secrets are never stored here: name the environment variable that holds each on the workers.
      </p>
      {loadError && <div className="field-error">Connector kinds: {loadError}</div>}
      {connectors.map((connector, index) => (
        <ConnectorForm
          key={index}
          index={index}
          connector={connector}
          kind={kinds?.find((k) => k.name === connector.kind)}
          fitting={fitting}
          readOnly={readOnly}
          onChange={(next, field) => update(index, next, field)}
          onRemove={() => onChange(connectors.filter((_, i) => i !== index), `connectors:remove:${index}`)}
        />
      ))}
      {!readOnly && (
        <button
          type="button"
          data-testid="connector-add"
          disabled={fitting.length === 0}
          onClick={() =>
            onChange(
              [...connectors, { name: freshName(node, source, connectors.map((c) => c.name)), kind: first!.name, config: {} }],
              'connectors:add',
            )
          }
        >
          Add {source ? 'a source' : 'a sink'}
        </button>
      )}
    </div>
  );
}

function ConnectorForm({ index, connector, kind, fitting, readOnly, onChange, onRemove }: {
  index: number;
  connector: DeclaredConnector;
  kind: ConnectorKind | undefined;
  fitting: ConnectorKind[];
  readOnly: boolean;
  onChange(next: DeclaredConnector, field: string): void;
  onRemove(): void;
}) {
  const id = (what: string) => `connector-${index}-${what}`;
  const config = connector.config ?? {};
  const secrets = Object.entries(connector.secrets_env ?? {});
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [testing, setTesting] = useState(false);
  const [result, setResult] = useState<TestResult | null>(null);

  const setOption = (option: KindOption, text: string) => {
    setTexts((t) => ({ ...t, [option.name]: text }));
    const value = optionValue(option, text);
    if (value instanceof Error) {
      setProblems((p) => ({ ...p, [option.name]: value.message }));
      return;
    }
    setProblems(({ [option.name]: _gone, ...rest }) => rest);
    const next = { ...config };
    if (value === undefined) delete next[option.name];
    else next[option.name] = value;
    onChange({ ...connector, config: next }, option.name);
  };
  const setSecrets = (entries: [string, string][]) =>
    onChange({ ...connector, secrets_env: Object.fromEntries(entries) }, 'secrets_env');

  async function test() {
    setTesting(true);
    setResult(null);
    try {
      setResult(await connectorsApi.test(connector.kind, config, connector.secrets_env ?? {}));
    } catch (error) {
      setResult({ ok: false, error: messagesOf(error).join(' ') });
    } finally {
      setTesting(false);
    }
  }

  return (
    <fieldset data-testid={id('form')} disabled={readOnly}>
      <legend>{connector.name || 'connector'}</legend>
      <label>
        Name
        <input type="text" data-testid={id('name')} value={connector.name} spellCheck={false}
          onChange={(e) => onChange({ ...connector, name: e.target.value }, 'name')} />
      </label>
      <label>
        Kind
        <select data-testid={id('kind')} value={connector.kind}
          onChange={(e) => {
            setTexts({});
            setProblems({});
            setResult(null);
            onChange({ ...connector, kind: e.target.value, config: {} }, 'kind');
          }}>
          {!fitting.some((k) => k.name === connector.kind) && <option value={connector.kind}>{connector.kind}</option>}
          {fitting.map((k) => (
            <option key={k.name} value={k.name}>
              {k.name}
            </option>
          ))}
        </select>
      </label>
      {kind?.doc && <p className="muted">{kind.doc}</p>}
      {kind?.options.map((option) => {
        const text = texts[option.name] ?? optionText(config[option.name]);
        const label = `${option.name}${option.required ? ' *' : ''}`;
        return (
          <label key={option.name}>
            {label}
            {option.choices.length > 0 ? (
              <select data-testid={id(`opt-${option.name}`)} value={text} onChange={(e) => setOption(option, e.target.value)}>
                <option value="">— ({option.choices[0]})</option>
                {option.choices.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : option.type === 'object' || option.type === 'list' ? (
              <textarea data-testid={id(`opt-${option.name}`)} rows={2} value={text} spellCheck={false}
                placeholder={option.type === 'list' ? '["a", "b"]' : '{"setting": "value"}'}
                onChange={(e) => setOption(option, e.target.value)} />
            ) : (
              <input type={option.type === 'integer' ? 'number' : 'text'} data-testid={id(`opt-${option.name}`)} value={text}
                spellCheck={false} onChange={(e) => setOption(option, e.target.value)} />
            )}
            {problems[option.name] && <span className="field-error">{problems[option.name]}</span>}
          </label>
        );
      })}
      <div className="connector-secrets">
        <span>Secrets (from environment variables)</span>
        {secrets.map(([option, variable], i) => (
          <div key={i} className="field-row">
            <input type="text" aria-label="secret option" data-testid={id(`secret-${i}-option`)} value={option}
              placeholder="option, e.g. sasl.password"
              onChange={(e) => setSecrets(secrets.map((s, j) => (j === i ? [e.target.value, s[1]] : s)))} />
            <input type="text" aria-label="environment variable" data-testid={id(`secret-${i}-env`)} value={variable}
              placeholder="variable, e.g. KAFKA_PASSWORD"
              onChange={(e) => setSecrets(secrets.map((s, j) => (j === i ? [s[0], e.target.value] : s)))} />
            <button type="button" onClick={() => setSecrets(secrets.filter((_, j) => j !== i))}>×</button>
          </div>
        ))}
        {!readOnly && (
          <button type="button" className="small" data-testid={id('secret-add')}
            onClick={() => setSecrets([...secrets, ['', '']])}>
            + secret
          </button>
        )}
      </div>
      <div className="connector-buttons">
        <button type="button" data-testid={id('test')} disabled={testing || !kind} onClick={() => void test()}>
          {testing ? 'Testing…' : 'Test connection'}
        </button>
        {!readOnly && (
          <button type="button" data-testid={id('remove')} onClick={onRemove}>
            Remove
          </button>
        )}
      </div>
      {result && (
        <p className={result.ok ? 'connector-test-ok' : 'field-error'} data-testid={id('test-result')}>
          {result.ok ? 'Connected.' : result.error}
        </p>
      )}
    </fieldset>
  );
}
