// @vitest-environment jsdom
// The editor's parameter form of an input, generated from the engine's own JSON Schema
// (dbsp/circuit.schema.json), offers `allow_negative` as a checkbox.
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { paramSchemas } from '../editor/catalog';
import { ParamForm } from '../editor/ParamForm';

afterEach(cleanup);

it('shows allow_negative as a checkbox of the input parameters', () => {
  const format = JSON.parse(readFileSync(resolve(__dirname, '../../../dbsp/circuit.schema.json'), 'utf8'));
  const schemas = paramSchemas(format);
  const onChange = vi.fn();
  const schema = [{ name: 'id', type: 'bigint', nullable: true }];
  render(<ParamForm schema={schemas.input!} params={{ schema }} onChange={onChange} ctx={{ columnsFor: () => undefined, errors: [] }} />);
  const box = screen.getByTestId('param-allow_negative') as HTMLInputElement;
  expect(box.type).toBe('checkbox');
  expect(box.checked).toBe(false);
  fireEvent.click(box);
  expect(onChange).toHaveBeenLastCalledWith({ schema, allow_negative: true }, 'allow_negative');
});
