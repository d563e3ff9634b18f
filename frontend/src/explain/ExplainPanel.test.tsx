// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeltaFeed } from '../components/DeltaFeed';
import { ExplainPanel } from './ExplainPanel';
import { briefOf, chainOf, explainPath, pushesOf, type Explanation, type Step } from './explainApi';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const push = { sequence: 1, tick: 0, received_at: '2026-11-24T07:00:00+00:00', user: 'alice', weight: 1 };
const edge = (src: number, dst: number): Step => ({
  id: 10 + src, node: 'edges', kind: 'input', mode: 'contents', tick: 0, iteration: null, first_iteration: false,
  fixedpoint: null, row: { src, dst }, weight: 1, note: 'a row of the input table', groups: [],
  pushes: [{ ...push, row: { src, dst } }], pushes_count: 1,
});
// closure (0,2) <- join extend@1 of path (0,1) and edge (1,2): abridged from a real answer
const join: Step = {
  id: 3, node: 'extend', kind: 'join', mode: 'contents', tick: 0, iteration: 1, first_iteration: true, fixedpoint: 'tc',
  row: { src: 0, mid: 1, dst: 2 }, weight: 1, note: '',
  groups: [{ label: 'pair on mid = 1', total: 2, offset: 0, uses: [
    { port: 'left', node: 'edges', iteration: null, row: { src: 0, dst: 1 }, weight: 1, followed: true, step: edge(0, 1) },
    { port: 'right', node: 'edges', iteration: null, row: { src: 1, dst: 2 }, weight: 1, followed: true, step: edge(1, 2) },
  ] }],
};
const root: Step = {
  id: 1, node: 'closure', kind: 'output', mode: 'contents', tick: 0, iteration: null, first_iteration: false, fixedpoint: null,
  row: { src: 0, dst: 2 }, weight: 1, note: '',
  groups: [{ label: 'the view of its input', total: 1, offset: 0, uses: [
    { port: 'in', node: 'extend', iteration: 1, row: { src: 0, mid: 1, dst: 2 }, weight: 1, followed: true, step: join },
  ] }],
};
const explanation: Explanation = {
  run: 7, tick: 0, view: 'closure', node: 'closure', iteration: null, row: { src: 0, dst: 2 }, weight: 1, before: 1,
  truncated: false, contents: root, change: null,
  inputs: [0, 1].map((src) => ({ input: 'edges', row: { src, dst: src + 1 }, weight: 1, tick: 0, pushes: [{ ...push, row: { src, dst: src + 1 } }], pushes_count: 1 })),
  causes: [],
};

describe('explain', () => {
  it('puts single-input steps on one level and branches at a pair', () => {
    expect(chainOf(root).map((s) => s.node)).toEqual(['closure', 'extend']);
    expect(briefOf(root).map((l) => l.text)).toEqual([
      'join extend (iteration 1) made {src: 0, mid: 1, dst: 2} from pair on mid = 1: {src: 0, dst: 1} of edges and {src: 1, dst: 2} of edges',
    ]);
    expect(pushesOf(explanation).map((p) => [p.sequence, p.row])).toEqual([[1, { src: 0, dst: 1 }], [1, { src: 1, dst: 2 }]]);
    expect(explainPath(7, { view: 'closure', row: { src: 0, dst: 2 }, tick: 0 })).toBe(
      '/api/runs/7/explain/?view=closure&row=%7B%22src%22%3A0%2C%22dst%22%3A2%7D&tick=0',
    );
  });

  it('shows the derivation, its iteration and the pushes', async () => {
    const fetched: string[] = [];
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      fetched.push(url);
      return new Response(JSON.stringify(explanation), { status: 200, headers: { 'Content-Type': 'application/json' } });
    }));
    render(<ExplainPanel runId={7} target={{ view: 'closure', row: { src: 0, dst: 2 }, tick: 0 }} onClose={() => undefined} />);
    await waitFor(() => expect(screen.getAllByTestId('explain-step')).toHaveLength(4));
    expect(fetched[0]).toContain('/api/runs/7/explain/?view=closure');
    const steps = screen.getAllByTestId('explain-step');
    expect(steps.map((s) => [s.dataset.kind, s.dataset.iteration])).toEqual([['output', ''], ['join', '1'], ['input', ''], ['input', '']]);
    expect(screen.getByText('⤷ pair on mid = 1')).toBeTruthy();
    expect(screen.getAllByTestId('explain-push').map((r) => r.textContent)).toEqual([
      expect.stringContaining('#1'), expect.stringContaining('#1'),
    ]);
    expect(screen.getAllByTestId('explain-push')[0]!.textContent).toContain('alice');
  });

  it('an Explain button on a change gives its row and tick', () => {
    const asked: unknown[] = [];
    render(<DeltaFeed view="v" entries={[{ id: 1, tick: 2, weight: -1, data: { src: 0, dst: 3 } }]} onExplain={(row, tick) => asked.push([row, tick])} />);
    fireEvent.click(screen.getByTestId('explain-delta'));
    expect(asked).toEqual([[{ src: 0, dst: 3 }, 2]]);
  });
});

describe('a queued explanation', () => {
  it('is polled until the worker has done it', async () => {
    const answers = [
      { id: 4, status: 'queued', url: '/api/runs/7/explain/4/' },
      { id: 4, status: 'running', url: '/api/runs/7/explain/4/' },
      { ...explanation, id: 4, status: 'done', url: '/api/runs/7/explain/4/' },
    ];
    const fetched: string[] = [];
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      fetched.push(url);
      return new Response(JSON.stringify(answers.shift()), { status: fetched.length === 1 ? 202 : 200, headers: { 'Content-Type': 'application/json' } });
    }));
    const { explainApi } = await import('./explainApi');
    const e = await explainApi.explain(7, { view: 'closure', row: { src: 0, dst: 2 }, tick: 0 });
    expect(e.contents?.node).toBe('closure');
    expect(fetched.slice(1)).toEqual(['/api/runs/7/explain/4/', '/api/runs/7/explain/4/']);
  });

  it('that failed says why', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify({
      id: 5, status: 'failed', url: '/api/runs/7/explain/5/', error: { status: 404, detail: 'Nothing to explain: the row is not in it.', errors: [] },
    }), { status: 202, headers: { 'Content-Type': 'application/json' } })));
    const { explainApi } = await import('./explainApi');
    await expect(explainApi.explain(7, { view: 'closure', row: { src: 9, dst: 9 }, tick: 0 })).rejects.toThrow('Nothing to explain');
  });
});

describe('a large group', () => {
  it('shows a page and its count, and turns pages by asking for that step', async () => {
    const { StepTree } = await import('./StepTree');
    const rowsOf = (from: number) => Array.from({ length: 20 }, (_, i) => ({
      port: 'in', node: 'items', iteration: null, row: { k: 1, v: from + i }, weight: 1, followed: false,
    }));
    const aggregate = (offset: number): Step => ({
      id: 2, node: 'sums', kind: 'aggregate', mode: 'contents', tick: 3, iteration: null, first_iteration: false, fixedpoint: null,
      row: { k: 1, s: 4950000 }, weight: 1, note: '', groups: [{ label: 'group k = 1: 100000 rows', total: 100000, offset, uses: rowsOf(offset) }],
    });
    const fetched: string[] = [];
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      fetched.push(url);
      return new Response(JSON.stringify({ ...explanation, contents: aggregate(20) }), { status: 200, headers: { 'Content-Type': 'application/json' } });
    }));
    render(<StepTree step={aggregate(0)} runId={7} onOpen={() => undefined} />);
    expect(screen.getByTestId('explain-pager').textContent).toContain('showing 1–20 of 100000');
    fireEvent.click(screen.getByText('›'));
    await waitFor(() => expect(screen.getByTestId('explain-pager').textContent).toContain('showing 21–40 of 100000'));
    expect(decodeURIComponent(fetched[0]!)).toBe('/api/runs/7/explain/?node=sums&row={"k":1,"s":4950000}&tick=3&mode=contents&page=1');
  });
});

describe('a circuit run as drawn', () => {
  // I(x) at tick 2 holds k=1 from the changes of x at ticks 0 and 2 (abridged from a real answer)
  const change = (tick: number): Step => ({
    id: 10 + tick, node: 'x', kind: 'input', mode: 'value', tick, iteration: null, first_iteration: false, fixedpoint: null,
    row: { k: 1 }, weight: 1, note: `the change pushed at tick ${tick}`, groups: [],
  });
  const integrate = (offset: number): Step => ({
    id: 2, node: 'ix', kind: 'integrate', mode: 'value', tick: 2, iteration: null, first_iteration: false, fixedpoint: null,
    row: { k: 1 }, weight: 2, note: '', groups: [{ label: 'I: the values of x that carry it', total: 2, offset, uses: [
      { port: 'in', node: 'x', iteration: null, row: { k: 1 }, weight: 1, tick: offset ? 2 : 0, followed: true, step: change(offset ? 2 : 0) },
    ] }],
  });

  it('says the tick of a step at another tick, and turns a value’s pages as the change at its tick', async () => {
    const { StepTree } = await import('./StepTree');
    const fetched: string[] = [];
    vi.stubGlobal('fetch', vi.fn(async (url: string) => {
      fetched.push(url);
      return new Response(JSON.stringify({ ...explanation, change: integrate(1) }), { status: 200, headers: { 'Content-Type': 'application/json' } });
    }));
    render(<StepTree step={integrate(0)} runId={7} onOpen={() => undefined} />);
    expect(screen.getAllByTestId('explain-step-tick').map((b) => b.textContent)).toEqual(['tick 0']);
    fireEvent.click(screen.getByText('›'));
    await waitFor(() => expect(screen.getByTestId('explain-pager').textContent).toContain('showing 2–2 of 2'));
    expect(decodeURIComponent(fetched[0]!)).toBe('/api/runs/7/explain/?node=ix&row={"k":1}&tick=2&mode=change&page=1');
    expect(screen.queryAllByTestId('explain-step-tick')).toHaveLength(0); // the change of tick 2 itself
  });
});
