// A node's parameter form, generated from the kind's `params` JSON Schema (from the
// circuit format). Column-valued fields are pickers over the inferred input schema,
// expression fields show the engine's parse/type errors inline, and column lists
// (an input's schema) become a schema editor: add, remove, rename, type, nullable.

import { useEffect, useState } from 'react';
import type { JsonSchema } from '../api/editor';
import { formatDuration, parseDuration, PLAIN, UNITS, type Duration } from './duration';
import { paramErrors, type SchemaColumn, type ValidationError } from './model';

const EXPRESSION_FIELDS = /^(expr|predicate|condition|where|having|expression|value)$/;
const COLUMN_FIELD = /^(column|col|time_column|timestamp_column|order_column|ts|time|key|by|partition_column)$|_column$/;
const COLUMN_LIST_FIELD = /^(group_by|partition_by|keys|columns_to_keep|on)$|_keys$|_by$/;

export interface ParamContext {
  /** Columns available for a parameter (by the input port it refers to). */
  columnsFor: (param: string) => SchemaColumn[] | undefined;
  errors: ValidationError[];
}

interface FieldProps {
  name: string;
  path: string[];
  schema: JsonSchema;
  value: unknown;
  onChange: (value: unknown) => void;
  ctx: ParamContext;
  topParam: string;
  required?: boolean;
}

const testId = (path: string[]) => `param-${path.join('-')}`;

function typesOf(schema: JsonSchema): string[] {
  const t = schema.type;
  if (Array.isArray(t)) return t.map(String);
  if (typeof t === 'string') return [t];
  if (schema.enum) return ['enum'];
  if (schema.properties) return ['object'];
  return [];
}

function pathErrors(ctx: ParamContext, path: string[]): ValidationError[] {
  // Errors name a param like "columns[1].expr" or "columns"; match the most specific.
  const [top, ...rest] = path;
  if (!top) return [];
  let dotted = top;
  for (const p of rest) dotted += /^\d+$/.test(p) ? `[${p}]` : `.${p}`;
  return paramErrors(ctx.errors, top).filter((e) => (rest.length ? e.param === dotted : true));
}

function ErrorsOf({ errors, path }: { errors: ValidationError[]; path: string[] }) {
  if (!errors.length) return null;
  return (
    <div className="field-error" data-testid={`${testId(path)}-error`}>
      {errors.map((e, i) => (
        <div key={i}>{e.message}</div>
      ))}
    </div>
  );
}

/** A text field that edits locally and reports on every keystroke (undo coalesces them). */
function TextField({ value, onChange, className, id, placeholder }: { value: string; onChange: (v: string) => void; className?: string; id: string; placeholder?: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <input
      type="text"
      className={className}
      data-testid={id}
      value={text}
      placeholder={placeholder}
      spellCheck={false}
      onChange={(e) => {
        setText(e.target.value);
        onChange(e.target.value);
      }}
    />
  );
}

function Field(props: FieldProps) {
  const { name, path, schema, value, onChange, ctx, topParam } = props;
  const types = typesOf(schema);
  const errors = path.length === 1 ? paramErrors(ctx.errors, topParam) : pathErrors(ctx, path);
  const label = (
    <span>
      {name}
      {props.required ? ' *' : ''}
    </span>
  );

  if (Array.isArray(schema.enum)) {
    const options = schema.enum as unknown[];
    return (
      <label>
        {label}
        <select data-testid={testId(path)} value={value === undefined || value === null ? '' : String(value)} onChange={(e) => onChange(e.target.value === '' ? undefined : options.find((o) => String(o) === e.target.value))}>
          <option value="">—</option>
          {options.map((o) => (
            <option key={String(o)} value={String(o)}>
              {String(o)}
            </option>
          ))}
        </select>
        <ErrorsOf errors={errors} path={path} />
      </label>
    );
  }

  if (types.includes('boolean')) {
    return (
      <label className="field-row">
        <input type="checkbox" data-testid={testId(path)} checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        {label}
        <ErrorsOf errors={errors} path={path} />
      </label>
    );
  }

  if (types.includes('integer') && types.includes('string')) {
    // A window duration: a number and a unit ("1 minute"), or a plain integer for a
    // bigint time column.
    const duration = parseDuration(value);
    return (
      <label>
        {label}
        {duration ? (
          <span className="duration field-row">
            <input
              type="number"
              min={0}
              step={1}
              data-testid={testId(path)}
              value={duration.amount ?? ''}
              onChange={(e) => onChange(formatDuration({ ...duration, amount: e.target.value === '' ? null : Math.trunc(Number(e.target.value)) }))}
            />
            <select
              aria-label={`${name} unit`}
              data-testid={`${testId(path)}-unit`}
              value={duration.unit}
              onChange={(e) => onChange(formatDuration({ ...duration, unit: e.target.value as Duration['unit'] }))}
            >
              {UNITS.map((u) => (
                <option key={u} value={u}>
                  {u}
                </option>
              ))}
              <option value={PLAIN}>(integer time)</option>
            </select>
          </span>
        ) : (
          <TextField id={testId(path)} value={String(value)} placeholder="e.g. 1 minute" onChange={(v) => onChange(v)} />
        )}
        <ErrorsOf errors={errors} path={path} />
      </label>
    );
  }

  if (types.includes('integer') || types.includes('number')) {
    return (
      <label>
        {label}
        <input
          type="number"
          data-testid={testId(path)}
          value={typeof value === 'number' ? value : ''}
          min={typeof schema.minimum === 'number' ? schema.minimum : undefined}
          onChange={(e) => {
            const v = e.target.value;
            onChange(v === '' ? undefined : types.includes('integer') ? parseInt(v, 10) : Number(v));
          }}
        />
        <ErrorsOf errors={errors} path={path} />
      </label>
    );
  }

  if (types.includes('array')) {
    const items = (schema.items ?? {}) as JsonSchema;
    const list = Array.isArray(value) ? value : [];
    const itemTypes = typesOf(items);
    if (itemTypes.includes('string') && !items.enum) {
      const columns = ctx.columnsFor(topParam);
      const isColumns = COLUMN_LIST_FIELD.test(name) || (columns !== undefined && COLUMN_FIELD.test(name));
      if (isColumns && columns) {
        const names = columns.map((c) => c.name);
        const extra = list.map(String).filter((v) => !names.includes(v));
        return (
          <fieldset>
            <legend>{label}</legend>
            <div className="chips" data-testid={testId(path)}>
              {[...names, ...extra].map((col) => {
                const on = list.includes(col);
                return (
                  <button
                    type="button"
                    key={col}
                    className={`chip ${on ? 'on' : ''}`}
                    data-testid={`${testId(path)}-col-${col}`}
                    aria-pressed={on}
                    onClick={() => onChange(on ? list.filter((v) => v !== col) : [...list, col])}
                  >
                    {col}
                  </button>
                );
              })}
              {names.length === 0 && <span className="muted">no input columns yet</span>}
            </div>
            <ErrorsOf errors={errors} path={path} />
          </fieldset>
        );
      }
      return (
        <label>
          {label} <small className="muted">(comma-separated)</small>
          <TextField
            id={testId(path)}
            value={list.map(String).join(', ')}
            onChange={(v) => onChange(v.split(',').map((s) => s.trim()).filter(Boolean))}
          />
          <ErrorsOf errors={errors} path={path} />
        </label>
      );
    }
    if (itemTypes.includes('object')) {
      const props = (items.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((items.required as string[] | undefined) ?? []);
      const blank = () => {
        const row: Record<string, unknown> = {};
        for (const [k, s] of Object.entries(props)) {
          if (Array.isArray(s.enum)) row[k] = s.enum[0];
          else if (typesOf(s).includes('boolean')) row[k] = k === 'nullable';
          else if (required.has(k) && typesOf(s).includes('string')) row[k] = '';
        }
        return row;
      };
      return (
        <fieldset>
          <legend>{label}</legend>
          {list.map((row, i) => (
            <div key={i} className="param-row" data-testid={`${testId(path)}-${i}`}>
              <div className="field-row">
                {Object.entries(props).map(([k, s]) => (
                  <CompactField
                    key={k}
                    name={k}
                    path={[...path, String(i), k]}
                    schema={s}
                    value={(row as Record<string, unknown>)?.[k]}
                    ctx={ctx}
                    topParam={topParam}
                    onChange={(v) => {
                      const next = [...list];
                      const r = { ...((row as Record<string, unknown>) ?? {}) };
                      if (v === undefined) delete r[k];
                      else r[k] = v;
                      next[i] = r;
                      onChange(next);
                    }}
                  />
                ))}
                <button type="button" title="Remove" data-testid={`${testId(path)}-${i}-remove`} onClick={() => onChange(list.filter((_, j) => j !== i))}>
                  ×
                </button>
              </div>
              <ErrorsOf errors={pathErrors(ctx, [...path, String(i)]).filter((e) => e.param === `${topParam}[${i}]`)} path={[...path, String(i)]} />
            </div>
          ))}
          <button type="button" data-testid={`${testId(path)}-add`} onClick={() => onChange([...list, blank()])}>
            + Add {name === 'schema' ? 'column' : 'row'}
          </button>
          <ErrorsOf errors={errors.filter((e) => e.param === topParam || path.length > 1)} path={path} />
        </fieldset>
      );
    }
    return <JsonField {...props} />;
  }

  if (types.includes('object')) {
    const props2 = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const obj = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
    return (
      <fieldset>
        <legend>{label}</legend>
        {Object.entries(props2).map(([k, s]) => (
          <Field
            key={k}
            name={k}
            path={[...path, k]}
            schema={s}
            value={obj[k]}
            ctx={ctx}
            topParam={topParam}
            onChange={(v) => {
              const next = { ...obj };
              if (v === undefined) delete next[k];
              else next[k] = v;
              onChange(next);
            }}
          />
        ))}
      </fieldset>
    );
  }

  if (types.includes('string')) {
    const columns = ctx.columnsFor(topParam);
    if (COLUMN_FIELD.test(name) && columns) {
      return (
        <label>
          {label}
          <ColumnSelect id={testId(path)} value={value} columns={columns} onChange={onChange} />
          <ErrorsOf errors={errors} path={path} />
        </label>
      );
    }
    const expression = EXPRESSION_FIELDS.test(name);
    // A cleared optional parameter is left out (the engine's default), not sent as "":
    // e.g. flat_map's `separator`, which a list column must not have at all.
    const optional = path.length === 1 && !props.required;
    return (
      <label>
        {label}
        <TextField
          id={testId(path)}
          className={expression ? 'expr' : undefined}
          value={value === undefined || value === null ? '' : String(value)}
          placeholder={expression ? 'SQL expression, e.g. amount > 100' : undefined}
          onChange={(v) => onChange(v !== '' ? v : types.includes('null') ? null : optional ? undefined : v)}
        />
        {expression && columns && columns.length > 0 && <small className="muted">columns: {columns.map((c) => c.name).join(', ')}</small>}
        <ErrorsOf errors={errors} path={path} />
      </label>
    );
  }

  return <JsonField {...props} />;
}

function ColumnSelect({ id, value, columns, onChange }: { id: string; value: unknown; columns: SchemaColumn[]; onChange: (v: unknown) => void }) {
  const current = value === undefined || value === null ? '' : String(value);
  const names = columns.map((c) => c.name);
  return (
    <select data-testid={id} value={current} onChange={(e) => onChange(e.target.value || undefined)}>
      <option value="">—</option>
      {current && !names.includes(current) && <option value={current}>{current} (missing)</option>}
      {columns.map((c) => (
        <option key={c.name} value={c.name}>
          {c.name} ({c.type})
        </option>
      ))}
    </select>
  );
}

/** A field inside a row of an array of objects: no label line, placeholder instead. */
function CompactField(props: Omit<FieldProps, 'required'>) {
  const { name, path, schema, value, onChange, ctx, topParam } = props;
  const types = typesOf(schema);
  const errors = pathErrors(ctx, path);
  let input;
  if (Array.isArray(schema.enum)) {
    const options = schema.enum as unknown[];
    input = (
      <select title={name} data-testid={testId(path)} value={value === undefined || value === null ? '' : String(value)} onChange={(e) => onChange(options.find((o) => String(o) === e.target.value))}>
        {options.map((o) => (
          <option key={String(o)} value={String(o)}>
            {String(o)}
          </option>
        ))}
      </select>
    );
  } else if (types.includes('boolean')) {
    input = (
      <label className="field-row" title={name}>
        <input type="checkbox" data-testid={testId(path)} checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        <small>{name}</small>
      </label>
    );
  } else if (types.includes('string') && COLUMN_FIELD.test(name) && ctx.columnsFor(topParam)) {
    input = <ColumnSelect id={testId(path)} value={value} columns={ctx.columnsFor(topParam)!} onChange={onChange} />;
  } else if (types.includes('integer') || types.includes('number')) {
    input = (
      <input type="number" title={name} data-testid={testId(path)} value={typeof value === 'number' ? value : ''} onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))} />
    );
  } else {
    const expression = EXPRESSION_FIELDS.test(name);
    input = (
      <TextField
        id={testId(path)}
        className={expression ? 'expr' : undefined}
        value={value === undefined || value === null ? '' : String(value)}
        placeholder={name}
        onChange={(v) => onChange(v === '' && types.includes('null') ? null : v)}
      />
    );
  }
  return (
    <>
      {input}
      {errors.length > 0 && <ErrorsOf errors={errors} path={path} />}
    </>
  );
}

/** Anything the form does not understand: edit as JSON. */
function JsonField({ name, path, value, onChange, ctx, topParam }: FieldProps) {
  const [text, setText] = useState(JSON.stringify(value ?? null));
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => setText(JSON.stringify(value ?? null)), [value]);
  return (
    <label>
      {name} <small className="muted">(JSON)</small>
      <textarea
        data-testid={testId(path)}
        value={text}
        rows={2}
        onChange={(e) => {
          setText(e.target.value);
          try {
            onChange(JSON.parse(e.target.value));
            setProblem(null);
          } catch (err) {
            setProblem(err instanceof Error ? err.message : String(err));
          }
        }}
      />
      {problem && <div className="field-error">{problem}</div>}
      <ErrorsOf errors={paramErrors(ctx.errors, topParam)} path={path} />
    </label>
  );
}

export function ParamForm({ schema, params, onChange, ctx }: { schema: JsonSchema | undefined; params: Record<string, unknown>; onChange: (params: Record<string, unknown>, field: string) => void; ctx: ParamContext }) {
  if (!schema) {
    return (
      <JsonField
        name="params"
        path={['params']}
        schema={{}}
        value={params}
        ctx={ctx}
        topParam="params"
        onChange={(v) => onChange((v && typeof v === 'object' ? v : {}) as Record<string, unknown>, 'params')}
      />
    );
  }
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const known = new Set(Object.keys(properties));
  const unknownErrors = ctx.errors.filter((e) => e.param && !known.has(String(e.param).split(/[.[]/)[0] ?? ''));
  return (
    <div className="param-form">
      {Object.keys(properties).length === 0 && <p className="muted">No parameters.</p>}
      {Object.entries(properties).map(([name, s]) => (
        <Field
          key={name}
          name={name}
          path={[name]}
          schema={s}
          value={params[name]}
          required={required.has(name)}
          ctx={ctx}
          topParam={name}
          onChange={(v) => {
            const next = { ...params };
            if (v === undefined) delete next[name];
            else next[name] = v;
            onChange(next, name);
          }}
        />
      ))}
      {unknownErrors.length > 0 && (
        <div className="field-error">
          {unknownErrors.map((e, i) => (
            <div key={i}>
              {String(e.param)}: {e.message}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

/** Sensible starting parameters for a new node of a kind (required lists empty, enums first). */
export function defaultParams(schema: JsonSchema | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!schema) return out;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of (schema.required as string[] | undefined) ?? []) {
    const s = properties[name];
    if (!s) continue;
    const types = typesOf(s);
    if (types.includes('array')) out[name] = [];
    else if (types.includes('integer') || types.includes('number')) out[name] = typeof s.minimum === 'number' ? s.minimum : 1;
    else if (types.includes('string')) out[name] = '';
  }
  return out;
}
