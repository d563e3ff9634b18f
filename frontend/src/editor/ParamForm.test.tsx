// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ARRAY_TYPES } from '../api';
import { paramSchemas } from './catalog';
import { defaultParams, ParamForm } from './ParamForm';

afterEach(cleanup);

const AGGREGATE = {
  required: ['aggregates'],
  properties: {
    group_by: { type: 'array', items: { type: 'string' } },
    aggregates: {
      type: 'array',
      items: {
        type: 'object',
        required: ['fn', 'as'],
        properties: { fn: { enum: ['count', 'sum'] }, expr: { type: ['string', 'null'] }, as: { type: 'string' } },
      },
    },
  },
};

const INPUT = {
  required: ['schema'],
  properties: {
    schema: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'type'],
        properties: { name: { type: 'string' }, type: { enum: ['bigint', 'string'] }, nullable: { type: 'boolean' } },
      },
    },
  },
};

const columns = [
  { name: 'to_acct', type: 'bigint' },
  { name: 'amount', type: 'bigint' },
];

describe('ParamForm', () => {
  it('picks group-by columns from the inferred input schema', () => {
    const onChange = vi.fn();
    render(<ParamForm schema={AGGREGATE} params={{ group_by: [], aggregates: [] }} onChange={onChange} ctx={{ columnsFor: () => columns, errors: [] }} />);
    fireEvent.click(screen.getByTestId('param-group_by-col-to_acct'));
    expect(onChange).toHaveBeenLastCalledWith({ group_by: ['to_acct'], aggregates: [] }, 'group_by');
  });

  it('adds an aggregate row with defaults and edits its fields', () => {
    const onChange = vi.fn();
    const { rerender } = render(<ParamForm schema={AGGREGATE} params={{ aggregates: [] }} onChange={onChange} ctx={{ columnsFor: () => columns, errors: [] }} />);
    fireEvent.click(screen.getByTestId('param-aggregates-add'));
    expect(onChange).toHaveBeenLastCalledWith({ aggregates: [{ fn: 'count', as: '' }] }, 'aggregates');
    rerender(<ParamForm schema={AGGREGATE} params={{ aggregates: [{ fn: 'count', as: '' }] }} onChange={onChange} ctx={{ columnsFor: () => columns, errors: [] }} />);
    fireEvent.change(screen.getByTestId('param-aggregates-0-fn'), { target: { value: 'sum' } });
    expect(onChange).toHaveBeenLastCalledWith({ aggregates: [{ fn: 'sum', as: '' }] }, 'aggregates');
    fireEvent.change(screen.getByTestId('param-aggregates-0-expr'), { target: { value: 'amount' } });
    expect(onChange).toHaveBeenLastCalledWith({ aggregates: [{ fn: 'count', as: '', expr: 'amount' }] }, 'aggregates');
  });

  it('shows the engine’s error under the parameter it names', () => {
    const errors = [{ message: 'sum(credits): syntax error at position 10', node: 'n', param: 'aggregates' }];
    render(<ParamForm schema={AGGREGATE} params={{ aggregates: [{ fn: 'sum', expr: 'amount +*', as: 'x' }] }} onChange={() => undefined} ctx={{ columnsFor: () => columns, errors }} />);
    expect(screen.getByTestId('param-aggregates-error').textContent).toContain('syntax error');
    expect(screen.queryByTestId('param-group_by-error')).toBeNull();
  });

  it('edits an input’s schema: add, rename, type, nullable, remove', () => {
    const onChange = vi.fn();
    const schema = [{ name: 'id', type: 'bigint', nullable: true }];
    render(<ParamForm schema={INPUT} params={{ schema }} onChange={onChange} ctx={{ columnsFor: () => undefined, errors: [] }} />);
    fireEvent.change(screen.getByTestId('param-schema-0-name'), { target: { value: 'account' } });
    expect(onChange).toHaveBeenLastCalledWith({ schema: [{ name: 'account', type: 'bigint', nullable: true }] }, 'schema');
    fireEvent.change(screen.getByTestId('param-schema-0-type'), { target: { value: 'string' } });
    expect(onChange).toHaveBeenLastCalledWith({ schema: [{ name: 'id', type: 'string', nullable: true }] }, 'schema');
    fireEvent.click(screen.getByTestId('param-schema-0-nullable'));
    expect(onChange).toHaveBeenLastCalledWith({ schema: [{ name: 'id', type: 'bigint', nullable: false }] }, 'schema');
    fireEvent.click(screen.getByTestId('param-schema-add'));
    expect(onChange).toHaveBeenLastCalledWith({ schema: [...schema, { name: '', type: 'bigint', nullable: true }] }, 'schema');
    fireEvent.click(screen.getByTestId('param-schema-0-remove'));
    expect(onChange).toHaveBeenLastCalledWith({ schema: [] }, 'schema');
  });

  it('starts new nodes with their required lists empty', () => {
    expect(defaultParams(AGGREGATE)).toEqual({ aggregates: [] });
    expect(defaultParams(undefined)).toEqual({});
  });

  describe('list columns', () => {
    // The circuit format as the server publishes it: column types in $defs, kinds' params by rule.
    const FORMAT = {
      $defs: {
        id: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' },
        column: {
          type: 'object',
          required: ['name', 'type'],
          properties: {
            name: { $ref: '#/$defs/id' },
            type: { enum: ['bigint', 'double', 'string', 'boolean', 'date', 'timestamp', ...ARRAY_TYPES] },
            nullable: { type: 'boolean', default: true },
          },
        },
        node: {
          allOf: [
            {
              if: { properties: { kind: { const: 'input' } } },
              then: { properties: { params: { required: ['schema'], properties: { schema: { type: 'array', minItems: 1, items: { $ref: '#/$defs/column' } } } } } },
            },
            {
              if: { properties: { kind: { const: 'flat_map' } } },
              then: {
                properties: {
                  params: {
                    required: ['column'],
                    properties: { column: { type: 'string' }, separator: { type: 'string', minLength: 1 }, as: { $ref: '#/$defs/id' } },
                  },
                },
              },
            },
          ],
        },
      },
    };
    const schemas = paramSchemas(FORMAT);

    it('offers the list types in an input’s schema editor', () => {
      const onChange = vi.fn();
      const schema = [{ name: 'tags', type: 'string', nullable: true }];
      render(<ParamForm schema={schemas.input} params={{ schema }} onChange={onChange} ctx={{ columnsFor: () => undefined, errors: [] }} />);
      const select = screen.getByTestId('param-schema-0-type') as HTMLSelectElement;
      expect([...select.options].map((o) => o.value)).toEqual(expect.arrayContaining([...ARRAY_TYPES]));
      fireEvent.change(select, { target: { value: 'array<string>' } });
      expect(onChange).toHaveBeenLastCalledWith({ schema: [{ name: 'tags', type: 'array<string>', nullable: true }] }, 'schema');
    });

    it('lets flat_map explode a list column as well as split a string column', () => {
      const onChange = vi.fn();
      const inputColumns = [
        { name: 'id', type: 'bigint' },
        { name: 'line', type: 'string' },
        { name: 'tags', type: 'array<string>' },
        { name: 'scores', type: 'array<double>' },
      ];
      render(<ParamForm schema={schemas.flat_map} params={{ column: '' }} onChange={onChange} ctx={{ columnsFor: () => inputColumns, errors: [] }} />);
      const select = screen.getByTestId('param-column') as HTMLSelectElement;
      const offered = [...select.options].map((o) => o.value);
      expect(offered).toEqual(expect.arrayContaining(['line', 'tags', 'scores']));
      expect([...select.options].find((o) => o.value === 'tags')?.textContent).toBe('tags (array<string>)');
      fireEvent.change(select, { target: { value: 'tags' } });
      expect(onChange).toHaveBeenLastCalledWith({ column: 'tags' }, 'column');
    });

    it('leaves out a cleared optional parameter (a list column takes no separator)', () => {
      const onChange = vi.fn();
      render(<ParamForm schema={schemas.flat_map} params={{ column: 'tags', separator: ',' }} onChange={onChange} ctx={{ columnsFor: () => [], errors: [] }} />);
      fireEvent.change(screen.getByTestId('param-separator'), { target: { value: '' } });
      expect(onChange).toHaveBeenLastCalledWith({ column: 'tags' }, 'separator');
    });
  });
});
