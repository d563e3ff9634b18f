// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunInput } from '../api';
import { CsvUpload } from './CsvUpload';

const input: RunInput = {
  name: 'tx',
  schema: [
    { name: 'id', type: 'bigint', nullable: false } as RunInput['schema'][number],
    { name: 'amount', type: 'bigint' },
  ],
};

/** XMLHttpRequest stand-in: records what was sent and answers with the queued responses. */
class FakeXhr {
  static sent: { url: string; headers: Record<string, string>; body: string }[] = [];
  static responses: { status: number; body: unknown }[] = [];
  /** When set, requests wait in `pending` and the test drives their progress and answer. */
  static manual = false;
  static pending: FakeXhr[] = [];
  upload: { onprogress: ((e: ProgressEvent) => void) | null; onload: (() => void) | null } = { onprogress: null, onload: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;
  status = 0;
  statusText = '';
  responseText = '';
  withCredentials = false;
  private url = '';
  private headers: Record<string, string> = {};
  open(_method: string, url: string) {
    this.url = url;
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name] = value;
  }
  getResponseHeader() {
    return null;
  }
  send(body: string) {
    FakeXhr.sent.push({ url: this.url, headers: this.headers, body });
    if (FakeXhr.manual) {
      FakeXhr.pending.push(this);
      return;
    }
    const response = FakeXhr.responses.shift() ?? { status: 202, body: { token: '1:1', sequence: 1 } };
    setTimeout(() => {
      this.upload.onprogress?.({ lengthComputable: true, loaded: body.length, total: body.length } as ProgressEvent);
      this.status = response.status;
      this.responseText = JSON.stringify(response.body);
      this.onload?.();
    }, 0);
  }
}

beforeEach(() => {
  FakeXhr.sent = [];
  FakeXhr.responses = [];
  FakeXhr.manual = false;
  FakeXhr.pending = [];
  vi.stubGlobal('XMLHttpRequest', FakeXhr);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function choose(text: string) {
  const file = new File([text], 'rows.csv', { type: 'text/csv' });
  fireEvent.change(screen.getByTestId('csv-file-tx'), { target: { files: [file] } });
}

describe('CsvUpload', () => {
  it('previews rows, blocks the upload while a row is bad, uploads the file as text/csv', async () => {
    const pushed = vi.fn();
    render(<CsvUpload runId={3} input={input} onPushed={pushed} />);
    choose('id,amount\n1,10\n2,ten\n');
    await waitFor(() => expect(screen.getByTestId('csv-summary-tx').textContent).toBe('rows.csv: 2 rows, 1 with errors'));
    const bad = screen.getAllByTestId('csv-row').filter((r) => r.dataset.error === 'true');
    expect(bad.map((r) => r.dataset.line)).toEqual(['3']);
    expect(bad[0]!.textContent).toContain('amount must be a whole number, got "ten"');
    expect((screen.getByTestId('csv-upload-submit-tx') as HTMLButtonElement).disabled).toBe(true);

    choose('id,amount\n1,10\n2,20\n');
    await waitFor(() => expect(screen.getByTestId('csv-summary-tx').textContent).toBe('rows.csv: 2 rows, all valid'));
    fireEvent.click(screen.getByTestId('csv-upload-submit-tx'));
    await waitFor(() => expect(screen.getByTestId('csv-result-tx').textContent).toContain('Accepted 2 rows'));
    expect(FakeXhr.sent).toHaveLength(1);
    expect(FakeXhr.sent[0]).toMatchObject({ url: '/api/runs/3/inputs/tx/push/', body: 'id,amount\n1,10\n2,20\n' });
    expect(FakeXhr.sent[0]!.headers['Content-Type']).toBe('text/csv');
    expect(FakeXhr.sent[0]!.headers['Idempotency-Key']).toBeTruthy();
    expect(pushed).toHaveBeenCalledOnce();
  });

  it("shows the server's per-row errors on the preview rows", async () => {
    FakeXhr.responses.push({
      status: 400,
      body: { detail: 'The push was rejected: 1 problem(s)', errors: [{ row: 1, field: 'amount', message: "row 1, column 'amount': 99999999999999999999 is out of the bigint range" }] },
    });
    render(<CsvUpload runId={3} input={input} />);
    choose('id,amount\n1,10\n2,5\n');
    await waitFor(() => expect(screen.getByTestId('csv-summary-tx').textContent).toContain('all valid'));
    fireEvent.click(screen.getByTestId('csv-upload-submit-tx'));
    await waitFor(() => expect(screen.getByTestId('csv-summary-tx').textContent).toBe('rows.csv: 2 rows, 1 with errors'));
    const bad = screen.getAllByTestId('csv-row').filter((r) => r.dataset.error === 'true');
    expect(bad.map((r) => r.dataset.line)).toEqual(['3']);
    expect(bad[0]!.textContent).toContain('server: row 1');
    expect(screen.getByTestId('csv-error-tx').textContent).toBe('The push was rejected: 1 problem(s)');
  });

  it('falls back to JSON records when the server has no CSV parser (415)', async () => {
    FakeXhr.responses.push({ status: 415, body: { detail: 'Unsupported media type "text/csv" in request.' } });
    render(<CsvUpload runId={3} input={input} />);
    choose('id,amount,_weight\n1,10,\n2,,-1\n');
    await waitFor(() => expect(screen.getByTestId('csv-summary-tx').textContent).toContain('all valid'));
    fireEvent.click(screen.getByTestId('csv-upload-submit-tx'));
    await waitFor(() => expect(screen.getByTestId('csv-result-tx')).toBeTruthy());
    expect(FakeXhr.sent).toHaveLength(2);
    expect(FakeXhr.sent[1]!.headers['Content-Type']).toBe('application/json');
    expect(FakeXhr.sent[1]!.headers['Idempotency-Key']).toBe(FakeXhr.sent[0]!.headers['Idempotency-Key']);
    expect(JSON.parse(FakeXhr.sent[1]!.body)).toEqual([{ insert: { id: 1, amount: 10 } }, { delete: { id: 2, amount: null } }]);
  });
  it('shows the upload progress events on the progress bar until the server answers', async () => {
    FakeXhr.manual = true;
    render(<CsvUpload runId={3} input={input} />);
    expect(screen.queryByTestId('csv-progress-tx')).toBeNull();
    choose('id,amount\n1,10\n2,20\n');
    await waitFor(() => expect(screen.getByTestId('csv-summary-tx').textContent).toContain('all valid'));
    fireEvent.click(screen.getByTestId('csv-upload-submit-tx'));
    await waitFor(() => expect(FakeXhr.pending).toHaveLength(1));
    const xhr = FakeXhr.pending[0]!;
    const bar = () => screen.getByTestId('csv-progress-tx');
    const value = () => (bar().querySelector('progress') as HTMLProgressElement).value;

    // Sent, nothing uploaded yet: an empty bar, and no second upload can start.
    expect(value()).toBe(0);
    expect(bar().textContent).toContain('Uploading… 0%');
    expect((screen.getByTestId('csv-upload-submit-tx') as HTMLButtonElement).disabled).toBe(true);

    // Each progress event moves the bar.
    await act(async () => xhr.upload.onprogress?.({ lengthComputable: true, loaded: 5, total: 20 } as ProgressEvent));
    expect(value()).toBeCloseTo(0.25);
    expect(bar().textContent).toContain('Uploading… 25%');
    await act(async () => xhr.upload.onprogress?.({ lengthComputable: true, loaded: 15, total: 20 } as ProgressEvent));
    expect(value()).toBeCloseTo(0.75);
    expect(bar().textContent).toContain('Uploading… 75%');
    // A size the browser cannot tell leaves the bar where it was.
    await act(async () => xhr.upload.onprogress?.({ lengthComputable: false, loaded: 18, total: 0 } as ProgressEvent));
    expect(value()).toBeCloseTo(0.75);

    // The body is sent: the bar is full and the page waits for the server's answer.
    await act(async () => xhr.upload.onload?.());
    expect(value()).toBe(1);
    expect(bar().textContent).toContain('Uploaded; waiting for the server…');

    // The answer: the bar goes, the result shows.
    await act(async () => {
      xhr.status = 202;
      xhr.responseText = JSON.stringify({ token: '1:1', sequence: 1 });
      xhr.onload?.();
    });
    await waitFor(() => expect(screen.getByTestId('csv-result-tx').textContent).toContain('Accepted 2 rows'));
    expect(screen.queryByTestId('csv-progress-tx')).toBeNull();
  });

  it('explains list cells and checks them in the preview', async () => {
    const lists: RunInput = { name: 'tx', schema: [{ name: 'id', type: 'bigint' }, { name: 'tags', type: 'array<string>' }] };
    render(<CsvUpload runId={3} input={lists} />);
    expect(screen.getByTestId('csv-upload-tx').textContent).toContain('List cells hold a JSON array, e.g. "[""a"",""b""]" for ["a","b"].');
    choose('id,tags\n1,"[""a"",""b""]"\n2,a b\n');
    await waitFor(() => expect(screen.getByTestId('csv-summary-tx').textContent).toBe('rows.csv: 2 rows, 1 with errors'));
    const bad = screen.getAllByTestId('csv-row').filter((r) => r.dataset.error === 'true');
    expect(bad.map((r) => r.dataset.line)).toEqual(['3']);
    expect(bad[0]!.textContent).toContain('tags must be a JSON array, e.g. ["a", "b"], got "a b"');
  });
});
