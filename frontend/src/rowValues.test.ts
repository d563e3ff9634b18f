import { describe, expect, it } from 'vitest';
import { ARRAY_TYPES, elementTypeOf, type Column } from './api';
import { buildRow, convertValue, emptyValues } from './rowValues';

describe('convertValue', () => {
  it('converts bigint text to integers', () => {
    expect(convertValue('bigint', '42')).toEqual({ ok: true, value: 42 });
    expect(convertValue('bigint', ' -7 ')).toEqual({ ok: true, value: -7 });
  });

  it('rejects non-integer bigints with a message', () => {
    for (const raw of ['1.5', 'abc', '0x10', '1e-3']) {
      const result = convertValue('bigint', raw);
      expect(result.ok, raw).toBe(false);
      if (!result.ok) expect(result.message).toMatch(/whole number/);
    }
  });

  it('takes what the server takes: 1e3 and 1000.0 are whole numbers in JSON, not in CSV', () => {
    expect(convertValue('bigint', '1e3')).toEqual({ ok: true, value: 1000 });
    expect(convertValue('bigint', '1000.0')).toEqual({ ok: true, value: 1000 });
    // CSV cells are read with int() on the server: digits only.
    expect(convertValue('bigint', '1e3', { digitsOnly: true }).ok).toBe(false);
  });

  it('catches a null in a NOT NULL column and a malformed timestamp before sending', () => {
    const schema = [
      { name: 'id', type: 'bigint' as const, nullable: false },
      { name: 'ts', type: 'timestamp' as const },
    ];
    expect(buildRow(schema, { id: '', ts: '' })).toEqual({ ok: false, errors: ['id must not be empty (the column is not nullable)'] });
    expect(buildRow(schema, { id: '1', ts: '2026-11-24 10:00' })).toEqual({ ok: true, row: { id: 1, ts: '2026-11-24 10:00' } });
    expect(buildRow(schema, { id: '1', ts: 'yesterday' })).toEqual({ ok: false, errors: ['ts must be a timestamp YYYY-MM-DDTHH:MM:SS'] });
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

describe('convertValue for list columns', () => {
  it('parses JSON arrays of each element type', () => {
    expect(convertValue('array<bigint>', '[1, 2, -3]')).toEqual({ ok: true, value: [1, 2, -3] });
    expect(convertValue('array<double>', ' [1.5, 2, -0.25] ')).toEqual({ ok: true, value: [1.5, 2, -0.25] });
    expect(convertValue('array<string>', '["a", "b"]')).toEqual({ ok: true, value: ['a', 'b'] });
    expect(convertValue('array<boolean>', '[true, false]')).toEqual({ ok: true, value: [true, false] });
  });

  it('maps an empty field to null and keeps an empty list', () => {
    for (const type of ARRAY_TYPES) {
      expect(convertValue(type, ''), type).toEqual({ ok: true, value: null });
      expect(convertValue(type, '   '), type).toEqual({ ok: true, value: null });
      expect(convertValue(type, '[]'), type).toEqual({ ok: true, value: [] });
    }
  });

  it('allows null elements', () => {
    expect(convertValue('array<bigint>', '[1, null, 3]')).toEqual({ ok: true, value: [1, null, 3] });
    expect(convertValue('array<double>', '[null]')).toEqual({ ok: true, value: [null] });
    expect(convertValue('array<string>', '[null, "x"]')).toEqual({ ok: true, value: [null, 'x'] });
    expect(convertValue('array<boolean>', '[true, null]')).toEqual({ ok: true, value: [true, null] });
  });

  it('rejects text that is not JSON, or JSON that is not an array', () => {
    for (const raw of ['a,b', '[1, 2', "['a']", '{"a": 1}', '"a"', '1', 'null', 'true']) {
      const result = convertValue('array<string>', raw);
      expect(result.ok, raw).toBe(false);
      if (!result.ok) expect(result.message, raw).toBe('must be a JSON array, e.g. ["a", "b"]');
    }
    expect(convertValue('array<bigint>', '1, 2')).toEqual({ ok: false, message: 'must be a JSON array, e.g. [1, 2]' });
  });

  it('names the index of the first element of the wrong type', () => {
    expect(convertValue('array<string>', '["a", "b", 3]')).toEqual({ ok: false, message: 'element 2 must be a string' });
    expect(convertValue('array<bigint>', '[1, 1.5]')).toEqual({ ok: false, message: 'element 1 must be a whole number' });
    expect(convertValue('array<bigint>', '["1"]')).toEqual({ ok: false, message: 'element 0 must be a whole number' });
    expect(convertValue('array<bigint>', '[1, 9007199254740993]')).toEqual({
      ok: false,
      message: 'element 1 is too large to send exactly (limit ±9007199254740991)',
    });
    expect(convertValue('array<double>', '[1, "2"]')).toEqual({ ok: false, message: 'element 1 must be a number' });
    expect(convertValue('array<double>', '[1e999]')).toEqual({ ok: false, message: 'element 0 must be a number' });
    expect(convertValue('array<boolean>', '[true, "false"]')).toEqual({ ok: false, message: 'element 1 must be true or false' });
    expect(convertValue('array<boolean>', '[1]')).toEqual({ ok: false, message: 'element 0 must be true or false' });
    expect(convertValue('array<string>', '[["a"]]')).toEqual({ ok: false, message: 'element 0 must be a string' });
  });

  it('knows the element type of each list type and none of a scalar', () => {
    expect(ARRAY_TYPES.map(elementTypeOf)).toEqual(['bigint', 'double', 'string', 'boolean']);
    expect(elementTypeOf('string')).toBeNull();
    expect(elementTypeOf('timestamp')).toBeNull();
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

  it('builds rows with list columns, naming the column and the element', () => {
    const lists: Column[] = [
      { name: 'id', type: 'bigint' },
      { name: 'tags', type: 'array<string>' },
      { name: 'scores', type: 'array<double>' },
    ];
    expect(emptyValues(lists)).toEqual({ id: '', tags: '', scores: '' });
    expect(buildRow(lists, { id: '1', tags: '["a", "b"]', scores: '[1, null, 3]' })).toEqual({
      ok: true,
      row: { id: 1, tags: ['a', 'b'], scores: [1, null, 3] },
    });
    expect(buildRow(lists, emptyValues(lists))).toEqual({ ok: true, row: { id: null, tags: null, scores: null } });
    expect(buildRow(lists, { id: '1', tags: '["a", "b", 3]', scores: 'x' })).toEqual({
      ok: false,
      errors: ['tags element 2 must be a string', 'scores must be a JSON array, e.g. [1.5, 2]'],
    });
  });
});
