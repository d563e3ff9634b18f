// Explain a row (docs/api.md): GET /api/runs/<id>/explain/?view=&row=&tick= answers why
// the row is in the view at the tick and why it changed then, operator by operator.
import { ApiError, errorMessages, request, type ApiSchemas, type Row } from '../api';

// The answer's types are the server's (runs/api/serializers.py, generated into
// api/schema.d.ts by ./scripts/api-types): a field added, renamed or dropped on either
// side fails the type check.

/** A logged push of an input row. */
export type PushRef = ApiSchemas['PushRef'];
/** A row an operator used; `step` explains it in turn, `ref` names a step shown already. */
export type Use = ApiSchemas['ExplainUse'];
export type Group = ApiSchemas['ExplainGroup'];
/** One operator's part in a row's derivation (mode value: a circuit with z⁻¹, I or D
 * runs as drawn: the node's stream value at `tick`). */
export type Step = ApiSchemas['ExplainStep'];
export type InputRowRef = ApiSchemas['InputRowRef'];
export type Explanation = ApiSchemas['Explanation'];

/** What to explain: a row of a view (or of any node, at an iteration inside a fixed point). */
export interface ExplainTarget {
  view?: string;
  node?: string;
  iteration?: number | number[] | null;
  row: Row;
  tick: number;
  mode?: 'contents' | 'change';
  page?: number;
}

export function explainPath(runId: number, target: ExplainTarget): string {
  const params = new URLSearchParams();
  if (target.view) params.set('view', target.view);
  if (target.node) params.set('node', target.node);
  if (target.iteration !== undefined && target.iteration !== null) params.set('iteration', JSON.stringify(target.iteration));
  params.set('row', JSON.stringify(target.row));
  params.set('tick', String(target.tick));
  if (target.mode) params.set('mode', target.mode);
  if (target.page) params.set('page', String(target.page));
  return `/api/runs/${runId}/explain/?${params.toString()}`;
}

/** A log too large to explain in the request: queued (202), polled until done. */
type Queued = ApiSchemas['QueuedExplanation'];

export const POLL_MS = 500;

async function explain(runId: number, target: ExplainTarget): Promise<Explanation> {
  let body = await request<Explanation | Queued>('GET', explainPath(runId, target));
  while ('url' in body && (body.status === 'queued' || body.status === 'running')) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    body = await request<Queued>('GET', body.url);
  }
  if ('url' in body && body.status === 'failed') {
    const error = body.error ?? { status: 500, detail: 'The explanation failed.', errors: [] };
    throw new ApiError(error.status, error, errorMessages({ detail: error.detail }));
  }
  return body as Explanation;
}

export const explainApi = { explain };

/** A step followed by its single-input successors: the steps shown on one level (a
 * chain of map/union/delay... steps), and the step where the derivation branches or ends. */
export function chainOf(step: Step): Step[] {
  const chain = [step];
  let current = step;
  for (;;) {
    const only = current.groups.length === 1 && current.groups[0]!.total === 1 ? current.groups[0]!.uses[0] : undefined;
    if (!only?.step) return chain;
    current = only.step;
    chain.push(current);
  }
}

/** Every distinct push the explanation mentions, in log order. */
export function pushesOf(explanation: Explanation): (PushRef & { input: string })[] {
  const found = new Map<string, PushRef & { input: string }>();
  for (const item of [...explanation.causes, ...explanation.inputs]) {
    for (const push of item.pushes) {
      const key = `${push.sequence}:${JSON.stringify(push.row)}`;
      if (!found.has(key)) found.set(key, { ...push, input: item.input });
    }
  }
  return [...found.values()].sort((a, b) => a.sequence - b.sequence);
}

const BRANCHING = new Set(['join', 'semijoin', 'antijoin', 'left_join', 'asof_join', 'aggregate', 'top_k', 'window_aggregate', 'difference']);

function iterationOf(iteration: number | number[] | null): string {
  if (iteration === null) return '';
  return ` (iteration ${Array.isArray(iteration) ? iteration.join('.') : iteration})`;
}

function rowText(row: Row): string {
  return `{${Object.entries(row).map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v ?? null)}`).join(', ')}}`;
}

/** The derivation in brief: each step where rows meet (a join's pair, a group, a
 * difference), deepest last, as one line: where, what it made, from which rows. */
export function briefOf(root: Step): { id: number; text: string }[] {
  const out: { id: number; text: string }[] = [];
  const seen = new Set<number>();
  const visit = (step: Step) => {
    if (seen.has(step.id)) return;
    seen.add(step.id);
    if (BRANCHING.has(step.kind)) {
      const parts = step.groups.map((g) => {
        const rows = g.uses.map((u) => `${rowText(u.row)} of ${u.node}${iterationOf(u.iteration)}`).join(' and ');
        const more = g.total > g.uses.length ? ` and ${g.total - g.uses.length} more` : '';
        return `${g.label}: ${rows || 'no rows'}${more}`;
      });
      out.push({ id: step.id, text: `${step.kind} ${step.node}${iterationOf(step.iteration)} made ${rowText(step.row)} from ${parts.join('; ')}` });
    }
    for (const g of step.groups) for (const u of g.uses) if (u.step) visit(u.step);
  };
  visit(root);
  return out;
}
