import { describe, expect, it } from 'vitest';
import { IDLE_COLOUR, shareColour } from '../dashboard/graphDecorations';
import type { Profile, ProfileNode } from './api';
import { aggregateWords, formatValue, graphHeat } from './heat';

function node(name: string, total: number, extra: Partial<ProfileNode> = {}): ProfileNode {
  return { node: name, kind: 'map', series: [total], paths: ['row'], total, max: total, path_ticks: { row: 1 }, ...extra };
}

function profile(nodes: ProfileNode[], extra: Partial<Profile> = {}): Profile {
  return {
    metric: 'ms', unit: 'ms', aggregate: 'sum', from: 0, to: 9, ticks: [0], bucket: 1, downsampled: false, truncated: false,
    max_ticks: 5000, nodes, total: 0, top: [], ...extra,
  };
}

describe('graphHeat', () => {
  it('scales each node against the largest, on the neutral share scale', () => {
    const heat = graphHeat(profile([node('a', 40), node('b', 10), node('c', 0)]));
    expect(heat.colours.a).toBe(shareColour(1));
    expect(heat.colours.b).toBe(shareColour(0.25));
    expect(heat.colours.c).toBe(IDLE_COLOUR);
    // the darkest shade is still a light blue-grey: no red, dark text stays readable
    expect(heat.colours.a).toMatch(/^hsl\(214 /);
    expect(heat.values.b).toBe('10 ms');
  });

  it('names the metric and its scale in the legend', () => {
    const heat = graphHeat(profile([node('a', 12.5)]));
    expect(heat.legend).toMatchObject({ title: 'time (ms), total over ticks 0–9', min: '0 ms', max: '12.5 ms' });
    const state = graphHeat(profile([node('a', 1234)], { metric: 'state_rows', unit: 'rows', aggregate: 'last' }));
    expect(state.legend.title).toBe('state rows, at tick 9');
    expect(state.legend.max).toBe('1,234 rows');
  });

  it('keeps the path of the latest tick that did work, and windows’ late rows', () => {
    const heat = graphHeat(profile([
      node('w', 3, { paths: ['spark', 'row', 'skipped'], late_rows: [0, 2, 0], late_rows_total: 2 }),
      node('idle', 0, { paths: ['skipped'] }),
    ]));
    expect(heat.paths).toEqual({ w: 'row', idle: 'skipped' });
    expect(heat.late).toEqual({ w: 2 });
  });

  it('is all idle when nothing was measured', () => {
    const heat = graphHeat(profile([node('a', 0)]));
    expect(heat.colours.a).toBe(IDLE_COLOUR);
    expect(heat.legend.max).toBe('0 ms');
  });
});

describe('words', () => {
  it('formats values and ranges', () => {
    expect(formatValue(3, 'jobs')).toBe('3 jobs');
    expect(formatValue(0.123, 'ms')).toBe('0.12 ms');
    expect(formatValue(250.4, 'ms')).toBe('250 ms');
    expect(aggregateWords({ aggregate: 'sum', from: 4, to: 4 })).toBe('total over tick 4');
    expect(aggregateWords({ aggregate: 'sum', from: null, to: null })).toBe('total over no ticks');
  });
});
