import { describe, expect, it } from 'vitest';
import { canonicalKey, emptyZSet, fromRows, integrate, sortedRows, type ZSet } from './zset';

const rows = (z: ZSet) => [...z.values()];

describe('canonicalKey', () => {
  it('ignores object key order, recursively', () => {
    expect(canonicalKey({ b: 1, a: { y: 2, x: 3 } })).toBe(canonicalKey({ a: { x: 3, y: 2 }, b: 1 }));
  });

  it('distinguishes different values and types', () => {
    expect(canonicalKey({ a: 1 })).not.toBe(canonicalKey({ a: '1' }));
    expect(canonicalKey({ a: null })).not.toBe(canonicalKey({ a: false }));
    expect(canonicalKey([1, 2])).not.toBe(canonicalKey([2, 1]));
  });
});

describe('integrate', () => {
  it('inserts rows', () => {
    const z = integrate(emptyZSet, [
      { data: { id: 1, amount: 50 }, weight: 1 },
      { data: { id: 2, amount: 70 }, weight: 1 },
    ]);
    expect(z.size).toBe(2);
    expect(rows(z)).toContainEqual({ data: { id: 1, amount: 50 }, weight: 1 });
  });

  it('deletes a row when its weight returns to zero', () => {
    const z1 = integrate(emptyZSet, [{ data: { id: 1, amount: 50 }, weight: 1 }]);
    const z2 = integrate(z1, [{ data: { id: 1, amount: 50 }, weight: -1 }]);
    expect(z2.size).toBe(0);
  });

  it('sums weights and drops rows whose weights sum to zero within one delta', () => {
    const z = integrate(emptyZSet, [
      { data: { id: 1 }, weight: 2 },
      { data: { id: 1 }, weight: 3 },
      { data: { id: 2 }, weight: 4 },
      { data: { id: 2 }, weight: -4 },
    ]);
    expect(rows(z)).toEqual([{ data: { id: 1 }, weight: 5 }]);
  });

  it('treats equal rows with different key order as the same row', () => {
    const z1 = integrate(emptyZSet, [{ data: { id: 1, amount: 50 }, weight: 1 }]);
    const z2 = integrate(z1, [{ data: { amount: 50, id: 1 }, weight: 1 }]);
    expect(z2.size).toBe(1);
    expect(rows(z2)[0]?.weight).toBe(2);
    const z3 = integrate(z2, [{ data: { amount: 50, id: 1 }, weight: -2 }]);
    expect(z3.size).toBe(0);
  });

  it('keeps negative weights (a delete before its insert)', () => {
    const z = integrate(emptyZSet, [{ data: { id: 9 }, weight: -1 }]);
    expect(rows(z)).toEqual([{ data: { id: 9 }, weight: -1 }]);
  });

  it('does not modify its input', () => {
    const base = fromRows([{ data: { id: 1 }, weight: 1 }]);
    integrate(base, [{ data: { id: 1 }, weight: -1 }]);
    expect(base.size).toBe(1);
  });

  it('ignores zero-weight entries', () => {
    expect(integrate(emptyZSet, [{ data: { id: 1 }, weight: 0 }]).size).toBe(0);
  });
});

describe('sortedRows', () => {
  it('sorts numerically by columns in order and lists all columns', () => {
    const z = fromRows([
      { data: { id: 10, name: 'b' }, weight: 1 },
      { data: { id: 2, name: 'a' }, weight: 1 },
      { data: { id: 2, name: null }, weight: 1 },
    ]);
    const { columns, rows: sorted } = sortedRows(z);
    expect(columns).toEqual(['id', 'name']);
    expect(sorted.map((r) => r.data)).toEqual([
      { id: 2, name: null },
      { id: 2, name: 'a' },
      { id: 10, name: 'b' },
    ]);
  });

  it('keys and orders rows holding lists: element by element, a prefix first', () => {
    const z = integrate(
      fromRows([
        { data: { tags: [10] }, weight: 1 },
        { data: { tags: [2, 1] }, weight: 1 },
        { data: { tags: [2] }, weight: 1 },
        { data: { tags: [] }, weight: 1 },
        { data: { tags: null }, weight: 1 },
        { data: { tags: [2, null] }, weight: 1 },
      ]),
      // Equal lists are the same row; a different order is another row.
      [
        { data: { tags: [10] }, weight: 1 },
        { data: { tags: [1, 2] }, weight: 1 },
      ],
    );
    expect(z.get(canonicalKey({ tags: [10] }))?.weight).toBe(2);
    expect(sortedRows(z).rows.map((r) => r.data.tags)).toEqual([null, [], [1, 2], [2], [2, null], [2, 1], [10]]);
  });
});
