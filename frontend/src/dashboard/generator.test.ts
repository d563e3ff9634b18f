import { describe, expect, it } from 'vitest';
import type { ChangeRecord, Column } from '../api';
import { BackpressureError } from '../api/runs';
import { ApiError } from '../api';
import { buildRow } from '../rowValues';
import { randomRow, RowGenerator, seededRandom, type Clock, type GeneratorStatus } from './generator';

const schema: Column[] = [
  { name: 'id', type: 'bigint' },
  { name: 'from_acct', type: 'bigint' },
  { name: 'amount', type: 'bigint' },
  { name: 'price', type: 'double' },
  { name: 'flag', type: 'boolean' },
  { name: 'word', type: 'string' },
  { name: 'day', type: 'date' },
  { name: 'at', type: 'timestamp' },
];

/** A manual clock: advance() runs due timers in order. */
function manualClock() {
  let now = 0;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = next++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout: (h) => void timers.delete(h as number),
  };
  async function advance(ms: number) {
    const end = now + ms;
    for (;;) {
      const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].fn();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    }
    now = end;
  }
  return { clock, advance };
}

describe('randomRow', () => {
  it('fits the schema: serial ids, small account keys, typed values', () => {
    const rng = seededRandom(42);
    const rows = Array.from({ length: 50 }, (_, i) => randomRow(schema, rng, 100 + i));
    rows.forEach((row, i) => {
      expect(row.id).toBe(100 + i);
      expect(row.from_acct).toBeGreaterThanOrEqual(1);
      expect(row.from_acct).toBeLessThanOrEqual(5);
      expect(Number.isInteger(row.amount)).toBe(true);
      expect(typeof row.price).toBe('number');
      expect(typeof row.flag).toBe('boolean');
      expect(typeof row.word).toBe('string');
      expect(row.day).toMatch(/^2026-\d\d-\d\d$/);
      expect(row.at).toMatch(/^2026-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    });
    // Seeded: the same seed gives the same rows.
    expect(randomRow(schema, seededRandom(7), 1)).toEqual(randomRow(schema, seededRandom(7), 1));
  });

  it('fills list columns with 0-4 elements of the element type', () => {
    const lists: Column[] = [
      { name: 'ids', type: 'array<bigint>' },
      { name: 'scores', type: 'array<double>' },
      { name: 'tags', type: 'array<string>' },
      { name: 'flags', type: 'array<boolean>' },
    ];
    const rng = seededRandom(3);
    const rows = Array.from({ length: 200 }, (_, i) => randomRow(lists, rng, i));
    const lengths = new Set<number>();
    for (const row of rows) {
      for (const column of lists) {
        const value = row[column.name];
        expect(Array.isArray(value), column.name).toBe(true);
        const list = value as unknown[];
        expect(list.length).toBeLessThanOrEqual(4);
        lengths.add(list.length);
      }
      expect((row.ids as unknown[]).every((v) => Number.isSafeInteger(v))).toBe(true);
      expect((row.scores as unknown[]).every((v) => typeof v === 'number' && Number.isFinite(v))).toBe(true);
      expect((row.tags as unknown[]).every((v) => typeof v === 'string')).toBe(true);
      expect((row.flags as unknown[]).every((v) => typeof v === 'boolean')).toBe(true);
    }
    expect([...lengths].sort()).toEqual([0, 1, 2, 3, 4]);
    // What the generator sends passes the push form's own checks.
    for (const row of rows.slice(0, 20)) {
      expect(buildRow(lists, Object.fromEntries(lists.map((c) => [c.name, JSON.stringify(row[c.name])])))).toEqual({ ok: true, row });
    }
  });
});

describe('RowGenerator', () => {
  it('sends rows at the chosen rate until stopped', async () => {
    const { clock, advance } = manualClock();
    const batches: ChangeRecord[][] = [];
    const g = new RowGenerator({
      schema,
      rate: 10,
      clock,
      rng: seededRandom(1),
      push: async (records) => {
        batches.push(records);
        return { token: 't', sequence: batches.length, duplicate: false };
      },
    });
    g.start();
    await advance(3000);
    const rows = batches.flat().length;
    expect(rows).toBeGreaterThanOrEqual(29);
    expect(rows).toBeLessThanOrEqual(30);
    expect(g.current).toMatchObject({ running: true, rowsSent: rows });
    g.stop();
    await advance(3000);
    expect(batches.flat().length).toBe(rows);
    expect(g.current.running).toBe(false);
  });

  it('on 429 waits Retry-After and resends the same batch with the same key', async () => {
    const { clock, advance } = manualClock();
    const calls: { key: string; ids: unknown[]; at: number }[] = [];
    let answer429 = 2;
    const statuses: GeneratorStatus[] = [];
    let keys = 0;
    const g = new RowGenerator({
      schema,
      rate: 4,
      clock,
      intervalMs: 250,
      rng: seededRandom(3),
      newKey: () => `k${++keys}`,
      onStatus: (s) => statuses.push(s),
      push: async (records, key) => {
        calls.push({ key, ids: records.map((r) => ('insert' in r ? r.insert.id : null)), at: clock.now() });
        if (answer429 > 0) {
          answer429 -= 1;
          throw new BackpressureError({ detail: 'busy' }, 2000);
        }
        return { token: 't', sequence: calls.length, duplicate: false };
      },
    });
    g.start();
    await advance(250);
    expect(calls).toHaveLength(1);
    expect(statuses[statuses.length - 1]!.backpressureUntil).toBe(2250);
    await advance(1999);
    expect(calls).toHaveLength(1); // still waiting
    await advance(1);
    expect(calls).toHaveLength(2);
    await advance(2000);
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => c.key)).toEqual(['k1', 'k1', 'k1']);
    expect(calls[2]!.ids).toEqual(calls[0]!.ids);
    expect(g.current).toMatchObject({ rowsSent: 1, backpressureHits: 2, backpressureUntil: null });
    g.stop();
  });

  it('counts a batch accepted after stop() was pressed, and sends nothing more', async () => {
    const { clock, advance } = manualClock();
    let release: (() => void) | null = null;
    let calls = 0;
    const g = new RowGenerator({
      schema,
      rate: 4,
      clock,
      push: (records) => {
        calls += 1;
        return new Promise((resolve) => {
          release = () => resolve({ token: 't', sequence: records.length, duplicate: false });
        });
      },
    });
    g.start();
    await advance(250);
    expect(calls).toBe(1);
    g.stop();
    // Stopped, but the push is on its way: the count is not final yet.
    expect(g.current).toMatchObject({ running: false, inFlight: true, rowsSent: 0 });
    release!();
    await advance(0);
    expect(g.current).toMatchObject({ running: false, inFlight: false, rowsSent: 1, pushes: 1 });
    await advance(5000);
    expect(calls).toBe(1);
  });

  it('stops with the error on any other failure', async () => {
    const { clock, advance } = manualClock();
    const g = new RowGenerator({
      schema,
      rate: 10,
      clock,
      push: async () => {
        throw new ApiError(409, null, ['Run 3 is stopped; start a new run to push data.']);
      },
    });
    g.start();
    await advance(1000);
    expect(g.current).toMatchObject({ running: false, error: 'Run 3 is stopped; start a new run to push data.' });
  });
});
