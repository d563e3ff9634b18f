import { describe, expect, it } from 'vitest';
import { parseRoute } from './route';

describe('parseRoute', () => {
  it('parses the three pages', () => {
    expect(parseRoute('')).toEqual({ page: 'circuits' });
    expect(parseRoute('#/')).toEqual({ page: 'circuits' });
    expect(parseRoute('#/circuits/12')).toEqual({ page: 'circuit', id: 12 });
    expect(parseRoute('#/runs/5/')).toEqual({ page: 'run', id: 5 });
    expect(parseRoute('#/runs')).toEqual({ page: 'runs' });
  });

  it('reports unknown paths', () => {
    expect(parseRoute('#/runs/abc')).toEqual({ page: 'notFound', path: '/runs/abc' });
  });
});

describe('parseRoute (editor pages)', () => {
  it('parses new circuit, sign-up and shared links (hash or path)', () => {
    expect(parseRoute('#/circuits/new')).toEqual({ page: 'newCircuit' });
    expect(parseRoute('#/signup')).toEqual({ page: 'signup' });
    expect(parseRoute('', '/signup')).toEqual({ page: 'signup' });
    expect(parseRoute('#/shared/abc_DEF-12')).toEqual({ page: 'shared', token: 'abc_DEF-12' });
    expect(parseRoute('', '/shared/tok123/')).toEqual({ page: 'shared', token: 'tok123' });
    // A hash wins over the path.
    expect(parseRoute('#/circuits/3', '/shared/tok')).toEqual({ page: 'circuit', id: 3 });
  });
});

describe('parseRoute (comments)', () => {
  it('opens a comment thread on its circuit, and the mentions page', () => {
    expect(parseRoute('#/circuits/4/threads/17')).toEqual({ page: 'circuit', id: 4, thread: 17 });
    expect(parseRoute('#/mentions')).toEqual({ page: 'mentions' });
    expect(parseRoute('#/circuits/4/threads/x')).toEqual({ page: 'notFound', path: '/circuits/4/threads/x' });
  });
});
