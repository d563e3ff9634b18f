// Node renderers for React Flow: an operator box with typed port handles, and the fixed
// point as a group around its subcircuit. Marks and schemas come through CanvasContext.

import { createContext, useContext, type ReactNode } from 'react';
import { Handle, Position, type NodeProps } from '@xyflow/react';
import type { FlowNode } from './flow';
import type { DocNode, Schemas, ValidationMarks } from './model';

export interface CanvasContextValue {
  marks?: ValidationMarks;
  schemas?: Schemas;
  /** "node.port" of an input -> the source node feeding it (its schema is the port's). */
  feeds?: Map<string, string>;
  decorations?: Record<string, ReactNode>;
  readOnly: boolean;
  /** Prefix of test ids, so two canvases on one page stay distinguishable. */
  testIdPrefix: string;
}

export const CanvasContext = createContext<CanvasContextValue>({ readOnly: true, testIdPrefix: '' });

export function schemaText(columns: { name: string; type: string; nullable?: boolean }[] | undefined): string {
  if (!columns) return 'schema unknown (fix the errors upstream)';
  if (columns.length === 0) return '(no columns)';
  return columns.map((c) => `${c.name} ${c.type}${c.nullable === false ? ' not null' : ''}`).join(', ');
}

/** A one-line summary of a node's parameters, shown on the canvas. */
export function summary(node: DocNode): string {
  const p = (node.params ?? {}) as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String).join(', ') : '');
  switch (node.kind) {
    case 'input':
    case 'delay':
      return Array.isArray(p.schema) ? (p.schema as { name: string; type: string }[]).map((c) => `${c.name} ${c.type}`).join(', ') : '';
    case 'filter':
      return String(p.predicate ?? '');
    case 'map':
      return Array.isArray(p.columns) ? (p.columns as { name: string; expr: string }[]).map((c) => `${c.name} = ${c.expr}`).join(', ') : '';
    case 'aggregate': {
      const aggs = Array.isArray(p.aggregates)
        ? (p.aggregates as { fn: string; expr?: string; as: string }[]).map((a) => `${a.fn}(${a.expr ?? '*'}) as ${a.as}`).join(', ')
        : '';
      const by = list(p.group_by);
      return by ? `${aggs} by ${by}` : aggs;
    }
    case 'join':
    case 'semijoin':
    case 'antijoin':
    case 'left_join':
      return `${list(p.left_keys)} = ${list(p.right_keys)}`;
    case 'asof_join':
      return `${list(p.left_keys)} = ${list(p.right_keys)}, ${String(p.left_time ?? '')} ${String(p.match ?? '>=')} ${String(p.right_time ?? '')}${p.outer === false ? '' : ' (left)'}`;
    case 'top_k':
      return `k = ${String(p.k ?? '')}`;
    case 'window_aggregate': {
      const aggs = Array.isArray(p.aggregates)
        ? (p.aggregates as { fn: string; expr?: string | null; as: string }[]).map((a) => `${a.fn}(${a.expr ?? '*'}) as ${a.as}`).join(', ')
        : '';
      const frame = (p.frame ?? {}) as { unit?: string; start?: number | null; end?: number | null };
      const bound = (n: number | null | undefined, side: string) =>
        n === null || n === undefined ? `unbounded ${side}` : n === 0 ? 'current row' : `${Math.abs(n)} ${n < 0 ? 'preceding' : 'following'}`;
      const over = p.frame ? ` ${frame.unit ?? 'rows'} ${bound(frame.start, 'preceding')} to ${bound(frame.end, 'following')}` : '';
      const by = list(p.group_by);
      return `${aggs}${by ? ` by ${by}` : ''}${over}`;
    }
    case 'fixedpoint':
      return `max ${String(p.max_iterations ?? '')} iterations`;
    case 'output': {
      // a view compiled from SQL: its unnamed expressions' names as Spark gives them
      const names = p.sql_names && typeof p.sql_names === 'object' ? Object.entries(p.sql_names as Record<string, string>) : [];
      return names.map(([column, sql]) => `${sql} as ${column}`).join(', ');
    }
    case 'tumbling_window':
    case 'sliding_window':
    case 'session_window': {
      const span = node.kind === 'session_window' ? `gap ${String(p.gap ?? '?')}` : `size ${String(p.size ?? '?')}`;
      const slide = p.slide !== undefined ? ` / ${String(p.slide)}` : '';
      const late = p.lateness !== undefined ? `, late ${String(p.lateness)}` : '';
      const by = list(p.group_by);
      return `${span}${slide}${late} on ${String(p.time ?? '?')}${by ? ` by ${by}` : ''}`;
    }
    default: {
      const text = Object.keys(p).length ? JSON.stringify(p) : '';
      return text.length > 60 ? `${text.slice(0, 57)}…` : text;
    }
  }
}

function portTitle(ctx: CanvasContextValue, nodeId: string, port: string, direction: 'in' | 'out', sourceId?: string): string {
  const source = direction === 'out' ? sourceId ?? nodeId : ctx.feeds?.get(`${nodeId}.${port}`);
  if (!source) return `${port}: not connected`;
  return `${port}: ${schemaText(ctx.schemas?.[source])}`;
}

function Ports({ id, inputs, outputs, outSchemaOf }: { id: string; inputs: string[]; outputs: string[]; outSchemaOf?: (port: string) => string }) {
  const ctx = useContext(CanvasContext);
  const spread = (i: number, n: number) => `${((i + 1) / (n + 1)) * 100}%`;
  return (
    <>
      {inputs.map((port, i) => (
        <Handle
          key={`in-${port}`}
          type="target"
          position={Position.Left}
          id={port}
          style={{ top: spread(i, inputs.length) }}
          className="port port-in"
          data-testid={`${ctx.testIdPrefix}handle-${id}-${port}`}
          title={portTitle(ctx, id, port, 'in')}
          isConnectable={!ctx.readOnly}
        >
          {inputs.length > 1 && <span className="port-label port-label-in">{port}</span>}
        </Handle>
      ))}
      {outputs.map((port, i) => (
        <Handle
          key={`out-${port}`}
          type="source"
          position={Position.Right}
          id={port}
          style={{ top: spread(i, outputs.length) }}
          className="port port-out"
          data-testid={`${ctx.testIdPrefix}handle-${id}-${port}`}
          title={portTitle(ctx, id, port, 'out', outSchemaOf?.(port))}
          isConnectable={!ctx.readOnly}
        >
          {outputs.length > 1 && <span className="port-label port-label-out">{port}</span>}
        </Handle>
      ))}
    </>
  );
}

function Marks({ id }: { id: string }) {
  const ctx = useContext(CanvasContext);
  const errors = ctx.marks?.byNode[id] ?? [];
  const cycle = ctx.marks?.cycleNodes.has(id);
  const decoration = ctx.decorations?.[id];
  return (
    <>
      {errors.length > 0 && (
        // One line per problem, as wide as the node (never wider: a node must not grow onto
        // its neighbours); the whole text on hover and in the side panel.
        <ul className="node-errors" data-testid={`node-errors-${id}`} title={errors.map((e) => e.message).join('\n')}>
          {errors.map((e, i) => (
            <li key={i}>{e.message}</li>
          ))}
        </ul>
      )}
      {cycle && <div className="node-cycle">on a cycle without z⁻¹</div>}
      {decoration !== undefined && decoration !== null && <div className="node-decoration">{decoration}</div>}
    </>
  );
}

export function OperatorNode({ id, data, selected }: NodeProps<FlowNode>) {
  const ctx = useContext(CanvasContext);
  const node = data.node;
  const errors = ctx.marks?.byNode[id]?.length ?? 0;
  const cycle = ctx.marks?.cycleNodes.has(id);
  const inserted = node.inserted === true;
  const incremental = node.incremental as { form?: string; state?: string[] } | undefined;
  const classes = ['op-node', `kind-${node.kind}`];
  if (errors) classes.push('has-error');
  if (cycle) classes.push('on-cycle');
  if (selected) classes.push('selected');
  if (inserted) classes.push('inserted');
  if (data.inputs.length > 1) classes.push('multi-in');
  const text = summary(node);
  return (
    <div
      className={classes.join(' ')}
      data-testid={`${ctx.testIdPrefix}circuit-node`}
      data-node-id={id}
      data-kind={node.kind}
      data-errors={errors}
      title={ctx.schemas?.[id] ? `${id}: ${schemaText(ctx.schemas[id])}` : undefined}
    >
      <Ports id={id} inputs={data.inputs} outputs={data.outputs} />
      <div className="op-head">
        <span className="op-kind">{node.kind}</span>
        <span className="op-id">{node.label ?? id}</span>
        {errors > 0 && <span className="op-error-count" title={`${errors} problem(s)`}>!</span>}
      </div>
      {text && (
        <div className="op-summary" title={text}>
          {text}
        </div>
      )}
      {inserted && typeof node.state_of === 'string' && <div className="op-summary">state of {node.state_of}</div>}
      {incremental?.form && <div className="op-form">Δ form: {incremental.form}</div>}
      <Marks id={id} />
    </div>
  );
}

export function FixedpointNode({ id, data, selected }: NodeProps<FlowNode>) {
  const ctx = useContext(CanvasContext);
  const errors = ctx.marks?.byNode[id]?.length ?? 0;
  const classes = ['fp-node'];
  if (errors) classes.push('has-error');
  if (selected) classes.push('selected');
  return (
    <div className={classes.join(' ')} data-testid={`${ctx.testIdPrefix}circuit-node`} data-node-id={id} data-kind="fixedpoint" data-errors={errors}>
      <Ports id={id} inputs={data.inputs} outputs={data.outputs} outSchemaOf={(port) => port} />
      <div className="fp-head">
        <span className="op-kind">fixed point</span> <span className="op-id">{data.node.label ?? id}</span>{' '}
        <span className="muted">{summary(data.node)}</span>
      </div>
      <Marks id={id} />
    </div>
  );
}

export const nodeTypes = { operator: OperatorNode, fixedpoint: FixedpointNode };
