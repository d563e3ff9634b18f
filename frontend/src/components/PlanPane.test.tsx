// @vitest-environment jsdom
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Doc } from '../editor/model';

let answer: { resolve: (d: Doc) => void; reject: (e: unknown) => void } | null = null;
const plan = vi.fn(
  (_doc: Doc) =>
    new Promise<Doc>((resolve, reject) => {
      answer = { resolve, reject };
    }),
);

vi.mock('../api/editor', () => ({ editorApi: { plan: (d: Doc) => plan(d) } }));
// The canvas needs a browser's layout; a stub shows what it was given.
vi.mock('../editor/CircuitCanvas', () => ({
  CircuitCanvas: (props: { document: Doc; testIdPrefix?: string }) => (
    <div data-testid={`${props.testIdPrefix ?? ''}circuit-canvas`} data-nodes={props.document.nodes.length} />
  ),
}));

const { PlanPane } = await import('./PlanPane');

const DOC: Doc = { format: 'dbspweb.circuit', version: 1, nodes: [{ id: 'tx', kind: 'input', params: {} }], edges: [] };
const PLAN: Doc = {
  format: 'dbspweb.circuit',
  version: 1,
  mode: 'incremental',
  nodes: [
    { id: 'tx', kind: 'input', params: {}, incremental: { form: 'identity' } },
    { id: 'tx_integrate', kind: 'integrate', params: {}, inserted: true },
  ],
  edges: [],
};

afterEach(() => {
  cleanup();
  plan.mockClear();
  answer = null;
});

describe('PlanPane', () => {
  it('shows a loading state until the compiled plan arrives, then the plan', async () => {
    render(<PlanPane doc={DOC} debounceMs={0} />);
    expect(screen.getByTestId('plan-loading').textContent).toContain('Compiling the incremental plan');
    expect(screen.getByTestId('plan-pane').getAttribute('aria-busy')).toBe('true');
    expect(screen.queryByTestId('plan-circuit-canvas')).toBeNull();

    await act(async () => new Promise((r) => setTimeout(r, 5)));
    expect(plan).toHaveBeenCalledOnce();
    expect(screen.getByTestId('plan-loading')).toBeTruthy(); // still waiting for the server

    await act(async () => answer!.resolve(PLAN));
    expect(screen.queryByTestId('plan-loading')).toBeNull();
    expect(screen.getByTestId('plan-pane').getAttribute('aria-busy')).toBe('false');
    expect(screen.getByTestId('plan-circuit-canvas').dataset.nodes).toBe('2');
    expect(screen.getByTestId('plan-pane').textContent).toContain('1 inserted state nodes');
  });

  it('says "recompiling" over the previous plan when the document changes, and shows errors', async () => {
    const { rerender } = render(<PlanPane doc={DOC} debounceMs={0} />);
    await act(async () => new Promise((r) => setTimeout(r, 5)));
    await act(async () => answer!.resolve(PLAN));

    rerender(<PlanPane doc={{ ...DOC, nodes: [...DOC.nodes] }} debounceMs={0} />);
    expect(screen.getByTestId('plan-loading').textContent).toContain('Recompiling');
    expect(screen.getByTestId('plan-circuit-canvas')).toBeTruthy();

    await act(async () => new Promise((r) => setTimeout(r, 5)));
    await act(async () => answer!.reject(new Error('cycle without a delay')));
    expect(screen.queryByTestId('plan-loading')).toBeNull();
    expect(screen.getByTestId('plan-error').textContent).toBe('cycle without a delay');
  });
});
