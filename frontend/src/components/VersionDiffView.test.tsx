// @vitest-environment jsdom
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { VersionDiff } from '../api/editor';
import { VersionDiffView } from './VersionDiffView';

afterEach(cleanup);

const edge = (a: string, b: string) => ({ from: { node: a, port: 'out' }, to: { node: b, port: 'in' } });

const diff: VersionDiff = {
  circuit: 1,
  a: 1,
  b: 3,
  nodes: {
    added: [{ id: 'small', kind: 'filter' }],
    removed: [],
    changed: [
      {
        id: 'big',
        fields: ['params.predicate', 'position.x'],
        changes: { 'params.predicate': { from: 'amount > 100', to: 'amount > 5' }, 'position.x': { from: 220, to: 240 } },
      },
    ],
  },
  edges: { added: [edge('orders', 'small')], removed: [] },
  document: { 'metadata.source.text': { from: 'SELECT 1', to: 'SELECT 2' } },
  authors: [
    { change: 'node_added', node: 'small', authors: ['carol'] },
    { change: 'node_changed', node: 'big', field: 'params.predicate', authors: ['alice', 'bob'] },
    { change: 'node_changed', node: 'big', field: 'position.x', authors: [] },
    { change: 'edge_added', edge: 'orders.out->small.in', authors: ['carol'] },
    { change: 'document_changed', field: 'metadata.source.text', authors: ['bob'] },
  ],
};

describe('VersionDiffView', () => {
  it('names who changed each item beside it, and nobody where nobody is known', () => {
    render(<VersionDiffView diff={diff} />);
    const field = (name: string) => screen.getAllByTestId('diff-field').find((li) => li.dataset.field === name)!;
    expect(field('params.predicate').textContent).toBe('params.predicate: amount > 100 → amount > 5 · alice, bob');
    expect(field('position.x').textContent).toBe('position.x: 220 → 240');
    expect(screen.getByTestId('diff-added').textContent).toBe('+ node small (filter) · carol');
    expect(screen.getByText('+ wire orders.out → small.in').parentElement!.textContent).toBe('+ wire orders.out → small.in · carol');
    expect(screen.getByTestId('diff-document-field').textContent).toBe('~ metadata.source.text: SELECT 1 → SELECT 2 · bob');
  });

  it('cuts a long text of the document to a line, whole on hover, and leaves node values whole', () => {
    const long = `SELECT ${'amount, '.repeat(40)}id FROM orders`;
    const predicate = `amount > ${'1'.repeat(150)}`;
    const changes = { 'params.predicate': { from: 'amount > 100', to: predicate } };
    render(
      <VersionDiffView
        diff={{ ...diff, nodes: { ...diff.nodes, changed: [{ id: 'big', fields: ['params.predicate'], changes }] }, document: { 'metadata.source.text': { from: 'SELECT 1', to: long } } }}
      />,
    );
    const shownText = screen.getByTitle(long);
    expect(shownText.textContent).toBe(`${long.slice(0, 119)}…`);
    expect(screen.getAllByTestId('diff-field')[0]!.textContent).toContain(predicate);
  });

  it('says there is no difference only when nothing changed, the document included', () => {
    const none = { ...diff, nodes: { added: [], removed: [], changed: [] }, edges: { added: [], removed: [] }, authors: [] };
    const { rerender } = render(<VersionDiffView diff={none} />);
    expect(screen.queryByText('No differences.')).toBeNull(); // the SQL text changed
    rerender(<VersionDiffView diff={{ ...none, document: {} }} />);
    expect(screen.getByText('No differences.')).toBeTruthy();
  });
});
