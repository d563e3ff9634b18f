// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { api, ApiError, errorMessages, readCookie } from './api';

function respond(status: number, body: unknown) {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

function clearCookies() {
  for (const part of document.cookie.split(';')) {
    const name = part.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/`;
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
  clearCookies();
});

describe('errorMessages', () => {
  it('reads detail', () => {
    expect(errorMessages({ detail: 'Invalid username or password.' })).toEqual(['Invalid username or password.']);
  });

  it('reads errors with row, node and field', () => {
    expect(
      errorMessages({
        errors: [
          { row: 0, field: 'amount', message: 'expected bigint' },
          { node: 'big', message: 'bad predicate' },
          { message: 'plain' },
        ],
      }),
    ).toEqual(['row 0, amount: expected bigint', 'node big: bad predicate', 'plain']);
  });

  it('says a rejected push once: the summary quotes its one problem', () => {
    const problem = 'record 0: orders has no row {"id": 9} to delete';
    expect(
      errorMessages({ detail: `The push was rejected: ${problem}. Nothing was stored.`, errors: [{ message: problem, row: 0 }] }),
    ).toEqual([`The push was rejected: ${problem}. Nothing was stored.`]);
  });

  it('does not prefix a message that names its own record', () => {
    expect(errorMessages({ errors: [{ row: 2, message: 'record 2: orders holds 1 of row x; it cannot delete 2' }] })).toEqual([
      'record 2: orders holds 1 of row x; it cannot delete 2',
    ]);
  });

  it('reads DRF field errors', () => {
    expect(errorMessages({ name: ['This field is required.'], non_field_errors: ['Nope.'] })).toEqual([
      'name: This field is required.',
      'Nope.',
    ]);
  });
});

describe('readCookie', () => {
  it('finds one cookie among several', () => {
    expect(readCookie('csrftoken', 'a=1; csrftoken=abc%3D; b=2')).toBe('abc=');
    expect(readCookie('csrftoken', 'a=1')).toBeNull();
  });
});

describe('request', () => {
  it('sends the current csrftoken cookie on unsafe methods, re-read every time', async () => {
    const fetchMock = vi.fn(async () => respond(202, { token: 't', sequence: 3 }));
    vi.stubGlobal('fetch', fetchMock);

    document.cookie = 'csrftoken=first; path=/';
    await api.push(7, 'orders', [{ insert: { id: 1 } }]);
    document.cookie = 'csrftoken=second; path=/';
    await api.push(7, 'orders', [{ delete: { id: 1 } }]);

    const calls = fetchMock.mock.calls as unknown as [string, RequestInit][];
    expect(calls[0]?.[0]).toBe('/api/runs/7/inputs/orders/push/');
    expect(calls[0]?.[1]).toMatchObject({ method: 'POST', credentials: 'same-origin', body: '[{"insert":{"id":1}}]' });
    expect((calls[0]?.[1].headers as Record<string, string>)['X-CSRFToken']).toBe('first');
    expect((calls[0]?.[1].headers as Record<string, string>)['Content-Type']).toBe('application/json');
    expect((calls[1]?.[1].headers as Record<string, string>)['X-CSRFToken']).toBe('second');
  });

  it('does not send the CSRF header on GET', async () => {
    const fetchMock = vi.fn(async () => respond(200, { authenticated: false, username: null }));
    vi.stubGlobal('fetch', fetchMock);
    document.cookie = 'csrftoken=abc; path=/';
    expect(await api.me()).toEqual({ authenticated: false, username: null });
    const init = (fetchMock.mock.calls as unknown as [string, RequestInit][])[0]?.[1];
    expect((init?.headers as Record<string, string>)['X-CSRFToken']).toBeUndefined();
  });

  it('handles 204 without a body', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response(null, { status: 204 })));
    await expect(api.logout()).resolves.toBeUndefined();
  });

  it('throws ApiError with readable messages', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => respond(400, { errors: [{ row: 0, field: 'amount', message: 'bad' }] })));
    const error = await api.push(1, 'orders', []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).messages).toEqual(['row 0, amount: bad']);
  });

  it('falls back to the HTTP status for non-JSON errors', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('<h1>Server Error</h1>', { status: 500, statusText: 'Internal Server Error' })));
    const error = (await api.getRun(1).catch((e: unknown) => e)) as ApiError;
    expect(error.messages).toEqual(['HTTP 500 Internal Server Error']);
  });

  it('follows pagination links as same-origin paths', async () => {
    const fetchMock = vi.fn(async (url: string) =>
      url === '/api/circuits/'
        ? respond(200, { count: 2, next: 'http://127.0.0.1:8000/api/circuits/?page=2', previous: null, results: [{ id: 1 }] })
        : respond(200, { count: 2, next: null, previous: null, results: [{ id: 2 }] }),
    );
    vi.stubGlobal('fetch', fetchMock);
    const circuits = await api.listCircuits();
    expect(circuits.map((c) => c.id)).toEqual([1, 2]);
    expect(fetchMock.mock.calls[1]?.[0]).toBe('/api/circuits/?page=2');
  });
});
