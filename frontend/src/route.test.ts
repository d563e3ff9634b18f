import { describe, expect, it } from 'vitest';
import { parseRoute } from './route';

describe('parseRoute', () => {
  it('parses the three pages', () => {
    expect(parseRoute('')).toEqual({ page: 'circuits' });
    expect(parseRoute('#/')).toEqual({ page: 'circuits' });
    expect(parseRoute('#/circuits/12')).toEqual({ page: 'circuit', id: 12 });
    expect(parseRoute('#/runs/5/')).toEqual({ page: 'run', id: 5 });
  });

  it('reports unknown paths', () => {
    expect(parseRoute('#/runs/abc')).toEqual({ page: 'notFound', path: '/runs/abc' });
  });
});
