// The operator catalog as the editor uses it: palette groups, ports per kind, and each
// kind's `params` JSON Schema taken from the circuit format's per-kind rules.

import type { JsonSchema, Operator } from '../api/editor';
import type { PortCatalog } from './model';

export const GROUPS: { id: string; title: string }[] = [
  { id: 'tables', title: 'Tables' },
  { id: 'relational', title: 'Relational' },
  { id: 'aggregates', title: 'Aggregates' },
  { id: 'windows', title: 'Windows' },
  { id: 'primitives', title: 'DBSP primitives' },
  { id: 'recursion', title: 'Recursion' },
];

/** The fixed point and its boundary nodes, for engines whose catalog does not list them yet. */
export const RECURSION_OPERATORS: Operator[] = [
  {
    kind: 'fixedpoint',
    title: 'Fixed point',
    category: 'recursion',
    inputs: [],
    outputs: [],
    linear: false,
    stream: false,
    doc: 'fixedpoint: iterates its subcircuit until its exports stop changing. Its input ports are its import/delta0 nodes, its output ports its export nodes; cycles inside go through z⁻¹.',
  },
  {
    kind: 'import',
    title: 'Import (outer relation)',
    category: 'recursion',
    inputs: [],
    outputs: ['out'],
    linear: true,
    stream: false,
    doc: 'import: the outer relation, constant across inner iterations (inside a fixed point).',
  },
  {
    kind: 'delta0',
    title: 'δ₀ (outer change)',
    category: 'recursion',
    inputs: [],
    outputs: ['out'],
    linear: true,
    stream: false,
    doc: 'delta0: the outer change as an impulse at inner iteration 0 (inside a fixed point).',
  },
  {
    kind: 'export',
    title: 'Export (fixed-point value)',
    category: 'recursion',
    inputs: ['in'],
    outputs: [],
    linear: true,
    stream: false,
    doc: 'export: the value at the fixed point (mode "value") or the sum over inner iterations (mode "sum").',
  },
];

const BUILTIN_PARAMS: Record<string, JsonSchema> = {
  fixedpoint: { type: 'object', properties: { max_iterations: { type: 'integer', minimum: 1 } } },
  export: { type: 'object', properties: { mode: { enum: ['value', 'sum'] } } },
  import: { type: 'object', properties: {} },
  delta0: { type: 'object', properties: {} },
};

export function groupOf(category: string): string {
  const c = category.toLowerCase();
  if (c.startsWith('table') || c === 'io') return 'tables';
  if (c.startsWith('aggreg')) return 'aggregates';
  if (c.startsWith('window')) return 'windows';
  if (c.startsWith('primitive') || c === 'dbsp') return 'primitives';
  if (c.startsWith('recurs')) return 'recursion';
  return 'relational';
}

/** The catalog with the recursion operators added when the engine does not list them. */
export function withRecursion(operators: Operator[]): Operator[] {
  const known = new Set(operators.map((o) => o.kind));
  return [...operators, ...RECURSION_OPERATORS.filter((o) => !known.has(o.kind))];
}

export function portCatalog(operators: Operator[]): PortCatalog {
  return Object.fromEntries(operators.map((o) => [o.kind, { inputs: o.inputs, outputs: o.outputs }]));
}

/** Words a user may type for an operator whose name does not say them (SQL and DBSP terms). */
const KEYWORDS: Record<string, string> = {
  aggregate: 'sum count avg average min max group by',
  tumbling_window: 'sum count avg window time',
  sliding_window: 'sum count avg window hop time',
  session_window: 'sum count avg window gap time',
  filter: 'where predicate',
  map: 'select project compute column',
  flat_map: 'unnest explode split',
  difference: 'except minus subtract',
  distinct: 'unique dedupe set',
  delay: 'z^-1 z-1 previous',
  integrate: 'accumulate running total',
  differentiate: 'changes delta',
  join: 'inner match',
  asof_join: 'asof as-of match_condition nearest latest time side input',
  top_k: 'limit order rank',
  window_aggregate: 'over rolling moving average running total frame preceding',
  union: 'concat plus',
};

/**
 * Operators matching a search, grouped in palette order. Names come first: when the
 * words match an operator's kind or title, only those are listed; else operators known by
 * those words (typing "sum" lists aggregate and windows, not union for its doc's "sums");
 * else those whose category or documentation mentions them.
 */
export function paletteGroups(operators: Operator[], search: string): { id: string; title: string; operators: Operator[] }[] {
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  const tiers = [
    (o: Operator) => `${o.kind} ${o.title}`,
    (o: Operator) => `${o.kind} ${o.title} ${KEYWORDS[o.kind] ?? ''}`,
    (o: Operator) => `${o.kind} ${o.title} ${KEYWORDS[o.kind] ?? ''} ${o.category} ${o.doc}`,
  ];
  let found = operators;
  for (const text of tiers) {
    found = operators.filter((o) => words.every((w) => text(o).toLowerCase().includes(w)));
    if (found.length) break;
  }
  return GROUPS.map((g) => ({ ...g, operators: found.filter((o) => groupOf(o.category) === g.id) })).filter((g) => g.operators.length > 0);
}

/** Resolves local `$ref`s (`#/$defs/...`) of the circuit format. */
function resolve(schema: unknown, root: JsonSchema, depth = 0): unknown {
  if (depth > 20 || schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((s) => resolve(s, root, depth + 1));
  const obj = schema as Record<string, unknown>;
  if (typeof obj.$ref === 'string' && obj.$ref.startsWith('#/')) {
    let target: unknown = root;
    for (const part of obj.$ref.slice(2).split('/')) target = (target as Record<string, unknown>)?.[part];
    const { $ref: _ref, ...rest } = obj;
    void _ref;
    return resolve({ ...(target as object), ...rest }, root, depth + 1);
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, resolve(v, root, depth + 1)]));
}

/** kind -> params JSON Schema, from `$defs.node.allOf` if/then rules (const or enum on kind). */
export function paramSchemas(format: JsonSchema, operators: Operator[] = []): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = { ...BUILTIN_PARAMS };
  const defs = (format.$defs ?? {}) as Record<string, JsonSchema>;
  const rules = ((defs.node ?? {}) as { allOf?: unknown[] }).allOf ?? [];
  for (const rule of rules) {
    const r = rule as { if?: { properties?: { kind?: { const?: string; enum?: string[] } } }; then?: { properties?: { params?: JsonSchema } } };
    const kindRule = r.if?.properties?.kind;
    const params = r.then?.properties?.params;
    if (!kindRule || !params) continue;
    const kinds = kindRule.const !== undefined ? [kindRule.const] : (kindRule.enum ?? []);
    for (const kind of kinds) out[kind] = resolve(params, format) as JsonSchema;
  }
  for (const op of operators) {
    if (op.params) out[op.kind] = resolve(op.params, format) as JsonSchema;
    else if (!out[op.kind]) out[op.kind] = { type: 'object', properties: {} };
  }
  return out;
}
