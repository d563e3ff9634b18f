// The run page's profile state: the chosen metric, the selected node, and the profile
// and frontier over ticks, re-read as ticks arrive (at most once a second).

import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../api';
import { fetchFrontier, fetchProfile, type FrontierHistory, type Metric, type Profile } from './api';
import { graphHeat, type GraphHeat } from './heat';

export const REFRESH_MS = 1000;

/** What fills the graph's nodes: each node's share of the latest tick's time (live, the
 * default), or a profile metric over the ticks as a heatmap. */
export type Colouring = 'share' | Metric;

export interface ProfileState {
  colouring: Colouring;
  setColouring(colouring: Colouring): void;
  /** The metric of the top nodes and the series: the colouring's, or ms for the share. */
  metric: Metric;
  selected: string | null;
  select(node: string | null): void;
  profile: Profile | null;
  frontier: FrontierHistory | null;
  heat: GraphHeat | null;
  error: string;
}

export function useProfile(runId: number | null, tick: number | null): ProfileState {
  const [colouring, setColouring] = useState<Colouring>('share');
  const metric: Metric = colouring === 'share' ? 'ms' : colouring;
  const [selected, select] = useState<string | null>(null);
  const [profile, setProfile] = useState<Profile | null>(null);
  const [frontier, setFrontier] = useState<FrontierHistory | null>(null);
  const [error, setError] = useState('');
  const lastRead = useRef(0);

  useEffect(() => {
    if (runId === null || tick === null || tick < 0) return;
    let active = true;
    // Coalesced: a burst of ticks reads once, at most every REFRESH_MS.
    const wait = Math.max(0, lastRead.current + REFRESH_MS - Date.now());
    const timer = window.setTimeout(() => {
      lastRead.current = Date.now();
      Promise.all([fetchProfile(runId, metric), fetchFrontier(runId)]).then(
        ([p, f]) => {
          if (!active) return;
          setProfile(p);
          setFrontier(f);
          setError('');
        },
        (e) => active && setError(e instanceof ApiError ? e.messages.join(' ') : String(e)),
      );
    }, wait);
    return () => {
      active = false;
      window.clearTimeout(timer);
    };
  }, [runId, tick, metric]);

  const heat = useMemo(
    () => (colouring !== 'share' && profile && profile.metric === metric ? graphHeat(profile, selected) : null),
    [colouring, profile, metric, selected],
  );
  const current = profile && profile.metric === metric ? profile : null;
  return { colouring, setColouring, metric, selected, select, profile: current, frontier, heat, error };
}
