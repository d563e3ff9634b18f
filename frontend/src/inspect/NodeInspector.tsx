// The node inspector: one node of the run (clicked in the circuit graph) at the current
// tick or any past one: its delta (+/- rows) or its contents, its sizes, in a
// virtualised table whose rows come from the server a page at a time (sorted and
// filtered there), so a 10^6-row state never reaches the page whole.

import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useMemo, useRef, useState } from 'react';
import { ErrorText, messagesOf } from '../components/ErrorText';
import { formatValue, formatWeight } from '../format';
import { computing, inspectApi, SORT_WEIGHT, type DonePage, type NodeKind, type NodeQuery, type PendingPage, type Sign } from './inspectApi';
import { PageCache, pagesFor } from './pageCache';
import './inspect.css';

interface Props {
  runId: number;
  node: string;
  /** The node's operator kind from the circuit document (until the server says). */
  operator?: string;
  /** The run's current tick (-1 before the first). */
  currentTick: number;
  onClose: () => void;
  pollMs?: number;
  pageSize?: number;
  /** Typing settles this long before a search or filter is sent (ms). */
  debounceMs?: number;
  /** While following the current tick: how long it must stay before it is inspected (ms). */
  followMs?: number;
}

export const ROW_HEIGHT = 28;
const DEFAULT_PAGE_SIZE = 100;

function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    if (ms <= 0) {
      setSettled(value);
      return;
    }
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return ms <= 0 ? value : settled;
}

type SortState = { column: string; desc: boolean } | null;

export function NodeInspector({ runId, node, operator, currentTick, onClose, pollMs = 500, pageSize = DEFAULT_PAGE_SIZE, debounceMs = 300, followMs = 1000 }: Props) {
  const [follow, setFollow] = useState(true);
  const [pickedTick, setPickedTick] = useState(Math.max(0, currentTick));
  // Following a live run: a tick is asked for once ticks pause for a moment (each new
  // tick is a recomputation on the server), not at every tick that flies by.
  const followed = useDebounced(currentTick, follow ? followMs : 0);
  const tick = follow ? followed : Math.min(pickedTick, currentTick);
  const [kind, setKind] = useState<NodeKind>('delta');
  const [sort, setSort] = useState<SortState>(null);
  const [search, setSearch] = useState('');
  const [sign, setSign] = useState<Sign | null>(null);
  const [filterColumn, setFilterColumn] = useState('');
  const [filterValue, setFilterValue] = useState('');
  const q = useDebounced(search.trim(), debounceMs);
  const filter = useDebounced(filterColumn && filterValue !== '' ? `${filterColumn}:${filterValue}` : '', debounceMs);

  const base = useMemo<Omit<NodeQuery, 'page'>>(
    () => ({ tick, kind, pageSize, sort: sort?.column ?? null, desc: sort?.desc ?? false, q, sign, filters: filter ? [filter] : [] }),
    [tick, kind, pageSize, sort, q, sign, filter],
  );
  const key = useMemo(() => JSON.stringify([runId, node, base]), [runId, node, base]);

  const [head, setHead] = useState<{ key: string; page: DonePage } | null>(null);
  const [pending, setPending] = useState<PendingPage | null>(null);
  const [errors, setErrors] = useState<string[]>([]);
  const [, setLoadedPages] = useState(0);
  const cacheRef = useRef(new PageCache(pageSize));
  const scrollRef = useRef<HTMLDivElement>(null);

  // A new node: forget the last one's columns and choices that name its columns.
  useEffect(() => {
    setHead(null);
    setSort(null);
    setFilterColumn('');
    setFilterValue('');
  }, [runId, node]);

  // Page 1 of the query: polled while the tick's inspection is computed.
  useEffect(() => {
    if (tick < 0) return;
    let active = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cache = new PageCache(pageSize);
    cache.claim([1]);
    cacheRef.current = cache;
    setErrors([]);
    const load = () =>
      inspectApi.nodePage(runId, node, { ...base, page: 1 }).then(
        (page) => {
          if (!active) return;
          if (computing(page)) {
            setPending(page);
            timer = setTimeout(load, pollMs);
            return;
          }
          setPending(null);
          if (page.status !== 'done') {
            setHead(null);
            setErrors([`The inspection of tick ${page.tick} failed: ${page.error ?? 'unknown error'}`]);
            return;
          }
          cache.put(1, page.rows);
          setHead({ key, page });
          if (scrollRef.current) scrollRef.current.scrollTop = 0;
        },
        (error) => {
          if (!active) return;
          setPending(null);
          setErrors(messagesOf(error));
        },
      );
    void load();
    return () => {
      active = false;
      if (timer) clearTimeout(timer);
    };
  }, [key, runId, node, base, tick, pageSize, pollMs]);

  const current = head?.key === key ? head.page : null;
  const shown = head?.page ?? null; // the last answer, kept on screen while the next one loads
  const count = current?.count ?? 0;
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
    initialRect: { width: 520, height: 360 },
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? -1;

  // The pages of the rows in sight, each fetched once.
  useEffect(() => {
    if (!current) return;
    const cache = cacheRef.current;
    for (const page of cache.claim(pagesFor(first, last, pageSize, count))) {
      inspectApi.nodePage(runId, node, { ...base, page }).then(
        (answer) => {
          if (cacheRef.current !== cache) return;
          cache.put(page, answer.status === 'done' ? answer.rows : []);
          setLoadedPages(cache.loaded);
        },
        (error) => {
          cache.release(page);
          if (cacheRef.current === cache) setErrors(messagesOf(error));
        },
      );
    }
  }, [current, first, last, count, pageSize, runId, node, base]);

  function toggleSort(column: string) {
    setSort((s) => (s?.column === column ? (s.desc ? null : { column, desc: true }) : { column, desc: false }));
  }

  const columns = shown?.columns ?? [];
  const padTop = items.length ? (items[0]?.start ?? 0) : 0;
  const padBottom = items.length ? virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0) : 0;
  const sizes = shown?.sizes;
  const stats = shown?.stats;
  const sortMark = (column: string) => (sort?.column === column ? (sort.desc ? ' ▼' : ' ▲') : '');
  const ariaSort = (column: string) => (sort?.column === column ? (sort.desc ? 'descending' : 'ascending') : 'none');

  return (
    <aside className="card node-inspector" data-testid="node-inspector" data-node={node}>
      <div className="inspector-head">
        <h2>
          <code data-testid="inspector-node">{node}</code>{' '}
          <span className="badge kind">{shown?.operator ?? operator ?? 'node'}</span>
          {shown?.export && <span className="muted small"> shows its export <code>{shown.export}</code></span>}
        </h2>
        <button type="button" className="plain" onClick={onClose} aria-label="Close the inspector" data-testid="inspector-close">
          close
        </button>
      </div>

      {currentTick < 0 ? (
        <p className="muted">No tick has completed yet.</p>
      ) : (
        <>
          <div className="inspector-controls">
            <label className="follow">
              <input type="checkbox" checked={follow} data-testid="inspector-follow"
                onChange={(e) => { setFollow(e.target.checked); setPickedTick(currentTick); }} />
              current tick
            </label>
            <input type="range" min={0} max={currentTick} value={tick} aria-label="Tick to inspect" data-testid="inspector-tick-range"
              onChange={(e) => { setFollow(false); setPickedTick(Number(e.target.value)); }} />
            <input type="number" min={0} max={currentTick} value={tick} aria-label="Tick number" data-testid="inspector-tick"
              onChange={(e) => { setFollow(false); setPickedTick(Math.max(0, Math.min(currentTick, Math.round(Number(e.target.value) || 0)))); }} />
            <span className="muted small">of {currentTick}</span>
            <div className="segmented" role="group" aria-label="What to show">
              <button type="button" aria-pressed={kind === 'delta'} data-testid="inspector-kind-delta" onClick={() => setKind('delta')}>
                Delta
              </button>
              <button type="button" aria-pressed={kind === 'integral'} data-testid="inspector-kind-integral" onClick={() => setKind('integral')}>
                Contents
              </button>
            </div>
          </div>

          {sizes && (
            <dl className="inspector-sizes" data-testid="inspector-sizes">
              <div>
                <dt>Delta at tick {shown!.tick}</dt>
                <dd>
                  <span className="plus">+{sizes.inserted}</span> <span className="minus">−{sizes.deleted}</span>{' '}
                  <span className="muted">({sizes.delta_rows} rows)</span>
                </dd>
              </div>
              <div>
                <dt>Contents</dt>
                <dd data-testid="inspector-contents-rows">{sizes.integral_rows} rows</dd>
              </div>
              {typeof stats?.state_rows === 'number' && (
                <div title="Rows the run's engine keeps for this node (its traces), as the tick reported">
                  <dt>Engine state</dt>
                  <dd data-testid="inspector-state-rows">{stats.state_rows} rows</dd>
                </div>
              )}
              {(typeof stats?.rows_in === 'number' || typeof stats?.rows_out === 'number') && (
                <div>
                  <dt>Tick rows</dt>
                  <dd>
                    {typeof stats?.rows_in === 'number' && `in ${stats.rows_in}`} {typeof stats?.rows_out === 'number' && `out ${stats.rows_out}`}
                  </dd>
                </div>
              )}
              {sizes.iterations && (
                <div data-testid="inspector-iterations">
                  <dt>Iterations</dt>
                  <dd>
                    {sizes.iterations.length} at this tick: {sizes.iterations.map((i) => i.rows).join(' → ')} rows
                  </dd>
                </div>
              )}
            </dl>
          )}

          <div className="inspector-filters">
            <input type="search" placeholder="Search rows" value={search} aria-label="Search rows" data-testid="inspector-search"
              onChange={(e) => setSearch(e.target.value)} />
            <select value={sign ?? ''} aria-label="Rows by sign" data-testid="inspector-sign"
              onChange={(e) => setSign((e.target.value || null) as Sign | null)}>
              <option value="">all rows</option>
              <option value="positive">+ inserted</option>
              <option value="negative">− deleted</option>
            </select>
            <select value={filterColumn} aria-label="Filter column" data-testid="inspector-filter-column" disabled={!columns.length}
              onChange={(e) => setFilterColumn(e.target.value)}>
              <option value="">column =</option>
              {columns.map((c) => (
                <option key={c.name} value={c.name}>{c.name} =</option>
              ))}
            </select>
            <input type="text" placeholder="value" value={filterValue} aria-label="Filter value" data-testid="inspector-filter-value"
              disabled={!filterColumn} onChange={(e) => setFilterValue(e.target.value)} />
          </div>

          <ErrorText messages={errors} testId="inspector-error" />
          {pending && (
            <p className="muted" data-testid="inspector-progress">
              {pending.status === 'queued' ? 'Queued: ' : ''}recomputing every node at tick {pending.tick} from the input log…{' '}
              <progress max={1} value={pending.progress} /> {Math.round(pending.progress * 100)}%
            </p>
          )}

          {shown && (
            <>
              <p className="muted small" data-testid="inspector-count">
                {shown.kind === 'delta' ? 'Delta' : 'Contents'} of <code>{node}</code> at tick {shown.tick}: {shown.count} of {shown.total} rows
                {current === null && ' (loading…)'}
              </p>
              <div className="inspector-scroll" ref={scrollRef} data-testid="inspector-scroll">
                <table className="view-table inspector-table" data-testid="inspector-table" data-count={count} data-tick={shown.tick} data-kind={shown.kind}>
                  <thead>
                    <tr>
                      {columns.map((c) => (
                        <th key={c.name} aria-sort={ariaSort(c.name)}>
                          <button type="button" className="plain sort" data-testid={`inspector-sort-${c.name}`} onClick={() => toggleSort(c.name)}>
                            {c.name}{sortMark(c.name)}
                          </button>
                        </th>
                      ))}
                      <th aria-sort={ariaSort(SORT_WEIGHT)}>
                        <button type="button" className="plain sort" data-testid="inspector-sort-weight" onClick={() => toggleSort(SORT_WEIGHT)}>
                          weight{sortMark(SORT_WEIGHT)}
                        </button>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {padTop > 0 && <tr style={{ height: padTop }} aria-hidden />}
                    {current &&
                      items.map((item) => {
                        const row = cacheRef.current.row(item.index);
                        if (!row) {
                          return (
                            <tr key={item.key} className="loading-row" style={{ height: ROW_HEIGHT }}>
                              <td colSpan={columns.length + 1} className="muted">…</td>
                            </tr>
                          );
                        }
                        const sign = row.weight > 0 ? 'plus' : 'minus';
                        return (
                          <tr key={item.key} className={`row-${sign}`} data-index={item.index} style={{ height: ROW_HEIGHT }}>
                            {columns.map((c) => {
                              const value = row.data[c.name];
                              const text = formatValue(value);
                              return (
                                <td key={c.name} className={value === null ? 'null' : undefined} title={text}>
                                  {text}
                                </td>
                              );
                            })}
                            <td className={`weight ${row.weight > 0 ? 'positive' : 'negative'}`}>{formatWeight(row.weight)}</td>
                          </tr>
                        );
                      })}
                    {padBottom > 0 && <tr style={{ height: padBottom }} aria-hidden />}
                  </tbody>
                </table>
                {current && count === 0 && (
                  <p className="muted empty" data-testid="inspector-empty">
                    {current.total === 0 ? (kind === 'delta' ? 'No change at this tick.' : 'Empty.') : 'No row matches.'}
                  </p>
                )}
              </div>
            </>
          )}
        </>
      )}
    </aside>
  );
}
