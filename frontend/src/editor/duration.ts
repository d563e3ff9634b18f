// Window durations as the circuit format holds them: an integer (a bigint time column's
// units) or a string "<n> <unit>" (a timestamp column), e.g. "1 minute", "30 seconds", "30s".
// The editor shows a number and a unit; what it writes parses the same way on the server
// (dbsp/operators/window.py, parse_duration).

export const UNITS = ['milliseconds', 'seconds', 'minutes', 'hours', 'days'] as const;
export type Unit = (typeof UNITS)[number];
/** The unit choice for a bigint time column: a plain integer. */
export const PLAIN = '';

const ALIASES: Record<string, Unit> = {
  ms: 'milliseconds', millisecond: 'milliseconds', milliseconds: 'milliseconds',
  s: 'seconds', sec: 'seconds', second: 'seconds', seconds: 'seconds',
  m: 'minutes', min: 'minutes', minute: 'minutes', minutes: 'minutes',
  h: 'hours', hour: 'hours', hours: 'hours',
  d: 'days', day: 'days', days: 'days',
};

export interface Duration {
  amount: number | null;
  unit: Unit | typeof PLAIN;
}

/** The document's value as number + unit; null if it is neither (shown as text to fix). */
export function parseDuration(value: unknown): Duration | null {
  if (value === undefined || value === null || value === '') return { amount: null, unit: 'seconds' };
  if (typeof value === 'number' && Number.isInteger(value)) return { amount: value, unit: PLAIN };
  if (typeof value !== 'string') return null;
  const m = /^\s*(\d+)\s*([a-z]+)\s*$/.exec(value);
  const unit = m ? ALIASES[m[2]!] : undefined;
  return m && unit ? { amount: Number(m[1]), unit } : null;
}

/** What the document holds for a number + unit ("1 minute", "90 seconds", 60). */
export function formatDuration({ amount, unit }: Duration): number | string | undefined {
  if (amount === null || !Number.isFinite(amount)) return undefined;
  if (unit === PLAIN) return amount;
  return `${amount} ${amount === 1 ? unit.slice(0, -1) : unit}`;
}
