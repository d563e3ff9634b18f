// @vitest-environment jsdom
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeDecorations } from './graphDecorations';
import { NodeBadge } from './NodeBadge';

afterEach(cleanup);

describe('NodeBadge', () => {
  it('shows frontier, rows, state and time share', () => {
    const d = nodeDecorations(['fix', 'other'], { fix: { tick: 5, iteration: 3, converged: true } }, {
      fix: { rows_in: 4, rows_out: 2, state_rows: 10, ms: 3 },
      other: { ms: 1 },
    });
    render(<NodeBadge nodeId="fix" decoration={d.fix} />);
    const badge = screen.getByTestId('node-badge-fix');
    expect(badge.textContent).toBe('tick 5 · iter 3 ✓in 4 · out 2 · state 103.00 ms · 75%');
    expect(badge.dataset).toMatchObject({ frontierTick: '5', iteration: '3', converged: 'true', rowsIn: '4', stateRows: '10', share: '0.750' });
  });

  it('says when there is no tick yet', () => {
    render(<NodeBadge nodeId="x" decoration={undefined} />);
    expect(screen.getByTestId('node-badge-x').textContent).toBe('tick —');
  });
});
