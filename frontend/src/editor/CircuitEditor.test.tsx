// @vitest-environment jsdom
// The editor rendered in jsdom with a stubbed document history: read-only (a shared
// link) ignores every editing shortcut, while an editable one runs them.
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Doc } from './model';
import type { DocumentHistory } from './useDocumentHistory';

const autoLayout = vi.fn(async (doc: Doc) => ({ ...doc, nodes: doc.nodes.map((n) => ({ ...n, position: { x: 999, y: 999 } })) }));

vi.mock('./layout', () => ({
  autoLayout: (doc: Doc) => autoLayout(doc),
  needsLayout: () => false,
}));

vi.mock('./useCatalog', () => ({
  useCatalog: () => ({
    catalog: {
      operators: [],
      ports: { input: { inputs: [], outputs: ['out'] }, output: { inputs: ['in'], outputs: [] } },
      params: {},
    },
    error: null,
  }),
}));

vi.mock('../api/editor', async (original) => ({
  ...(await original<typeof import('../api/editor')>()),
  editorApi: { validate: () => Promise.resolve({ valid: true, errors: [], schemas: {} }) },
}));

const { CircuitEditor } = await import('./CircuitEditor');

const DOC: Doc = {
  format: 'dbspweb.circuit',
  version: 1,
  nodes: [
    { id: 'tx', kind: 'input', params: { schema: [{ name: 'id', type: 'bigint' }] }, position: { x: 0, y: 0 } },
    { id: 'out', kind: 'output', params: {}, position: { x: 300, y: 0 } },
  ],
  edges: [{ from: { node: 'tx', port: 'out' }, to: { node: 'out', port: 'in' } }],
};

const CIRCUIT_JSON = JSON.stringify({ format: 'dbspweb.circuit', version: 1, nodes: [{ id: 'extra', kind: 'output', params: {} }], edges: [] });

type Apply = DocumentHistory['apply'];
type Step = DocumentHistory['undo'];

function history() {
  const state = {
    doc: DOC,
    apply: vi.fn<Apply>(),
    undo: vi.fn<Step>(),
    redo: vi.fn<Step>(),
    reset: vi.fn(),
    load: vi.fn(),
    adjust: vi.fn(),
    generation: 0,
    isDirty: () => false,
    canUndo: true,
    canRedo: true,
    dirty: false,
    markSaved: vi.fn(),
  };
  return state satisfies DocumentHistory;
}

async function key(key: string, mods: { ctrlKey?: boolean; shiftKey?: boolean; metaKey?: boolean } = {}) {
  await act(async () => {
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true, ...mods }));
  });
}

async function clipboard(type: 'paste' | 'cut', text = '') {
  await act(async () => {
    const event = new Event(type, { bubbles: true, cancelable: true });
    const data = { getData: () => text, setData: vi.fn() };
    Object.defineProperty(event, 'clipboardData', { value: data });
    document.dispatchEvent(event);
  });
}

/** Lets timers (the Ctrl+V fallback, the layout's fit) and promises settle. */
async function settle(ms = 150) {
  await act(async () => {
    await new Promise((resolve) => setTimeout(resolve, ms));
  });
}

beforeAll(() => {
  // What React Flow needs from a browser that jsdom lacks.
  class ResizeObserver {
    observe() {}
    unobserve() {}
    disconnect() {}
  }
  vi.stubGlobal('ResizeObserver', ResizeObserver);
  class DOMMatrixReadOnly {
    m22 = 1;
    constructor(transform?: string) {
      const scale = transform?.match(/scale\(([1-9.])\)/)?.[1];
      this.m22 = scale !== undefined ? +scale : 1;
    }
  }
  vi.stubGlobal('DOMMatrixReadOnly', DOMMatrixReadOnly);
});

beforeEach(() => {
  autoLayout.mockClear();
  (document.activeElement as HTMLElement | null)?.blur?.();
});

afterEach(cleanup);

describe('CircuitEditor shortcuts', () => {
  it('read-only: Shift+L, Ctrl+V, cut, Delete, Ctrl+G, undo and redo change nothing', async () => {
    const state = history();
    render(<CircuitEditor state={state} readOnly />);
    expect(screen.getByTestId('circuit-editor').className).toContain('readonly');
    expect(screen.queryByTestId('auto-layout')).toBeNull();

    await key('a', { ctrlKey: true }); // selecting is allowed: everything is selected now
    await key('c', { ctrlKey: true }); // and copying (into the page clipboard)
    await key('L', { shiftKey: true });
    await key('v', { ctrlKey: true });
    await clipboard('paste', CIRCUIT_JSON);
    await clipboard('cut');
    await key('x', { ctrlKey: true });
    await key('Delete');
    await key('Backspace');
    await key('g', { ctrlKey: true });
    await key('z', { ctrlKey: true });
    await key('z', { ctrlKey: true, shiftKey: true });
    await key('y', { ctrlKey: true });
    await settle();

    expect(autoLayout).not.toHaveBeenCalled();
    expect(state.apply).not.toHaveBeenCalled();
    expect(state.undo).not.toHaveBeenCalled();
    expect(state.redo).not.toHaveBeenCalled();
  });

  it('editable: the same shortcuts do edit (so the read-only test is not vacuous)', async () => {
    const state = history();
    render(<CircuitEditor state={state} />);

    await key('L', { shiftKey: true });
    await settle();
    expect(autoLayout).toHaveBeenCalledOnce();
    expect(state.apply).toHaveBeenCalledTimes(1);
    const laid = state.apply.mock.calls[0]![0](DOC);
    expect(laid.nodes.every((n) => n.position?.x === 999)).toBe(true);

    await key('z', { ctrlKey: true });
    await key('y', { ctrlKey: true });
    expect(state.undo).toHaveBeenCalledOnce();
    expect(state.redo).toHaveBeenCalledOnce();

    await clipboard('paste', CIRCUIT_JSON);
    expect(state.apply).toHaveBeenCalledTimes(2);

    await key('a', { ctrlKey: true });
    await key('Delete');
    expect(state.apply).toHaveBeenCalledTimes(3);
    const removed = state.apply.mock.calls[2]![0](DOC);
    expect(removed.nodes).toHaveLength(0);
  });
});
