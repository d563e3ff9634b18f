import { describe, expect, it } from 'vitest';
import type { Column } from './api';
import { buildRow, convertValue, emptyValues } from './rowValues';

describe('convertValue', () => {
  it('converts bigint text to integers', () => {
    expect(convertValue('bigint', '42')).toEqual({ ok: true, value: 42 });
    expect(convertValue('bigint', ' -7 ')).toEqual({ ok: true, value: -7 });
  });

  it('rejects non-integer bigints with a message', () => {
    for (const raw of ['1.5', 'abc', '1e3', '0x10']) {
      const result = convertValue('bigint', raw);
      expect(result.ok, raw).toBe(false);
      if (!result.ok) expect(result.message).toMatch(/whole number/);
    }
  });

  it('rejects bigints beyond the exact range of a JS number', () => {
    expect(convertValue('bigint', '9007199254740993').ok).toBe(false);
    expect(convertValue('bigint', '9007199254740991')).toEqual({ ok: true, value: 9007199254740991 });
  });

  it('converts doubles', () => {
    expect(convertValue('double', '2.5')).toEqual({ ok: true, value: 2.5 });
    expect(convertValue('double', '-3')).toEqual({ ok: true, value: -3 });
    expect(convertValue('double', 'x').ok).toBe(false);
    expect(convertValue('double', 'Infinity').ok).toBe(false);
  });

  it('maps empty fields to null', () => {
    expect(convertValue('bigint', '')).toEqual({ ok: true, value: null });
    expect(convertValue('double', '  ')).toEqual({ ok: true, value: null });
    expect(convertValue('string', '')).toEqual({ ok: true, value: null });
    expect(convertValue('date', '')).toEqual({ ok: true, value: null });
  });

  it('keeps strings, dates and timestamps as text', () => {
    expect(convertValue('string', ' hi ')).toEqual({ ok: true, value: ' hi ' });
    expect(convertValue('date', '2024-05-01')).toEqual({ ok: true, value: '2024-05-01' });
    expect(convertValue('timestamp', '2024-05-01 10:00:00')).toEqual({ ok: true, value: '2024-05-01 10:00:00' });
  });

  it('converts booleans from checkboxes', () => {
    expect(convertValue('boolean', true)).toEqual({ ok: true, value: true });
    expect(convertValue('boolean', false)).toEqual({ ok: true, value: false });
  });
});

describe('buildRow', () => {
  const schema: Column[] = [
    { name: 'id', type: 'bigint' },
    { name: 'price', type: 'double' },
    { name: 'name', type: 'string' },
    { name: 'paid', type: 'boolean' },
  ];

  it('builds a typed row', () => {
    expect(buildRow(schema, { id: '1', price: '9.5', name: 'bob', paid: true })).toEqual({
      ok: true,
      row: { id: 1, price: 9.5, name: 'bob', paid: true },
    });
  });

  it('starts from empty values: nulls and false', () => {
    expect(buildRow(schema, emptyValues(schema))).toEqual({
      ok: true,
      row: { id: null, price: null, name: null, paid: false },
    });
  });

  it('reports every invalid column', () => {
    const result = buildRow(schema, { id: '1.5', price: 'abc', name: '', paid: false });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors).toHaveLength(2);
      expect(result.errors[0]).toMatch(/^id /);
      expect(result.errors[1]).toMatch(/^price /);
    }
  });
});
