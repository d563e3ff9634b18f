// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { fromRows } from '../zset';
import { ViewTable } from './ViewTable';

afterEach(cleanup);

const cells = () =>
  within(screen.getByTestId('view-table-v'))
    .getAllByTestId('view-row')
    .map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent));

describe('ViewTable', () => {
  it('sorts by a clicked column, ascending then descending then back', () => {
    const zset = fromRows([
      { data: { name: 'b', n: 1 }, weight: 1 },
      { data: { name: 'a', n: 3 }, weight: 1 },
      { data: { name: 'c', n: 2 }, weight: 1 },
    ]);
    render(<ViewTable view="v" zset={zset} />);
    expect(cells()).toEqual([['a', '3'], ['b', '1'], ['c', '2']]);
    fireEvent.click(screen.getByTestId('sort-v-n'));
    expect(cells()).toEqual([['b', '1'], ['c', '2'], ['a', '3']]);
    fireEvent.click(screen.getByTestId('sort-v-n'));
    expect(cells()).toEqual([['a', '3'], ['c', '2'], ['b', '1']]);
    expect(screen.getByTestId('sort-v-n').textContent).toBe('n ▼');
    fireEvent.click(screen.getByTestId('sort-v-n'));
    expect(cells()).toEqual([['a', '3'], ['b', '1'], ['c', '2']]);
  });

  it('pages a large view and renders only a window of a long page', () => {
    // jsdom has no layout: give the scroll box a height so the virtualiser has a window.
    const height = vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockReturnValue(420);
    const width = vi.spyOn(HTMLElement.prototype, 'clientWidth', 'get').mockReturnValue(600);
    onTestFinished(() => {
      height.mockRestore();
      width.mockRestore();
    });
    const zset = fromRows(Array.from({ length: 250 }, (_, i) => ({ data: { id: i }, weight: 1 })));
    render(<ViewTable view="v" zset={zset} />);
    expect(screen.getByTestId('view-table-v').getAttribute('data-rows')).toBe('250');
    expect(screen.getByTestId('page-label-v').textContent).toBe('1–100 of 250');
    const firstPage = cells();
    // Virtualised: fewer rows in the DOM than on the page, starting at the first one.
    expect(firstPage.length).toBeLessThan(100);
    expect(firstPage.length).toBeGreaterThan(5);
    expect(firstPage[0]).toEqual(['0']);
    fireEvent.click(screen.getByTestId('page-next-v'));
    fireEvent.click(screen.getByTestId('page-next-v'));
    expect(screen.getByTestId('page-label-v').textContent).toBe('201–250 of 250');
    expect(cells()[0]).toEqual(['200']);
    expect((screen.getByTestId('page-next-v') as HTMLButtonElement).disabled).toBe(true);
  });

  it('shows weights only when some row is not +1', () => {
    render(<ViewTable view="v" zset={fromRows([{ data: { id: 1 }, weight: 2 }])} />);
    expect(cells()).toEqual([['1', '2']]);
  });

  it('renders lists as compact JSON and sorts by a list column', () => {
    const zset = fromRows([
      { data: { id: 1, tags: ['a', 'b'], scores: [1, null, 3] }, weight: 1 },
      { data: { id: 2, tags: [], scores: null }, weight: 1 },
      { data: { id: 3, tags: ['a'], scores: [2.5] }, weight: 1 },
    ]);
    render(<ViewTable view="v" zset={zset} />);
    expect(cells()).toEqual([
      ['1', '["a","b"]', '[1,null,3]'],
      ['2', '[]', 'null'],
      ['3', '["a"]', '[2.5]'],
    ]);
    fireEvent.click(screen.getByTestId('sort-v-tags'));
    expect(cells().map((r) => r[1])).toEqual(['[]', '["a"]', '["a","b"]']);
  });
});
