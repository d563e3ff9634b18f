// The row generator: random rows that fit an input's schema, streamed as pushes at a
// chosen rate (rows per second). One push is in flight at a time; a 429 answer
// (backpressure) is honoured by waiting Retry-After and resending the same batch with
// the same Idempotency-Key, so nothing is lost or applied twice.

import { elementTypeOf, type ChangeRecord, type Column, type ElementType, type PushResult, type Row } from '../api';
import { BackpressureError, newIdempotencyKey } from '../api/runs';
import { messagesOf } from '../components/ErrorText';

export type Random = () => number;

/** A small seeded PRNG (mulberry32), so tests can repeat a sequence. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
const KEYISH = /(acct|account|customer|user|group|category|key|node|src|dst|from|to)/i;
const IDISH = /(^id$|_id$)/i;

const int = (rng: Random, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
const pad = (n: number) => String(n).padStart(2, '0');

/** One element of a list column. */
function randomElement(element: ElementType, rng: Random): unknown {
  switch (element) {
    case 'bigint':
      return int(rng, 1, 100);
    case 'double':
      return Math.round(rng() * 10_000) / 100;
    case 'boolean':
      return rng() < 0.5;
    case 'string':
      return WORDS[int(rng, 0, WORDS.length - 1)];
  }
}

/** A value for the column. `serial` numbers the generated rows (unique ids). */
export function randomValue(column: Column, rng: Random, serial: number): unknown {
  const element = elementTypeOf(column.type);
  if (element) return Array.from({ length: int(rng, 0, 4) }, () => randomElement(element, rng));
  switch (column.type) {
    case 'bigint':
      if (IDISH.test(column.name)) return serial;
      return KEYISH.test(column.name) ? int(rng, 1, 5) : int(rng, 1, 1000);
    case 'double':
      return Math.round(rng() * 100_000) / 100;
    case 'boolean':
      return rng() < 0.5;
    case 'string':
      return WORDS[int(rng, 0, WORDS.length - 1)];
    case 'date': {
      const d = new Date(Date.UTC(2026, 0, 1) + int(rng, 0, 364) * 86_400_000);
      return d.toISOString().slice(0, 10);
    }
    case 'timestamp': {
      const d = new Date(Date.UTC(2026, 0, 1) + int(rng, 0, 365 * 86_400 - 1) * 1000);
      return `${d.toISOString().slice(0, 10)}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
    }
    default:
      return null;
  }
}

export function randomRow(schema: readonly Column[], rng: Random, serial: number): Row {
  return Object.fromEntries(schema.map((c) => [c.name, randomValue(c, rng, serial)]));
}

export interface GeneratorStatus {
  running: boolean;
  /** A push is on its way: after stop() its rows may still be accepted (and counted), so
   * the count is final only once this is false. */
  inFlight: boolean;
  rowsSent: number;
  pushes: number;
  /** Set while waiting out a 429: when the retry happens (ms since epoch). */
  backpressureUntil: number | null;
  backpressureHits: number;
  error: string | null;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface GeneratorOptions {
  schema: readonly Column[];
  /** Rows per second. */
  rate: number;
  push(records: ChangeRecord[], idempotencyKey: string): Promise<PushResult>;
  onStatus?(status: GeneratorStatus): void;
  rng?: Random;
  clock?: Clock;
  /** How often a batch is sent (ms); a batch holds the rows due since the last one. */
  intervalMs?: number;
  /** First serial number (ids). */
  firstSerial?: number;
  newKey?: () => string;
}

export class RowGenerator {
  private status: GeneratorStatus = {
    running: false,
    inFlight: false,
    rowsSent: 0,
    pushes: 0,
    backpressureUntil: null,
    backpressureHits: 0,
    error: null,
  };
  private timer: unknown = null;
  private lastAt = 0;
  private owed = 0;
  private serial: number;
  private rate: number;
  private readonly rng: Random;
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly newKey: () => string;
  private generation = 0;
  /** Pushes on their way (a restart while one is in flight can make two). */
  private pending = 0;

  constructor(private readonly options: GeneratorOptions) {
    this.rng = options.rng ?? Math.random;
    this.clock = options.clock ?? realClock;
    this.intervalMs = options.intervalMs ?? 250;
    this.serial = options.firstSerial ?? 1;
    this.rate = Math.max(0, options.rate);
    this.newKey = options.newKey ?? newIdempotencyKey;
  }

  get current(): GeneratorStatus {
    return { ...this.status };
  }

  setRate(rate: number): void {
    this.rate = Math.max(0, rate);
  }

  start(): void {
    if (this.status.running) return;
    this.generation += 1;
    this.update({ running: true, error: null, backpressureUntil: null });
    this.lastAt = this.clock.now();
    this.owed = 0;
    this.schedule(this.intervalMs);
  }

  stop(): void {
    this.generation += 1;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.update({ running: false, backpressureUntil: null });
  }

  private schedule(ms: number): void {
    const generation = this.generation;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      if (generation === this.generation) void this.tick(generation);
    }, ms);
  }

  /** Rows due since the last batch at the current rate (fractions carry over). */
  private due(): number {
    const now = this.clock.now();
    this.owed += ((now - this.lastAt) / 1000) * this.rate;
    this.lastAt = now;
    // Never build up more than two seconds' worth (e.g. after a slow push).
    this.owed = Math.min(this.owed, Math.max(1, this.rate * 2));
    const count = Math.floor(this.owed);
    this.owed -= count;
    return count;
  }

  private async tick(generation: number): Promise<void> {
    const count = this.due();
    if (count > 0) {
      const records: ChangeRecord[] = [];
      for (let i = 0; i < count; i++) records.push({ insert: randomRow(this.options.schema, this.rng, this.serial++) });
      const ok = await this.send(records, this.newKey(), generation);
      if (!ok) return;
    }
    if (generation === this.generation) this.schedule(this.intervalMs);
  }

  /** Sends one batch, waiting out 429s; false when the generator stopped (or failed). */
  private async send(records: ChangeRecord[], key: string, generation: number): Promise<boolean> {
    for (;;) {
      if (generation !== this.generation) return false;
      this.pending += 1;
      this.update({ inFlight: true });
      try {
        await this.options.push(records, key);
        // Accepted rows count even when the generator was stopped while the push was in flight.
        this.update({
          rowsSent: this.status.rowsSent + records.length,
          pushes: this.status.pushes + 1,
          backpressureUntil: null,
          inFlight: --this.pending > 0,
        });
        return generation === this.generation;
      } catch (error) {
        this.update({ inFlight: --this.pending > 0 });
        if (generation !== this.generation) return false;
        if (error instanceof BackpressureError) {
          const until = this.clock.now() + error.retryAfterMs;
          this.update({ backpressureUntil: until, backpressureHits: this.status.backpressureHits + 1 });
          await new Promise<void>((resolve) => {
            this.timer = this.clock.setTimeout(() => {
              this.timer = null;
              resolve();
            }, error.retryAfterMs);
          });
          // Time spent waiting does not count as owed rows: backpressure slows us down.
          this.lastAt = this.clock.now();
          continue;
        }
        this.generation += 1;
        this.update({ running: false, backpressureUntil: null, error: messagesOf(error).join(' ') });
        return false;
      }
    }
  }

  private update(patch: Partial<GeneratorStatus>): void {
    this.status = { ...this.status, ...patch };
    this.options.onStatus?.({ ...this.status });
  }
}
