// The editor's side panel: the selected node (name, label, problems, parameter form, port
// schemas, documentation) or, with nothing selected, the circuit's summary and problems.

import { useState } from 'react';
import type { Validation } from '../api/editor';
import { allEdges, allNodes, findNode, FIXEDPOINT, paramErrors, renameNode, updateNode, type Doc } from './model';
import { schemaText } from './nodes';
import { ParamForm } from './ParamForm';
import type { DocumentHistory } from './useDocumentHistory';
import type { Catalog } from './useCatalog';
import type { JsonSchema } from '../api/editor';
import { ConnectorsSection, type DeclaredConnector } from '../connectors/ConnectorsSection';
import '../connectors/connectors.css';

/** Input and output nodes carry `params.connectors`: edited in their own section, not the form. */
const CONNECTOR_KINDS = new Set(['input', 'output']);

function withoutConnectors(schema: JsonSchema | undefined): JsonSchema | undefined {
  const properties = schema?.properties as Record<string, JsonSchema> | undefined;
  if (!schema || !properties || !('connectors' in properties)) return schema;
  const { connectors: _gone, ...rest } = properties;
  void _gone;
  return { ...schema, properties: rest };
}

export function CircuitSummary({ doc, validation, selectedCount, readOnly }: { doc: Doc; validation: Validation | null; selectedCount: number; readOnly: boolean }) {
  const count = allNodes(doc).length;
  return (
    <div>
      <h3>Circuit</h3>
      <p className="muted">
        {count} node{count === 1 ? '' : 's'}, {allEdges(doc).length} wire{allEdges(doc).length === 1 ? '' : 's'}
        {selectedCount > 1 ? ` · ${selectedCount} selected` : ''}
      </p>
      {validation && !validation.valid && (
        <>
          <h4>Problems</h4>
          <ul className="problems" data-testid="all-problems">
            {validation.errors.map((e, i) => (
              <li key={i}>{e.node ? <b>{e.node}: </b> : null}{e.message}</li>
            ))}
          </ul>
        </>
      )}
      {!readOnly && (
        <>
          <h4>How to</h4>
          <ul className="muted">
            <li>Drag operators from the palette (or click them).</li>
            <li>Wire an output (right) to an input (left); drop a wire on empty canvas to add a connected node.</li>
            <li>Select a node to edit its parameters here.</li>
            <li>Shift-drag or Shift-click to select several; Ctrl+G groups them into a fixed point.</li>
            <li>Ctrl+Z / Ctrl+Shift+Z undo/redo; Ctrl+C / Ctrl+V copy/paste (as JSON, also between circuits); Del deletes; F fits; Shift+L lays out.</li>
          </ul>
        </>
      )}
    </div>
  );
}

export function NodePanel({ id, doc, catalog, validation, apply, readOnly, onRenamed }: {
  id: string;
  doc: Doc;
  catalog: Catalog;
  validation: Validation | null;
  apply: DocumentHistory['apply'];
  readOnly: boolean;
  onRenamed: (id: string) => void;
}) {
  const node = findNode(doc, id)!;
  const [name, setName] = useState(id);
  const [renameError, setRenameError] = useState<string | null>(null);
  const op = catalog.operators.find((o) => o.kind === node.kind);
  const errors = validation?.errors.filter((e) => e.node === id) ?? [];
  // Each problem is said once here: under its field when the form has one, else in this list.
  const formSchema = withoutConnectors(catalog.params[node.kind]);
  const formParams = Object.keys((formSchema as { properties?: object } | undefined)?.properties ?? {});
  const panelErrors = errors.filter((e) => !formParams.some((p) => paramErrors([e], p).length > 0));
  const feeds = new Map<string, string>();
  for (const { edge } of allEdges(doc)) feeds.set(`${edge.to.node}.${edge.to.port}`, edge.from.node);
  const inputs = node.kind === FIXEDPOINT ? [] : (catalog.ports[node.kind]?.inputs ?? []);
  const portFor = (param: string) => {
    if (param.startsWith('left')) return 'left';
    if (param.startsWith('right')) return 'right';
    return inputs.includes('in') ? 'in' : inputs[0];
  };
  const columnsFor = (param: string) => {
    const port = portFor(param);
    const source = port ? feeds.get(`${id}.${port}`) : undefined;
    return source ? validation?.schemas[source] : undefined;
  };

  const commitRename = () => {
    if (name === id) return;
    try {
      const next = renameNode(doc, id, name.trim());
      apply(() => next);
      setRenameError(null);
      onRenamed(name.trim());
    } catch (err) {
      setRenameError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <div data-testid="node-panel" data-node-id={id}>
      <h3>
        {op?.title ?? node.kind} <span className="muted">({node.kind})</span>
      </h3>
      <label>
        Name (id)
        <input
          type="text"
          data-testid="node-id"
          value={name}
          readOnly={readOnly}
          onChange={(e) => setName(e.target.value)}
          onBlur={commitRename}
          onKeyDown={(e) => {
            if (e.key === 'Enter') commitRename();
          }}
        />
      </label>
      {renameError && <div className="field-error" data-testid="node-id-error">{renameError}</div>}
      <label>
        Label (optional, shown instead of the id)
        <input
          type="text"
          data-testid="node-label"
          value={node.label ?? ''}
          readOnly={readOnly}
          onChange={(e) => {
            const label = e.target.value;
            apply((d) => updateNode(d, id, { label: label || undefined }), `label:${id}`);
          }}
        />
      </label>
      {node.kind === 'input' && <p className="muted">The input's name is the table you push to.</p>}
      {node.kind === 'output' && <p className="muted">The output's name is the view you watch.</p>}
      {panelErrors.length > 0 && (
        <ul className="problems" data-testid="node-problems">
          {panelErrors.map((e, i) => (
            <li key={i}>{e.message}</li>
          ))}
        </ul>
      )}
      <fieldset disabled={readOnly}>
        <legend>Parameters</legend>
        <ParamForm
          schema={formSchema}
          params={(node.params ?? {}) as Record<string, unknown>}
          ctx={{ columnsFor, errors }}
          onChange={(params, field) => apply((d) => updateNode(d, id, { params }), `params:${id}:${field}`)}
        />
      </fieldset>
      {CONNECTOR_KINDS.has(node.kind) && (
        <ConnectorsSection
          node={id}
          source={node.kind === 'input'}
          connectors={((node.params as Record<string, unknown> | undefined)?.connectors as DeclaredConnector[] | undefined) ?? []}
          readOnly={readOnly}
          onChange={(connectors, field) =>
            apply((d) => {
              const params = { ...((findNode(d, id)?.params ?? {}) as Record<string, unknown>) };
              if (connectors.length) params.connectors = connectors;
              else delete params.connectors;
              return updateNode(d, id, { params });
            }, `params:${id}:${field}`)
          }
        />
      )}
      <h4>Ports</h4>
      <ul className="muted port-schemas">
        {inputs.map((port) => {
          const src = feeds.get(`${id}.${port}`);
          return (
            <li key={port} data-testid={`port-schema-${port}`}>
              in <b>{port}</b>: {src ? `${src} → ${schemaText(validation?.schemas[src])}` : 'not connected'}
            </li>
          );
        })}
        {validation?.schemas[id] && (
          <li data-testid="port-schema-out">
            out: {schemaText(validation.schemas[id])}
          </li>
        )}
      </ul>
      {op?.doc && (
        <details>
          <summary>About {node.kind}</summary>
          <pre className="op-doc">{op.doc}</pre>
        </details>
      )}
      {readOnly ? null : (
        <p className="muted">
          <small>Edits are undoable (Ctrl+Z).</small>
        </p>
      )}
    </div>
  );
}
