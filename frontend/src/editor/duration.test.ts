import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration';

describe('window durations', () => {
  it('reads what documents hold: "1 minute", "30 seconds", "30s", "2 minutes", 60', () => {
    expect(parseDuration('1 minute')).toEqual({ amount: 1, unit: 'minutes' });
    expect(parseDuration('30 seconds')).toEqual({ amount: 30, unit: 'seconds' });
    expect(parseDuration('30s')).toEqual({ amount: 30, unit: 'seconds' });
    expect(parseDuration(60)).toEqual({ amount: 60, unit: '' });
    expect(parseDuration('soon')).toBeNull();
    expect(parseDuration(1.5)).toBeNull();
  });

  it('writes back what it read, and what the server parses', () => {
    for (const held of ['1 minute', '30 seconds', '2 minutes', '1 hour', '10 days', 60] as const) {
      expect(formatDuration(parseDuration(held)!)).toBe(held);
    }
    expect(formatDuration({ amount: 90, unit: 'seconds' })).toBe('90 seconds');
    expect(formatDuration({ amount: null, unit: 'seconds' })).toBeUndefined();
  });
});
