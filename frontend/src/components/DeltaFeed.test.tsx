// @vitest-environment jsdom
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { DeltaFeed } from './DeltaFeed';

afterEach(cleanup);

describe('DeltaFeed', () => {
  it('shows list values as compact JSON', () => {
    render(
      <DeltaFeed
        view="v"
        entries={[
          { id: 2, tick: 3, weight: -1, data: { id: 1, tags: ['a', 'b'], scores: [1, null, 3] } },
          { id: 1, tick: 2, weight: 1, data: { id: 2, tags: [], scores: null } },
        ]}
      />,
    );
    expect(within(screen.getByTestId('delta-feed-v')).getAllByTestId('delta-row').map((r) => r.textContent)).toEqual([
      '-1  tick 3  {id: 1, tags: ["a","b"], scores: [1,null,3]}',
      '+1  tick 2  {id: 2, tags: [], scores: null}',
    ]);
  });
});
