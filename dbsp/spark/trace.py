"""A trace: the integral I(Δ) of a change stream, kept as a spine (as differential
dataflow's and Feldera's traces) so that adding a small delta costs little, a lookup's
cost does not grow with the number of ticks, and Spark lineage never grows.

- The driver part: Arrow tables ("parts") on the driver, each consolidated, largest
  first. An add appends the change as a new part; adjacent parts merge (consolidate)
  while the newer holds at least 1/`DRIVER_RATIO` of the older's rows, so there are
  O(log n) parts and each row is rewritten O(log n) times. A lookup probes each part
  by one index: a part of `probe.MIN_ROWS` rows or more of a keyed trace is kept
  sorted by an integer-like key column and binary-searched. It is sorted in the tick
  that adds it (a change is at most that tick's rows), and a merge of two sorted parts
  is sorted again at about linear cost (`_merge_sorted`: two runs), so no tick after a
  load sorts the loaded state (at 10^8 rows of join state, the first probe after the
  load sorted 3.9·10^7 rows: a 13.9 s tick).
  When the trace's key is all its data columns (distinct's) and they compare exactly
  (no floats), parts merge without hashing: both sorted by the index column, the
  newer's rows are found in the older by binary search (their weights added there),
  the rest merged in as a sorted run, so the merged part is indexed already; and a
  bulk change's old weights (`weights`) are found the same way (`_match`). An index
  column with many rows per value (too many candidate pairs) falls back to
  `_merge_sorted`.
- The Spark levels: when the driver part outgrows its budget it becomes a level (in a
  background thread under the byte budget, `LevelSpill`: the parts stay on the
  driver, probed as before, until the level takes their place), a
  DataFrame hash-partitioned by the trace's key (`repartition(n, *key)`, about
  `LEVEL_PARTITION_ROWS` rows per partition) and locally checkpointed with
  StorageLevel MEMORY_AND_DISK (kept once, as rows, spilling to disk; no lineage).
  Adjacent levels merge (consolidate + checkpoint) while the newer is at least
  1/`ratio` of the older, in a background thread (`LevelMerge`, one at a time, in a
  low Spark scheduler pool): a merge costs O(state), and the tick that spilled, and
  those after it, read both levels until the merged one takes their place. A lookup by the key computes which partitions hold its keys
  (Spark's Murmur3 on the driver, see probe.spark_partitions) and runs one job over
  just those partitions of every level, shipping them from the level's Arrow batches
  (converted once when the level is made, and kept like it); a lookup that touches
  most of a big level filters that level in Spark instead, and a lookup of more than
  `PREDICATE_MAX_KEYS` keys (a bulk change) scans the levels' kept batches on the
  executors (scan.py: no shuffle of the levels).

The driver part's budget is in bytes and shared by every trace of a runtime (see
StateBudget): the process's memory is what runs out, whatever the number of traces.
An explicit `recent_max` (a row count per trace; the runtime's or the trace's own)
replaces it; tests use small ones to reach the Spark paths.

Reads see the union of all parts (unconsolidated across parts: weights add up, which
is what joins and aggregates need).
"""
from __future__ import annotations

import logging
import math
import os
import threading
import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..types import Schema
from . import probe
from .probe import SortedIndex, spark_partitions
from .scan import scan_levels
from .zsets import (WEIGHT, concat, consolidate, consolidate_arrow, fill_value, join_codes, null_safe_semi_arrow, union_all,
                    with_join_codes)

#: Above this many distinct keys a lookup filters with a broadcast semi-join instead of
#: an IN-list / OR-of-equalities predicate (and over every partition).
PREDICATE_MAX_KEYS = 256
#: driver parts merge while the newer has at least 1/DRIVER_RATIO of the older's rows
DRIVER_RATIO = 2
#: rows per partition of a Spark level (a pruned lookup scans whole partitions)
LEVEL_PARTITION_ROWS = 10_000
#: rows per partition a shuffle into a level reads from (spills and merges; see _map_partitions)
MAP_PARTITION_ROWS = 1_000_000
#: a lookup ships every partition it touches of a level of at most this many partitions
#: (a bigger level is filtered by a Spark job when the lookup touches most of it)
SHIP_WHOLE_LEVEL = 32
#: the share of the driver's memory (spark.driver.memory) the driver parts may hold by default
DRIVER_STATE_SHARE = 0.5
#: level merges run in a background thread (a runtime's `background_merges` overrides)
BACKGROUND_MERGES = True
#: the Spark scheduler pool background merges run in (session.py: FAIR scheduling, so a
#: tick's tasks take the next free core ahead of a merge's)
MERGE_POOL = "dbsp-background"

log = logging.getLogger(__name__)


def parse_bytes(text: str) -> int:
    """'2g', '512m', '1048576' (Spark's memory strings) as bytes."""
    text = text.strip().lower().rstrip("b")
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def default_state_bytes() -> int:
    """DBSPWEB_DRIVER_STATE_BYTES (bytes, or '4g'), else DRIVER_STATE_SHARE of the
    driver's memory (SPARK_DRIVER_MEMORY, Spark's default 2g when unset)."""
    explicit = os.environ.get("DBSPWEB_DRIVER_STATE_BYTES", "").strip()
    if explicit:
        return parse_bytes(explicit)
    return int(parse_bytes(os.environ.get("SPARK_DRIVER_MEMORY", "2g")) * DRIVER_STATE_SHARE)


class StateBudget:
    """The bytes every trace of one runtime may keep on the driver, together. Parts
    are counted once however many traces share them (fixed-point iterations copy
    executors, and the copies share their parts). When an add goes over, the traces
    holding the most driver bytes move their driver parts to Spark until it fits."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self.traces: weakref.WeakSet = weakref.WeakSet()

    def hold(self, parts) -> None:
        for p in parts:
            p.holders += 1
            if p.holders == 1:
                self.used += p.nbytes

    def drop(self, parts) -> None:
        for p in parts:
            p.holders -= 1
            if p.holders == 0:
                self.used -= p.nbytes

    def enforce(self) -> None:
        """Spill the traces holding the most until the parts not already on their way
        to Spark (a running spill's) fit the budget."""
        traces = list(self.traces)
        if self.used - sum(t.leaving_bytes() for t in traces) <= self.limit:
            return
        for trace in sorted(traces, key=lambda t: -(t.driver_bytes() - t.leaving_bytes())):
            if self.used - sum(t.leaving_bytes() for t in traces) <= self.limit:
                break
            if trace.driver_bytes() > trace.leaving_bytes():
                trace._spill()


class _Part:
    """One consolidated Arrow table of a driver part, and the sorted index built on it
    the first time it is probed (the table is then kept in that order: same rows)."""

    __slots__ = ("table", "rows", "nbytes", "index", "holders")

    def __init__(self, table: pa.Table):
        self.table, self.rows, self.nbytes = table, table.num_rows, table.nbytes
        self.index: SortedIndex | None = None
        self.holders = 0

    def probe(self, keys: pa.Table, columns: list[str]) -> pa.Table:
        """The rows whose `columns` equal (NULL-safe) a row of `keys`."""
        column = _index_column(self.table, columns)
        if column is None:
            return null_safe_semi_arrow(self.table, keys, columns)
        if self.rows < probe.MIN_ROWS:  # a small part: scanned by one column, the rest checked on what matches
            found = null_safe_semi_arrow(self.table, keys, [column])
        else:
            if self.index is None or self.index.column != column:
                self.index = SortedIndex(self.table, column)
                self.table = self.index.table
            found = self.index.take(keys[column])
        if len(columns) > 1 and found.num_rows:
            found = null_safe_semi_arrow(found, keys, columns)
        return found

    def indexed(self, column: str) -> SortedIndex:
        """This part's index by `column` (sorting the part the first time, whatever its size)."""
        if self.index is None or self.index.column != column:
            self.index = SortedIndex(self.table, column)
            self.table = self.index.table
        return self.index

    def match(self, rows: pa.Table, columns: list[str]) -> "np.ndarray | None":
        """For each row of `rows` (whose `columns` are all of this part's data columns),
        the position in `self.table` of the row with the same data (NULL-safe), or -1;
        None when this part cannot be matched by its index (see `_match`)."""
        column = _index_column(self.table, columns)
        if column is None or not _matchable(self.table.schema, columns):
            return None
        return _match(self.indexed(column), rows, columns)


def _matchable(schema: pa.Schema, columns: list[str]) -> bool:
    """Whether equality of these columns' values is row identity as consolidation
    (Arrow's group_by) sees it: not for floats (NaN, -0.0) or nested types."""
    for c in columns:
        t = schema.field(c).type
        if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_boolean(t)
                or pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_decimal(t) or pa.types.is_binary(t)):
            return False
    return True


#: a match gives up (the caller consolidates by hashing instead) when its index column
#: has so many rows per key that more than MATCH_PAIRS x (both sides' rows) candidate
#: pairs would be compared
MATCH_PAIRS = 2


def flat(column) -> pa.Array:
    """One Arrow array (a chunked column's chunks combined)."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _match(index: SortedIndex, rows: pa.Table, columns: list[str]) -> "np.ndarray | None":
    """Where each row of `rows` sits in `index.table` (a consolidated part: at most one
    row has the same data), or -1: the candidates are the rows with the same index
    column (binary search), then the other columns are compared on the candidate pairs,
    NULL equal to NULL. No hashing: O(rows · log part + candidates)."""
    n, c, part = rows.num_rows, index.column, index.table
    key = flat(rows[c])
    probes = probe._int64(key.fill_null(fill_value(key.type)) if key.null_count else key)
    lo = np.searchsorted(index.keys, probes, "left")
    hi = np.searchsorted(index.keys, probes, "right")
    if key.null_count:  # a NULL key's candidates: the part's NULL rows (sorted last)
        null = key.is_null().to_numpy(zero_copy_only=False)
        lo[null], hi[null] = index.valid, part.num_rows
    lengths = hi - lo
    total = int(lengths.sum())
    if total > MATCH_PAIRS * (n + part.num_rows):
        return None
    ri = np.repeat(np.arange(n), lengths)
    pj = np.repeat(lo - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
    for other in columns:
        if other == c or not len(ri):
            continue
        a, b = flat(part[other]).take(pj), flat(rows[other]).take(ri)
        if a.null_count == 0 and b.null_count == 0 and (pa.types.is_integer(a.type) or pa.types.is_timestamp(a.type)
                                                        or pa.types.is_date(a.type)):
            same = a.to_numpy(zero_copy_only=False) == b.to_numpy(zero_copy_only=False)
        else:
            same = pc.fill_null(pc.equal(a, b), False)
            if a.null_count or b.null_count:
                same = pc.or_(same, pc.and_(pc.is_null(a), pc.is_null(b)))
            same = same.to_numpy(zero_copy_only=False)
        ri, pj = ri[same], pj[same]
    positions = np.full(n, -1, np.int64)
    positions[ri] = pj
    return positions


def _merge(older: _Part, newer: _Part, key: list[str]) -> _Part:
    """Two consolidated parts as one. When both can be matched by their index column
    (the trace's key covers all data columns, see _match): the newer's rows are found in
    the older by binary search, their weights added there, the rest merged in by the
    index column (two sorted runs: a linear merge), so the result is sorted and indexed
    already (the next probe sorts nothing). Otherwise Arrow's group_by, the result
    sorted by the key's index column again when it is big enough to be probed by it
    (`_merge_sorted`)."""
    names = [n for n in older.table.column_names if n != WEIGHT]
    column = _index_column(older.table, key) if key else None
    if column is None or older.rows + newer.rows < probe.MIN_ROWS:
        return _Part(consolidate_arrow(concat([older.table, newer.table])))
    a, b = older.indexed(column), newer.indexed(column)
    if sorted(key) == sorted(names) and _matchable(older.table.schema, names):
        positions = _match(a, b.table, names)
        if positions is not None:
            return _merge_matched(a, b, positions)
    return _merge_sorted(a, b)


def _merge_sorted(a: SortedIndex, b: SortedIndex) -> _Part:
    """Two parts sorted by the same index column as one consolidated part, sorted by it
    too. Arrow's group_by (single-threaded) keeps its groups nearly in the order it
    first meets them, so the consolidated rows are two sorted runs (a's, then b's new
    keys) with a few rows out of place, and the index's stable sort (NumPy's timsort)
    merges such runs in about linear time: 4·10^6 rows in 7 ms against 0.4 s shuffled."""
    part = _Part(consolidate_arrow(concat([a.table, b.table])))
    if part.rows:
        part.indexed(a.column)
    return part


def _merge_matched(a: SortedIndex, b: SortedIndex, positions: np.ndarray) -> _Part:
    """`a` and `b` as one part: `b`'s rows found in `a` (`positions`) add their weights
    there (rows reaching 0 go), the others are merged in by the index column. Both are
    sorted by it (NULLs last), so the result is too: one `take` of both tables."""
    found = positions >= 0
    weights = np.array(flat(a.table[WEIGHT]).to_numpy(zero_copy_only=False), np.int64)  # (a copy)
    weights[positions[found]] += flat(b.table[WEIGHT]).to_numpy(zero_copy_only=False)[found]
    keep, new = weights != 0, ~found
    older = np.flatnonzero(keep[:a.valid])  # the rows of each kept, with a non-NULL key, in key order
    newer = np.flatnonzero(new[:b.valid])
    older_keys, newer_keys = a.keys[older], b.keys[newer]
    # each newer row goes after the older rows with a key <= its own (two sorted runs)
    at = np.searchsorted(older_keys, newer_keys, "right") + np.arange(len(newer))
    is_new = np.zeros(len(older) + len(newer), bool)
    is_new[at] = True
    rows = np.empty(len(is_new), np.int64)
    rows[~is_new], rows[is_new] = older, newer + a.table.num_rows
    keys = np.empty(len(is_new), np.int64)
    keys[~is_new], keys[is_new] = older_keys, newer_keys
    rows = np.concatenate([rows, a.valid + np.flatnonzero(keep[a.valid:]),  # then the NULL keys' rows
                           a.table.num_rows + b.valid + np.flatnonzero(new[b.valid:])])
    summed = a.table.set_column(a.table.schema.get_field_index(WEIGHT), a.table.schema.field(WEIGHT), pa.array(weights))
    table = pa.concat_tables([summed, b.table], promote_options="permissive").take(pa.array(rows)).combine_chunks()
    part = _Part(table)
    part.index = SortedIndex(table, a.column, keys=keys)
    return part


def _index_column(table: pa.Table, columns: list[str]) -> str | None:
    """The first lookup column a sorted index can search (integer-like), if any."""
    for c in columns:
        t = table.schema.field(c).type
        if pa.types.is_int64(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t):
            return c
    return None


class Trace:
    def __init__(self, ctx, schema: Schema, key: list[str] | None = None, recent_max: int | None = None, ratio: int = 4,
                 background_merges: bool | None = None):
        self.ctx, self.schema = ctx, schema
        self.key = list(key) if key else []
        #: a row count per trace (explicit), or None: the runtime's byte budget
        self.recent_max = getattr(ctx, "recent_max", None) if recent_max is None else recent_max
        self.budget: StateBudget | None = getattr(ctx, "state_budget", None)
        self.ratio = ratio
        self._parts: list[_Part] = []  # the driver part, largest first
        self.levels: list[tuple[object, int]] = []  # (checkpointed DataFrame, row bound), largest first
        #: id(level) -> (its partitions, hash-partitioned by key; its rows as an RDD of Arrow batches)
        self._partitions: dict[int, tuple] = {}
        self.shared = False  # levels also belong to a copy: never release them
        self._retired: list = []  # levels merged away, released at the next add
        #: merge adjacent levels in a background thread (LevelMerge): not on Spark Connect
        self.background_merges = (getattr(ctx, "background_merges", BACKGROUND_MERGES) if background_merges is None
                                  else background_merges)
        self._merging: LevelMerge | None = None  # the merge running for this trace
        self._spilling: LevelSpill | None = None  # the spill running for this trace (its parts stay here until it lands)
        self._register()

    def _register(self) -> None:
        if self.budget is not None:
            self.budget.traces.add(self)
            self._held = []  # the parts this trace holds in the budget (released with it)
            weakref.finalize(self, self.budget.drop, self._held)

    def _set_parts(self, parts: list[_Part]) -> None:
        if self.budget is not None:
            self.budget.hold(parts)
            self.budget.drop(self._held)
            self._held[:] = parts
        self._parts = parts

    # ---- the driver part -------------------------------------------------------------
    @property
    def recent(self) -> pa.Table | None:
        """The driver part as one consolidated table (None when empty)."""
        if len(self._parts) > 1:
            merged = consolidate_arrow(concat([p.table for p in self._parts]))
            if self._spilling is not None:  # (a running spill's parts stay as they are until it lands)
                return merged if merged.num_rows else None
            self._set_parts([_Part(merged)] if merged.num_rows else [])
        return self._parts[0].table if self._parts else None

    @recent.setter
    def recent(self, table: pa.Table | None) -> None:
        self._set_parts([_Part(table)] if table is not None and table.num_rows else [])

    def driver_rows(self) -> int:
        return sum(p.rows for p in self._parts)

    def driver_bytes(self) -> int:
        return sum(p.nbytes for p in self._parts)

    def leaving_bytes(self) -> int:
        """The driver bytes a running spill is moving to Spark (freed when it lands)."""
        return sum(p.nbytes for p in self._spilling.parts) if self._spilling is not None else 0

    _recent_rows = driver_rows

    def __deepcopy__(self, memo):
        """A copy that shares the immutable parts: the Arrow tables and the cached levels."""
        clone = Trace.__new__(Trace)
        clone.__dict__.update(self.__dict__)
        clone.levels = list(self.levels)
        clone._partitions = dict(self._partitions)
        clone._retired = []
        clone._merging = None  # (a merge running now is the original's: the copy keeps both levels)
        clone._spilling = None  # (and a spill: the copy keeps the parts)
        clone._parts = []
        clone._register()
        clone._set_parts(list(self._parts))
        self.shared = clone.shared = True
        return clone

    def snapshot_state(self):
        """The integral's rows (consolidated, on the driver) for dbsp.snapshot."""
        return self.snapshot_table()

    @classmethod
    def restore_state(cls, table, ctx, fresh: "Trace | None"):
        if fresh is None:
            raise ValueError("a trace is restored into the fresh runtime's trace")
        fresh.recent, fresh.levels, fresh.shared = None, [], False
        fresh.add(table)
        return fresh

    @property
    def rows(self) -> int:
        """An upper bound of the rows held (exact for the driver part)."""
        return self.driver_rows() + sum(n for _, n in self.levels)

    def add(self, table: "pa.Table | _Part | None") -> None:
        """Add a consolidated change (a table, or a part from `part_of`, indexed already)."""
        if self._retired:
            self._release_retired()
        self._adopt()
        if table is None or (table.rows if isinstance(table, _Part) else table.num_rows) == 0:
            return
        part = table if isinstance(table, _Part) else _Part(table)
        column = _index_column(part.table, self.key) if self.key else None
        if column is not None and part.rows >= probe.MIN_ROWS:
            part.indexed(column)  # sorted now, in the tick that brings it, not in the first tick that probes it
        parts = self._parts + [part]
        leaving = {id(p) for p in self._spilling.parts} if self._spilling is not None else ()
        while len(parts) >= 2 and parts[-1].rows * DRIVER_RATIO >= parts[-2].rows and id(parts[-2]) not in leaving:
            merged = _merge(parts[-2], parts[-1], self.key)
            parts[-2:] = [merged] if merged.rows else []
        self._set_parts(parts)
        if self.recent_max is not None:
            if self.driver_rows() > self.recent_max:
                self._spill()
        elif self.budget is not None:
            self.budget.enforce()

    def part_of(self, table: pa.Table) -> _Part:
        """A consolidated change as a driver part, sorted and indexed by the key's index
        column when it has one: `weights` probes with it, and `add` keeps it (and its
        index) as it is. A small change into an empty trace goes as it is (nothing
        probes it: `add` sorts parts of probe.MIN_ROWS rows or more)."""
        part = _Part(table)
        column = _index_column(table, self.key) if self.key else None
        if column is not None and (self._parts or self.levels):
            part.indexed(column)
        return part

    def weights(self, rows: pa.Table) -> np.ndarray:
        """The weight in the integral of each row of `rows` (distinct rows, with every data
        column; the trace's key is all of them): each driver part matched by its index
        (`_Part.match`); parts that cannot be, and the Spark levels, through `lookup`'s
        probes and one NULL-safe hash join."""
        self._adopt()
        names = self.schema.names
        rows = rows.select(names).cast(pa.schema([self.ctx.arrow_schema(self.schema).field(c) for c in names]))
        total = np.zeros(rows.num_rows, np.int64)
        rest = []
        for p in self._parts:
            positions = p.match(rows, names) if rows.num_rows else None
            if positions is None:
                rest.append(p)
                continue
            w = flat(p.table[WEIGHT]).to_numpy(zero_copy_only=False)
            total += np.where(positions >= 0, w[positions], 0)
        if (rest or self.levels) and rows.num_rows:
            found = [p.probe(rows, names) for p in rest]
            if self.levels:
                self.ctx.jobs += 1
                found.append(self._fetch(names, rows))
            found = concat(found)
            if found is not None:
                codes = join_codes(names)
                old = with_join_codes(consolidate_arrow(found), names).select(codes + [WEIGHT])
                at = with_join_codes(rows.select(names), names).append_column("__i", pa.array(np.arange(rows.num_rows)))
                joined = at.select(codes + ["__i"]).join(old, keys=codes, join_type="inner", use_threads=False)
                np.add.at(total, flat(joined["__i"]).to_numpy(), flat(joined[WEIGHT]).to_numpy())
        return total

    # ---- the Spark levels ------------------------------------------------------------
    def _level(self, df, rows: int | None = None):
        """Hash-partition by key (about LEVEL_PARTITION_ROWS rows a partition), cut
        lineage, and keep it in Spark's block store (memory, spilling to disk)."""
        self.ctx.jobs += 1  # (counted before the action runs: see SparkRuntime.jobs)
        level, kept = make_level(self.ctx.spark, df, self.schema.names, self.key, rows)
        if kept is not None:
            self.ctx.jobs += 1  # (its Arrow batches: a second job)
            self._partitions[id(level)] = kept
        return level

    def _spill(self) -> None:
        """Move the driver parts into a new Spark level: in a background thread
        (`LevelSpill`) under the byte budget, when the session can run one, so the tick
        whose add went over the budget does not wait for an O(budget) shuffle and
        checkpoint; otherwise here. A trace runs one spill at a time: a second waits for
        the first to land (the driver holds at most the budget and one spill's parts)."""
        if self._spills_in_background():
            if self._spilling is not None:
                self._spilling.wait()
                self._adopt_spill()
            parts = [p for p in self._parts if p.rows]
            if parts and self._spilling is None:
                self._spilling = LevelSpill(self, parts)
            return
        table = consolidate_arrow(concat([p.table for p in self._parts]))
        self._set_parts([])
        if table.num_rows:
            df = self.ctx.local_df(table, self.schema, partitions=self._map_partitions(table.num_rows))
            self.levels.append((self._level(df, table.num_rows), table.num_rows))
        self._merge_levels()

    def _spills_in_background(self) -> bool:
        """Spills run in the background under the byte budget (a per-trace row count,
        `recent_max`, spills in the tick: tests and benches use it to hold state in Spark
        at once), on a classic session, when the runtime runs level jobs in the background."""
        return self.recent_max is None and self.background_merges and hasattr(self.ctx.spark, "_jsparkSession")

    def _adopt(self) -> None:
        """Put finished background jobs' levels in place (a spill's, then a merge's)."""
        self._adopt_spill()
        self._adopt_merge()

    def _adopt_spill(self) -> None:
        """Put a finished spill's level in place of the parts it moved, if they are all
        still here (a restore or a window's release may have replaced them: then the
        level is not needed); a failed spill leaves the parts where they are."""
        spill = self._spilling
        if spill is None or not spill.done():
            return
        self._spilling = None
        try:
            result = spill.result()
        except Exception:  # noqa: BLE001 - the parts still hold the rows: nothing is lost
            log.exception("event=level_spill_failed rows=%s", spill.rows)
            return
        gone = {id(p) for p in spill.parts}
        if result is None or not gone <= {id(p) for p in self._parts}:
            if result is not None:
                release_made(result[0], result[1])
            return
        level, kept, rows = result
        if kept is not None:
            self._partitions[id(level)] = kept
        self._set_parts([p for p in self._parts if id(p) not in gone])
        self.levels.append((level, rows))
        self._merge_levels()

    def _merge_levels(self) -> None:
        """Merge adjacent levels while the newer holds at least 1/ratio of the older's
        rows: in a background thread (`LevelMerge`) when the session can run one, so the
        tick that spilled does not wait for an O(state) merge; otherwise here."""
        while len(self.levels) >= 2 and self.levels[-1][1] * self.ratio >= self.levels[-2][1]:
            (older, n1), (newer, n2) = self.levels[-2], self.levels[-1]
            if self.background_merges and _classic(older):
                if self._merging is None:
                    self._merging = LevelMerge(self, older, n1, newer, n2)
                return  # (one merge at a time: the next is looked at when this one is adopted)
            self.ctx.jobs += 1
            merged, kept = merge_levels(self.ctx.spark, self.schema.names, self.key, older, n1, newer, n2, self._map_partitions)
            if kept is not None:
                self.ctx.jobs += 1
                self._partitions[id(merged)] = kept
            self._forget(older)
            self._forget(newer)
            self.levels[-2:] = [(merged, n1 + n2)]

    def _adopt_merge(self) -> None:
        """Put a finished background merge in place of the two levels it merged (they are
        released at the next add, like any level merged away), then look for the next."""
        merge = self._merging
        if merge is None or not merge.done():
            return
        self._merging = None
        try:
            merged, kept = merge.result()
        except Exception:  # noqa: BLE001 - the two levels still hold the rows: nothing is lost
            log.exception("event=level_merge_failed rows=%s", merge.rows)
            return
        at = [i for i, (df, _) in enumerate(self.levels) if df is merge.older or df is merge.newer]
        if len(at) != 2:  # (the levels changed under it: a restore) the merged level is not needed
            release_made(merged, kept)
            return
        if kept is not None:
            self._partitions[id(merged)] = kept
        self._forget(merge.older)
        self._forget(merge.newer)
        self.levels[at[0]] = (merged, merge.rows)
        del self.levels[at[1]]
        self._merge_levels()

    def _map_partitions(self, rows: int) -> int:
        """How many partitions a shuffle into a level reads from: one per
        MAP_PARTITION_ROWS rows, and at least one per core Spark runs tasks on. (A map
        partition per level partition, as the levels hold them, costs a block read per
        pair of partitions: quadratic, 10^6 reads for a 10^7-row merge.)"""
        sc = getattr(self.ctx.spark, "sparkContext", None) if hasattr(self.ctx.spark, "_jsparkSession") else None
        cores = sc.defaultParallelism if sc is not None else 1
        return max(cores, math.ceil(rows / MAP_PARTITION_ROWS))

    def _forget(self, level) -> None:
        """Retire a level: its blocks are released at this trace's next add (a tick may
        still read a DataFrame taken from the trace before this add: `df()` before an
        add, then the change's rows against it), never while a copy shares them."""
        _, batches = self._partitions.pop(id(level), (None, None))
        if not self.shared:
            self._retired.append((level, batches))

    def _release_retired(self) -> None:
        retired, self._retired = self._retired, []
        for level, batches in retired:
            release_level(level, batches)

    def release(self) -> None:
        """Drop every row and release the Spark levels (the runtime is closing). A merge
        still running is abandoned (its level released when it ends)."""
        merge, self._merging = self._merging, None
        spill, self._spilling = self._spilling, None
        if spill is not None:  # (its level, once it ends)
            spill.abandon()
        self._release_retired()
        for df, _ in self.levels:
            if merge is not None and (df is merge.older or df is merge.newer):
                continue
            release_level(df, self._partitions.get(id(df), (None, None))[1])
        if merge is not None:  # (its two levels, once it stops reading them)
            merge.abandon([(df, self._partitions.get(id(df), (None, None))[1]) for df in (merge.older, merge.newer)])
        self.levels, self._partitions = [], {}
        self._set_parts([])

    def df(self):
        """The integral as one DataFrame (None when empty)."""
        self._adopt()
        parts = [df for df, _ in self.levels]
        if self._parts:
            parts.append(self.ctx.local_df(self.recent, self.schema))
        return union_all(parts)

    # ---- lookups ---------------------------------------------------------------------
    def lookup(self, columns: list[str], keys: "list[tuple] | pa.Table") -> pa.Table | None:
        """The rows whose `columns` equal (NULL-safe) one of `keys` (tuples, or an Arrow
        table of distinct keys), consolidated, on the driver: each driver part probed by
        its index, the levels by one Spark job over the partitions holding the keys."""
        key_schema = pa.schema([self.ctx.arrow_schema(self.schema).field(c) for c in columns])
        if isinstance(keys, list):
            keys = pa.Table.from_arrays([pa.array([k[i] for k in keys], f.type) for i, f in enumerate(key_schema)], schema=key_schema)
        if keys.num_rows == 0:
            return None
        self._adopt()
        keys = keys.select(columns).cast(key_schema)
        found = [p.probe(keys, columns) for p in self._parts]
        if self.levels:
            self.ctx.jobs += 1
            found.append(self._fetch(columns, keys))
        found = concat(found)
        return consolidate_arrow(found) if found is not None else None

    def _fetch(self, columns: list[str], keys: pa.Table) -> pa.Table:
        """The levels' rows with these keys: one job over the partitions that hold them
        (when the lookup is by the key the levels are partitioned by), else a filter
        over every partition."""
        target = self.ctx.arrow_schema(self.schema)
        pruned = columns == self.key and keys.num_rows <= PREDICATE_MAX_KEYS
        selected = []  # (a level's Arrow batches RDD, its partitions to run)
        filtered = []  # the levels a filter job reads whole
        for df, _ in self.levels:
            n, batches = self._partitions.get(id(df), (None, None))
            pids = spark_partitions(keys, columns, n) if pruned and n else None
            if pids is None or (len(pids) * 2 > n and n > SHIP_WHOLE_LEVEL):  # most of a big level: filtered in Spark
                filtered.append(df)
            elif pids:
                selected.append((batches, sorted(pids)))
        found = []
        if filtered:
            if selected:
                self.ctx.jobs += 1  # (a second job: the caller counted one)
            kept = [self._partitions.get(id(df), (None, None))[1] for df in filtered]
            if keys.num_rows > PREDICATE_MAX_KEYS and all(b is not None for b in kept):
                # many keys: the levels' kept batches scanned on the executors (no shuffle of the levels)
                rows = {id(df): n for df, n in self.levels}
                found.append(scan_levels(self.ctx.spark, [(b, rows[id(df)]) for b, df in zip(kept, filtered)],
                                         keys, columns, target))
            else:
                fetched = _spark_filter(self.ctx, union_all(filtered), self.schema, columns, keys).toArrow()
                found.append(fetched.select(self.schema.names + [WEIGHT]).cast(target))
        if selected or not filtered:
            # whole partitions (LEVEL_PARTITION_ROWS rows each) come back; the keys' rows
            # are picked here, which costs less than planning a filter query per lookup
            fetched = run_on_partitions(self.ctx.spark, selected, target)
            column = _index_column(fetched, columns) or columns[0]
            picked = null_safe_semi_arrow(fetched, keys, [column])  # one column first (is_in), the rest on its matches
            found.append(null_safe_semi_arrow(picked, keys, columns) if len(columns) > 1 and picked.num_rows else picked)
        found = concat(found)
        return found if found is not None else target.empty_table()

    def snapshot_table(self) -> pa.Table | None:
        """All rows on the driver, consolidated (for snapshots and tests)."""
        df = self.df()
        if df is None:
            return None
        self.ctx.jobs += 1
        return consolidate_arrow(df.toArrow().cast(self.ctx.arrow_schema(self.schema)))


def make_level(spark, df, names: list[str], key: list[str], rows: int | None):
    """A level from `df`: hash-partitioned by `key` (about LEVEL_PARTITION_ROWS rows a
    partition), lineage cut, kept in Spark's block store (memory, spilling to disk);
    with, for a keyed level, its partitions as Arrow batches, converted once and kept
    (memory, then disk): a lookup ships stored Arrow bytes instead of converting a
    partition's rows each time (3x cheaper), from the level's first tick on. Returns
    (level, (partitions, batches) or None). Touches no trace: it runs in merge threads."""
    from pyspark import StorageLevel

    n = None
    if key:
        n = max(1, math.ceil((rows or LEVEL_PARTITION_ROWS) / LEVEL_PARTITION_ROWS))
        df = df.repartition(n, *key)
    level = df.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)
    if n is None or not _classic(level):  # (Spark Connect has no JVM handle: lookups filter every partition)
        return level, None
    batches = level.select(*names, WEIGHT)._jdf.toArrowBatchRdd().toJavaRDD()
    if batches.getNumPartitions() != n:
        return level, None
    batches.persist(spark.sparkContext._jvm.org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK())
    batches.count()
    return level, (n, batches)


def merge_levels(spark, names, key, older, n1: int, newer, n2: int, map_partitions):
    """Two levels as one (consolidated): (level, kept) as make_level."""
    # few map partitions: a shuffle reads one block per (map, reduce) partition pair
    union = older.coalesce(map_partitions(n1)).unionByName(newer.coalesce(map_partitions(n2)))
    if key:  # partition first: the consolidation's grouping keeps it (no second shuffle)
        union = union.repartition(max(1, math.ceil((n1 + n2) / LEVEL_PARTITION_ROWS)), *key)
    return make_level(spark, consolidate(union), names, key, n1 + n2)


class LevelJob:
    """A level built in a background thread, while ticks go on reading the rows it is
    built from (`LevelMerge`: two adjacent levels; `LevelSpill`: driver parts). The
    trace puts the new level in place of its sources at its next add or lookup after
    the job ends (`Trace._adopt_merge`, `Trace._adopt_spill`).

    Jobs of a kind run one at a time in a process (`_ONE_AT_A_TIME`), in the Spark scheduler
    pool MERGE_POOL: with FAIR scheduling (session.py) a tick's tasks take the next free
    core ahead of the job's, so a tick waits for at most one running task of it, not for
    the job (at 6.2·10^7 rows of distinct state, a spill and merge held one load tick
    for 122 s)."""

    _ONE_AT_A_TIME = threading.Lock()
    thread_name = "dbsp-level-job"

    def __init__(self, rows: int):
        self.rows = rows
        self._abandoned = None  # the levels to release when it ends (the trace closed)
        self._result = self._error = None
        self._done = threading.Event()
        self._handoff, self._finished = threading.Lock(), False

    def _start(self, work, spark, *args) -> None:
        """Run work(spark, *args) in the background; its result is (level, kept, ...)."""
        self._thread = threading.Thread(target=self._run, args=(work, spark, *args), name=self.thread_name, daemon=True)
        self._thread.start()

    def _run(self, work, spark, *args) -> None:
        try:
            with self._ONE_AT_A_TIME:
                if self._abandoned is not None:
                    return
                spark.sparkContext.setLocalProperty("spark.scheduler.pool", MERGE_POOL)
                self._result = work(spark, *args)
        except BaseException as e:  # noqa: BLE001 - handed to the trace (or dropped, when abandoned)
            self._error = e
        finally:
            with self._handoff:  # (abandoned before it ended: this thread releases; after: abandon does)
                self._finished = True
                abandoned = self._abandoned is not None
            if abandoned:
                try:
                    self._release()
                except Exception:  # noqa: BLE001 - the session is gone (the process is ending): nothing to free
                    log.debug("event=level_job_release_failed", exc_info=True)
            self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self) -> None:
        self._done.wait()

    def result(self):
        """(new level, kept) once the job has ended (None: no rows); raises what the job raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result

    def abandon(self, levels=()) -> None:
        """The trace is closing: release the new level and `levels` ([(level, its
        batches)]: the ones it reads) when the job ends (now, if it has)."""
        with self._handoff:
            self._abandoned = list(levels)
            finished = self._finished
        if finished:
            self._release()

    def _release(self) -> None:
        result, self._result = self._result, None
        if result is not None:
            release_made(result[0], result[1])
        for level, batches in self._abandoned or []:
            release_level(level, batches)


class LevelMerge(LevelJob):
    """Two adjacent levels merged in the background (their union is the same integral:
    ticks read both until the merged level takes their place; the two are released at
    the add after that, as any level merged away)."""

    thread_name = "dbsp-level-merge"

    def __init__(self, trace: "Trace", older, n1: int, newer, n2: int):
        super().__init__(n1 + n2)
        self.older, self.newer = older, newer
        self._start(merge_levels, trace.ctx.spark, trace.schema.names, trace.key, older, n1, newer, n2,
                    trace._map_partitions)


class LevelSpill(LevelJob):
    """Driver parts moved into a new Spark level in the background (the trace's state
    budget is over). Ticks go on probing the parts, which stay on the driver until the
    level takes their place (a spill of 2·10^7 rows takes about 34 s on 2 cores)."""

    thread_name = "dbsp-level-spill"
    #: spills run one at a time, but not behind a merge (a merge of 8·10^7 rows takes
    #: minutes, and a spill is what frees the driver's memory)
    _ONE_AT_A_TIME = threading.Lock()

    def __init__(self, trace: "Trace", parts: list):
        super().__init__(sum(p.rows for p in parts))
        self.parts = parts
        self._start(spill_level, trace.ctx.spark, trace.ctx, trace.schema, trace.key, [p.table for p in parts],
                    trace._map_partitions)


def spill_level(spark, ctx, schema: Schema, key: list[str], tables: list, map_partitions):
    """Driver tables as one new level: (level, kept, rows) as make_level, or None when
    they cancel out. Touches no trace: it runs in spill threads."""
    table = consolidate_arrow(concat(tables))
    if not table.num_rows:
        return None
    df = ctx.local_df(table, schema, partitions=map_partitions(table.num_rows))
    level, kept = make_level(spark, df, schema.names, key, table.num_rows)
    return level, kept, table.num_rows


def release_made(level, kept) -> None:
    """Release a level as make_level returned it (its kept (partitions, batches), or None)."""
    release_level(level, kept[1] if kept else None)


def release_level(df, batches=None) -> None:
    """Free a checkpointed level's blocks now (the checkpointed RDD's persistence, and
    its kept Arrow batches; the ContextCleaner would otherwise wait for a JVM GC)."""
    if batches is not None:
        batches.unpersist(False)
    try:
        df._jdf.queryExecution().logical().rdd().unpersist(False)
    except Exception:  # not a checkpoint (a plain cached DataFrame): unpersist is enough
        pass
    df.unpersist()


def level_is_held(df) -> bool:
    """Whether a level's blocks are still kept by Spark (for tests)."""
    return bool(df._jdf.queryExecution().logical().rdd().getStorageLevel().useMemory())


def run_on_partitions(spark, selected, target: pa.Schema) -> pa.Table:
    """One Spark job over only the given partitions of each level (`selected`: [(the
    level as an RDD of Arrow record batches, Dataset.toArrowBatchRdd; [partition ids])]),
    as Arrow. The union of the levels' RDDs numbers their partitions one level after
    the other."""
    from pyspark.serializers import NoOpSerializer
    from pyspark.util import _load_from_socket

    if not selected:
        return target.empty_table()
    sc = spark.sparkContext
    jvm = sc._jvm
    rdds, partitions, offset = [], [], 0
    for batches, pids in selected:
        rdds.append(batches)
        partitions += [offset + p for p in pids]
        offset += batches.getNumPartitions()
    rdd = rdds[0]
    if len(rdds) > 1:
        array = sc._gateway.new_array(jvm.org.apache.spark.api.java.JavaRDD, len(rdds))
        for i, r in enumerate(rdds):
            array[i] = r
        rdd = sc._jsc.union(array)
    sock = jvm.PythonRDD.runJob(sc._jsc.sc(), rdd, partitions)
    with _load_from_socket(sock, NoOpSerializer()) as stream:
        messages = list(stream)
    batches = [pa.ipc.read_record_batch(pa.py_buffer(m), target) for m in messages]
    return pa.Table.from_batches(batches, target) if batches else target.empty_table()


def _classic(df) -> bool:
    """A classic, JVM-backed DataFrame (Spark Connect's have no `_jdf` to run jobs on)."""
    from pyspark.sql.classic.dataframe import DataFrame as Classic

    return isinstance(df, Classic)


def _spark_filter(ctx, df, schema: Schema, columns: list[str], keys: pa.Table):
    from pyspark.sql import functions as F

    from ..functions import spark_lit

    if keys.num_rows > PREDICATE_MAX_KEYS:
        from .zsets import null_safe_semi

        keys_df = ctx.spark.createDataFrame(keys.select(columns), schema=ctx.spark_struct(schema, columns))
        return null_safe_semi(df, keys_df, columns, broadcast=False)
    if len(columns) == 1:
        c = F.col(columns[0])
        column = keys[columns[0]]
        values = [v for v in column.to_pylist() if v is not None]
        cond = c.isin([spark_lit(v) for v in values]) if values else F.lit(False)
        return df.where(cond | c.isNull() if column.null_count else cond)
    cond = None
    for k in zip(*(keys[c].to_pylist() for c in columns)):
        term = None
        for name, value in zip(columns, k):
            eq = F.col(name).isNull() if value is None else F.col(name) == spark_lit(value)
            term = eq if term is None else term & eq
        cond = term if cond is None else cond | term
    return df.where(cond)
