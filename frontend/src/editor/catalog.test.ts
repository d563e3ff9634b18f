import { describe, expect, it } from 'vitest';
import type { Operator } from '../api/editor';
import { groupOf, paletteGroups, paramSchemas, portCatalog, withRecursion } from './catalog';

const op = (kind: string, category: string, inputs = ['in'], outputs = ['out'], doc = ''): Operator => ({
  kind,
  title: kind,
  category,
  inputs,
  outputs,
  linear: true,
  stream: false,
  doc,
});

const FORMAT = {
  $defs: {
    id: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' },
    column: {
      type: 'object',
      required: ['name', 'type'],
      properties: { name: { $ref: '#/$defs/id' }, type: { enum: ['bigint', 'string'] }, nullable: { type: 'boolean' } },
    },
    node: {
      allOf: [
        { if: { properties: { kind: { const: 'input' } } }, then: { properties: { params: { required: ['schema'], properties: { schema: { type: 'array', items: { $ref: '#/$defs/column' } } } } } } },
        { if: { properties: { kind: { enum: ['semijoin', 'antijoin'] } } }, then: { properties: { params: { properties: { left_keys: { type: 'array' } } } } } },
        { if: { properties: { kind: { const: 'fixedpoint' } } }, then: { required: ['subcircuit'], properties: { params: { properties: { max_iterations: { type: 'integer' } } } } } },
      ],
    },
  },
};

describe('operator catalog', () => {
  it('groups operators into the palette sections, in order, with search over kind, title and doc', () => {
    const ops = withRecursion([op('input', 'tables', [], ['out']), op('join', 'relational'), op('aggregate', 'aggregates'), op('delay', 'primitives', ['in'], ['out'], 'z^-1')]);
    expect(paletteGroups(ops, '').map((g) => g.id)).toEqual(['tables', 'relational', 'aggregates', 'primitives', 'recursion']);
    expect(paletteGroups(ops, 'z^-1').flatMap((g) => g.operators.map((o) => o.kind))).toEqual(['delay']);
    expect(paletteGroups(ops, 'no such thing')).toEqual([]);
    // Names first: "sum" is the aggregate's word, not union's or integrate's docs ("sums").
    const documented = [
      op('union', 'relational', ['a', 'b'], ['out'], 'sums the weights of both inputs'),
      op('integrate', 'primitives', ['in'], ['out'], 'the running sum of its input'),
      op('aggregate', 'aggregates', ['in'], ['out'], 'group by and aggregate'),
      op('filter', 'relational', ['in'], ['out'], 'keeps rows where the predicate holds; unlike a join'),
    ];
    const kinds = (search: string) => paletteGroups(documented, search).flatMap((g) => g.operators.map((o) => o.kind));
    expect(kinds('sum')).toEqual(['aggregate']);
    expect(kinds('fil')).toEqual(['filter']);
    expect(kinds('weights')).toEqual(['union']); // only the docs say it: still found
    expect(groupOf('windows')).toBe('windows');
    expect(groupOf('something new')).toBe('relational');
  });

  it('adds the recursion operators only when the engine does not list them', () => {
    const listed = withRecursion([op('fixedpoint', 'recursion', [], [])]);
    expect(listed.filter((o) => o.kind === 'fixedpoint')).toHaveLength(1);
    expect(listed.map((o) => o.kind)).toEqual(expect.arrayContaining(['import', 'delta0', 'export']));
    expect(portCatalog(listed).export).toEqual({ inputs: ['in'], outputs: [] });
  });

  it('reads each kind’s params schema from the circuit format (const and enum rules, $refs resolved)', () => {
    const schemas = paramSchemas(FORMAT, [op('input', 'tables'), op('output', 'tables')]);
    const column = (schemas.input!.properties as Record<string, { items: { properties: Record<string, unknown> } }>).schema!.items;
    expect(column.properties.name).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(column.properties.type).toEqual({ enum: ['bigint', 'string'] });
    expect(schemas.semijoin).toEqual(schemas.antijoin);
    expect(schemas.fixedpoint!.properties).toHaveProperty('max_iterations');
    // A kind without a rule has no parameters.
    expect(schemas.output).toEqual({ type: 'object', properties: {} });
  });
});
