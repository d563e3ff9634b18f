// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunInput } from '../api';
import { PushForm } from './PushForm';

const input: RunInput = {
  name: 'tx',
  schema: [
    { name: 'id', type: 'bigint' },
    { name: 'amount', type: 'bigint' },
  ],
};

let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  fetchMock = vi.fn(async () => new Response(JSON.stringify({ token: '7:5', sequence: 5 }), { status: 202 }));
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const sentBodies = () => fetchMock.mock.calls.map(([, init]) => JSON.parse((init as RequestInit).body as string));
const fill = (prefix: string, id: string, amount: string) => {
  fireEvent.change(screen.getByTestId(`${prefix}-tx-id`), { target: { value: id } });
  fireEvent.change(screen.getByTestId(`${prefix}-tx-amount`), { target: { value: amount } });
};

describe('PushForm', () => {
  it('edits a row: one push with the delete of the old row and the insert of the new one', async () => {
    const pushed = vi.fn();
    render(<PushForm runId={7} input={input} onPushed={pushed} />);
    fill('push-field', '1', '50');
    fireEvent.click(screen.getByTestId('push-edit-open-tx'));
    // The new row starts as a copy of the old one.
    expect((screen.getByTestId('push-new-field-tx-amount') as HTMLInputElement).value).toBe('50');
    fireEvent.change(screen.getByTestId('push-new-field-tx-amount'), { target: { value: '75' } });
    fireEvent.click(screen.getByTestId('push-edit-submit-tx'));
    await waitFor(() => expect(screen.getByTestId('push-result-tx').textContent).toContain('Accepted 2 changes'));
    expect(sentBodies()).toEqual([[{ delete: { id: 1, amount: 50 } }, { insert: { id: 1, amount: 75 } }]]);
    const headers = (fetchMock.mock.calls[0]![1] as RequestInit).headers as Record<string, string>;
    expect(headers['Idempotency-Key']).toBeTruthy();
    expect(pushed).toHaveBeenCalledOnce();
    // The form now holds the new row, ready for the next edit.
    expect((screen.getByTestId('push-field-tx-amount') as HTMLInputElement).value).toBe('75');
  });

  it('stages several inserts and deletes and pushes them together', async () => {
    render(<PushForm runId={7} input={input} />);
    fill('push-field', '1', '10');
    fireEvent.click(screen.getByTestId('push-stage-insert-tx'));
    fill('push-field', '2', '20');
    fireEvent.click(screen.getByTestId('push-stage-insert-tx'));
    fill('push-field', '3', '30');
    fireEvent.click(screen.getByTestId('push-stage-delete-tx'));
    const staged = within(screen.getByTestId('staged-tx')).getAllByTestId('staged-row');
    expect(staged.map((r) => r.className)).toEqual(['plus', 'plus', 'minus']);
    expect(fetchMock).not.toHaveBeenCalled();
    fireEvent.click(screen.getByTestId('push-staged-tx'));
    await waitFor(() => expect(screen.getByTestId('push-result-tx').textContent).toContain('Accepted 3 changes'));
    expect(sentBodies()).toEqual([
      [{ insert: { id: 1, amount: 10 } }, { insert: { id: 2, amount: 20 } }, { delete: { id: 3, amount: 30 } }],
    ]);
    expect(screen.queryByTestId('staged-tx')).toBeNull();
  });

  it('keeps the batch when the server rejects it, with the error naming the row', async () => {
    fetchMock.mockImplementation(
      async () => new Response(JSON.stringify({ errors: [{ row: 1, field: 'amount', message: 'out of range' }] }), { status: 400 }),
    );
    render(<PushForm runId={7} input={input} />);
    fill('push-field', '1', '10');
    fireEvent.click(screen.getByTestId('push-stage-insert-tx'));
    fireEvent.click(screen.getByTestId('push-stage-insert-tx'));
    fireEvent.click(screen.getByTestId('push-staged-tx'));
    await waitFor(() => expect(screen.getByTestId('push-error-tx').textContent).toBe('row 1, amount: out of range'));
    expect(within(screen.getByTestId('staged-tx')).getAllByTestId('staged-row')).toHaveLength(2);
  });

  it('sends list columns typed as JSON array text, empty as null, and names a bad element', async () => {
    const lists: RunInput = {
      name: 'posts',
      schema: [
        { name: 'id', type: 'bigint' },
        { name: 'tags', type: 'array<string>' },
        { name: 'scores', type: 'array<bigint>' },
      ],
    };
    render(<PushForm runId={7} input={lists} />);
    const tags = screen.getByTestId('push-field-posts-tags') as HTMLInputElement;
    expect(tags.type).toBe('text');
    expect(tags.placeholder).toBe('["a", "b"]');
    expect((screen.getByTestId('push-field-posts-scores') as HTMLInputElement).placeholder).toBe('[1, 2]');

    fireEvent.change(screen.getByTestId('push-field-posts-id'), { target: { value: '1' } });
    fireEvent.change(tags, { target: { value: '["a", 2]' } });
    fireEvent.click(screen.getByTestId('push-insert-posts'));
    // Under its field, not in a list at the bottom.
    expect(screen.getByTestId('push-field-error-posts-tags').textContent).toBe('tags element 1 must be a string');
    expect(fetchMock).not.toHaveBeenCalled();

    fireEvent.change(tags, { target: { value: '["a", null, "b"]' } });
    fireEvent.click(screen.getByTestId('push-insert-posts'));
    await waitFor(() => expect(screen.getByTestId('push-result-posts').textContent).toContain('Accepted 1 change'));
    expect(sentBodies()).toEqual([[{ insert: { id: 1, tags: ['a', null, 'b'], scores: null } }]]);

    // A staged list shows as compact JSON.
    fireEvent.change(screen.getByTestId('push-field-posts-scores'), { target: { value: '[1, 2]' } });
    fireEvent.click(screen.getByTestId('push-stage-insert-posts'));
    expect(within(screen.getByTestId('staged-posts')).getByTestId('staged-row').textContent).toContain(
      '{id: 1, tags: ["a",null,"b"], scores: [1,2]}',
    );
  });
});
