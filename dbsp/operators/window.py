"""Windowed aggregates over an event-time column: tumbling, sliding and session windows,
with an allowed lateness.

Each is a group-by aggregate whose grouping key includes a window [start, end) computed
from the event time `time` (a timestamp or bigint column). Output rows:
(group_by..., window_start, window_end, aggregates...), the aggregates as in
`aggregate` (count, sum, avg, min, max, count_distinct).

- tumbling(size):        one window per row, start = floor(t / size)·size, end = start + size.
- sliding(size, slide):  every window [s, s + size) with s a multiple of `slide` and
                         s <= t < s + size (ceil(size / slide) windows at most).
- session(gap):          per group, the rows present (weight > 0) sorted by t form
                         sessions: maximal runs where consecutive times differ by less
                         than `gap`; a session's window is [first t, last t + gap).
Windows are aligned to the epoch (1970-01-01T00:00:00) or to 0 for a bigint column. A
row whose event time is NULL belongs to no window. Durations (`size`, `slide`, `gap`,
`lateness`) are integers for a bigint column and strings such as "10 seconds",
"5 minutes", "1 hour", "2 days", "500 milliseconds" (or "30s", "5m", "1h", "2d",
"500ms") for a timestamp column.

Lateness, per node and per run (the stream's history matters, so the reference
evaluator keeps this state too). Let W be the waterline at the start of a tick
(undefined, -inf, before the first row with an event time):
- the tick's change (consolidated) is checked against W: a row's contribution to a
  window whose end is <= W is dropped. For tumbling and sliding windows that is per
  (row, window); a session row is dropped when t + gap <= W. A row that contributes
  to no window at all is late: Σ|weight| of late rows adds to `late_rows`;
- then W := max(W, max t over this tick's rows with weight > 0 − lateness): the
  waterline only moves forward, and rows of one tick never make each other late;
- the output is the windowed aggregate of every accepted contribution so far;
- state of windows that can receive no more accepted rows is dropped: tumbling and
  sliding windows with end <= W; sessions with end <= W − gap (an accepted row has
  t > W − gap, so it can neither fall in nor merge with such a session). Dropping
  state never changes an output: the closed windows' rows stay in the view.
Per tick the node reports frontier["waterline"], frontier["windows_closed"] (the windows
of its output the waterline closed this tick: end <= W, for sessions end <= W − gap),
stats["late_rows"] (the total) and stats["late_rows_tick"] (this tick's).
Incremental form: tumbling and sliding windows are a linear assignment (one row per
window) followed by the aggregate's Δ form keyed by (group_by, window); sessions
recompute the touched groups' open sessions (−old + new). In a literal circuit (one
with DBSP primitives) a window is applied to each whole value, without lateness.
Params: `time`, `group_by` (may be empty), `aggregates`, `lateness` (default 0), and
`size` (tumbling, sliding), `slide` (sliding), `gap` (session).
"""
from __future__ import annotations

import datetime as dt
import math
import re
from abc import abstractmethod
from typing import ClassVar

from ..types import Column, Schema
from ..zset import ZSet
from .aggregate import Aggregate
from .base import Operator

START, END = "window_start", "window_end"
EPOCH = dt.datetime(1970, 1, 1)
_UNITS = {
    "ms": 1_000, "millisecond": 1_000, "milliseconds": 1_000,
    "s": 1_000_000, "sec": 1_000_000, "second": 1_000_000, "seconds": 1_000_000,
    "m": 60_000_000, "min": 60_000_000, "minute": 60_000_000, "minutes": 60_000_000,
    "h": 3_600_000_000, "hour": 3_600_000_000, "hours": 3_600_000_000,
    "d": 86_400_000_000, "day": 86_400_000_000, "days": 86_400_000_000,
}
_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]+)\s*$")


def parse_duration(value, time_type: str) -> int:
    """A duration in the time column's units (microseconds for timestamps)."""
    if time_type == "bigint":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be an integer for a bigint time column, got {value!r}")
        return value
    if value == 0 and not isinstance(value, bool):
        return 0
    m = _DURATION.match(value) if isinstance(value, str) else None
    if not m or m.group(2) not in _UNITS:
        raise ValueError(f"must be a duration like '10 seconds', '5 minutes', '1 hour' or '30s', got {value!r}")
    return int(m.group(1)) * _UNITS[m.group(2)]


#: The longest duration a parameter may give, in the time column's units: the span of
#: representable timestamps (year 1 to 9999), or of a bigint.
MAX_DURATION = {"timestamp": (dt.datetime.max - dt.datetime.min) // dt.timedelta(microseconds=1),
                "bigint": 2**63 - 1}
#: The lowest waterline: below every representable event time.
MIN_UNITS = {"timestamp": (dt.datetime.min - EPOCH) // dt.timedelta(microseconds=1), "bigint": -(2**63)}


def to_units(value, time_type: str):
    """An event-time value -> an integer (microseconds since the epoch for timestamps)."""
    if value is None or time_type == "bigint":
        return value
    return (value - EPOCH) // dt.timedelta(microseconds=1)


def from_units(n, time_type: str):
    if n is None or time_type == "bigint":
        return n
    return EPOCH + dt.timedelta(microseconds=n)


class Window(Operator):
    """The three windowed aggregates; subclasses say how rows get their windows."""

    category = "windows"
    linear = False
    window_type: ClassVar[str]
    durations: ClassVar[tuple[str, ...]]

    def check(self, input_schemas):
        schema = input_schemas["in"]
        problems = []
        time = self.params.get("time")
        col = schema.column(time) if isinstance(time, str) else None
        if col is None or col.type not in ("timestamp", "bigint"):
            found = f"; {time!r} is {col.type}" if col is not None else ""
            problems.append(self.problem(
                f"parameter 'time' must name a timestamp or bigint column (columns: {', '.join(schema.names)}){found}", param="time"))
            return problems
        self.time, self.time_type = time, col.type
        for name in (START, END):
            if schema.column(name) is not None:
                problems.append(self.problem(f"the input already has a column {name!r}; rename it with a map first", port="in"))
        self.group_by = self.columns_param("group_by", schema, problems, allow_empty=True)
        values = {}
        for param in self.durations + ("lateness",):
            raw = self.params.get(param, 0 if param == "lateness" else None)
            try:
                values[param] = parse_duration(raw, col.type)
            except ValueError as e:
                problems.append(self.problem(f"parameter {param!r} {e}", param=param))
                continue
            if values[param] < 0 or (values[param] == 0 and param != "lateness"):
                problems.append(self.problem(f"parameter {param!r} must be {'>= 0' if param == 'lateness' else 'positive'}", param=param))
            elif values[param] > MAX_DURATION[col.type]:
                most = ("3652058 days (the span of timestamps)" if col.type == "timestamp"
                        else f"{MAX_DURATION['bigint']} (the largest bigint)")
                problems.append(self.problem(f"parameter {param!r} is too long: at most {most}", param=param))
        if problems:
            return problems
        self.lateness = values["lateness"]
        problems = self.check_durations(values)
        if problems:
            return problems
        window_type = "bigint" if col.type == "bigint" else "timestamp"
        self.assigned_schema = Schema(schema.columns + (Column(START, window_type, False), Column(END, window_type, False)))
        self.inner = Aggregate(self.node_id, {"group_by": self.group_by + [START, END], "aggregates": self.params.get("aggregates")})
        self.inner.shown_as = self.kind  # its runtime errors name this window
        problems = self.inner.validate({"in": self.assigned_schema})
        if problems:
            return problems
        self.output_schema = self.inner.output_schema
        self._t = schema.names.index(time)
        self._keys = [schema.names.index(g) for g in self.group_by]
        return []

    def check_durations(self, values) -> list:
        return []

    # ---- the definition, on Python Z-sets (the reference and the driver path) ----------
    def units(self, row):
        return to_units(row[self._t], self.time_type)

    def window_row(self, row, start: int, end: int) -> tuple:
        return row + (from_units(start, self.time_type), from_units(end, self.time_type))

    @abstractmethod
    def admit(self, change: ZSet, waterline: int | None) -> tuple[ZSet, int, int | None]:
        """The lateness rule on one tick's change: (the accepted part, in the form the
        state keeps; Σ|w| of late rows; the new waterline)."""

    @abstractmethod
    def from_state(self, accepted: ZSet) -> ZSet:
        """The windowed aggregate of everything accepted so far."""

    @abstractmethod
    def spark_admit(self, df, waterline: int | None):
        """The lateness rule on Spark: (the accepted part as a DataFrame, a Column giving
        each input row's late weight, to be summed)."""

    @abstractmethod
    def spark_from_state(self, accepted):
        """The windowed aggregate on Spark."""

    def advance(self, change: ZSet, waterline: int | None) -> int | None:
        times = [self.units(r) for r, w in change if w > 0 and r[self._t] is not None]
        if not times:
            return waterline
        candidate = self.waterline_after(max(times))
        return candidate if waterline is None else max(waterline, candidate)

    def waterline_after(self, latest: int) -> int:
        """The waterline a row at time `latest` moves it to (a lateness reaching before
        the first representable time: nothing is late yet)."""
        return max(latest - self.lateness, MIN_UNITS["bigint" if self.time_type == "bigint" else "timestamp"])

    def query(self, inputs):
        accepted, _, _ = self.admit(inputs["in"], None)
        return self.from_state(accepted)

    def describe_state(self):
        return ["the waterline and the late-row count", *self.state_description()]

    def state_description(self) -> list[str]:
        return []

    def reference_state(self, literal: bool):
        """The reference evaluator's executor: lateness needs the stream's history."""
        return WindowReference(self, literal)

    def closed_by(self, waterline: int) -> int:
        """Windows ending at or before this (in units) take no more rows at `waterline`."""
        return waterline

    # ---- Spark ------------------------------------------------------------------------
    def spark_units(self, column):
        from pyspark.sql import functions as F

        c = F.col(column)
        return c if self.time_type == "bigint" else F.unix_micros(c.cast("timestamp"))

    def spark_time(self, units):
        from pyspark.sql import functions as F

        return units if self.time_type == "bigint" else F.timestamp_micros(units).cast("timestamp_ntz")

    def spark(self, ctx, inputs):
        accepted, _ = self.spark_admit(inputs["in"], None)
        return self.spark_from_state(accepted)


class _Assigned(Window):
    """Tumbling and sliding windows: a row-wise (linear) assignment of windows."""

    @abstractmethod
    def windows_of(self, t: int) -> list[tuple[int, int]]:
        """The windows (start, end) of event time t, in time units."""

    def admit(self, change, waterline):
        out, late = [], 0
        for row, w in change:
            t = self.units(row)
            if t is None:
                continue
            kept = [(s, e) for s, e in self.windows_of(t) if waterline is None or e > waterline]
            if not kept:
                late += abs(w)
            out.extend((self.window_row(row, s, e), w) for s, e in kept)
        return ZSet(out), late, self.advance(change, waterline)

    def from_state(self, accepted):
        return self.inner.query({"in": accepted})

    @abstractmethod
    def spark_starts(self, df):
        """`df` (with `__t`, the time in units) with `__s`: a candidate window start per
        row (several rows per input row for sliding windows)."""

    @abstractmethod
    def spark_last_end(self, t):
        """The end of the last window of time t (a row is late when it is <= W)."""

    def spark_admit(self, df, waterline):
        from pyspark.sql import functions as F

        from ..frames import WEIGHT

        t = self.spark_units(self.time)
        names = self.input_schemas["in"].names
        end = F.col("__s") + F.lit(self.size)
        assigned = self.spark_starts(df.where(t.isNotNull()).withColumn("__t", t)).where(end > F.col("__t"))
        if waterline is not None:
            assigned = assigned.where(end > F.lit(waterline))
        assigned = assigned.select(*names, self.spark_time(F.col("__s")).alias(START), self.spark_time(end).alias(END), WEIGHT)
        if waterline is None:
            return assigned, F.lit(0)
        late = F.when(t.isNotNull() & (self.spark_last_end(t) <= F.lit(waterline)), F.abs(F.col(WEIGHT))).otherwise(0)
        return assigned, late

    def spark_from_state(self, accepted):
        return self.inner.spark_aggregate(accepted)

    def state_description(self):
        return ["per (group, window) accumulators (or the rows, for min/max/count_distinct), dropped once the window ends at or before the waterline"]


class TumblingWindow(_Assigned):
    kind = "tumbling_window"
    title = "Tumbling window"
    window_type = "tumbling"
    durations = ("size",)

    def check_durations(self, values):
        self.size = values["size"]
        return []

    def windows_of(self, t):
        start = t - t % self.size
        return [(start, start + self.size)]

    def spark_starts(self, df):
        from pyspark.sql import functions as F

        return df.withColumn("__s", F.col("__t") - F.pmod(F.col("__t"), F.lit(self.size)))

    def spark_last_end(self, t):
        from pyspark.sql import functions as F

        return t - F.pmod(t, F.lit(self.size)) + F.lit(self.size)


class SlidingWindow(_Assigned):
    kind = "sliding_window"
    title = "Sliding window"
    window_type = "sliding"
    durations = ("size", "slide")

    def check_durations(self, values):
        self.size, self.slide = values["size"], values["slide"]
        if self.slide > self.size:
            return [self.problem("parameter 'slide' must not exceed 'size' (rows between windows would be lost)", param="slide")]
        if math.ceil(self.size / self.slide) > 1000:
            return [self.problem("size / slide must be at most 1000 windows per row", param="slide")]
        self.count = math.ceil(self.size / self.slide)
        return []

    def windows_of(self, t):
        last = t - t % self.slide
        starts = (last - k * self.slide for k in range(self.count))
        return [(s, s + self.size) for s in starts if s + self.size > t][::-1]

    def spark_starts(self, df):
        from pyspark.sql import functions as F

        last = F.col("__t") - F.pmod(F.col("__t"), F.lit(self.slide))
        k = df.withColumn("__k", F.explode(F.array(*[F.lit(i) for i in range(self.count)])))
        return k.withColumn("__s", last - F.col("__k") * F.lit(self.slide))

    def spark_last_end(self, t):
        from pyspark.sql import functions as F

        return t - F.pmod(t, F.lit(self.slide)) + F.lit(self.size)


class SessionWindow(Window):
    kind = "session_window"
    title = "Session window"
    window_type = "session"
    durations = ("gap",)

    def check_durations(self, values):
        self.gap = values["gap"]
        return []

    def admit(self, change, waterline):
        out, late = [], 0
        for row, w in change:
            t = self.units(row)
            if t is None:
                continue
            if waterline is not None and t + self.gap <= waterline:
                late += abs(w)
            else:
                out.append((row, w))
        return ZSet(out), late, self.advance(change, waterline)

    def sessions(self, rows: ZSet) -> ZSet:
        """The rows present (w > 0) with their session windows."""
        groups: dict[tuple, list] = {}
        for row, w in rows:
            if w > 0 and row[self._t] is not None:
                groups.setdefault(tuple(row[i] for i in self._keys), []).append((self.units(row), row, w))
        out = []
        for items in groups.values():
            items.sort(key=lambda x: x[0])
            run: list = []
            for item in items + [None]:
                if run and (item is None or item[0] - run[-1][0] >= self.gap):
                    start, end = run[0][0], run[-1][0] + self.gap
                    out.extend((self.window_row(row, start, end), w) for _, row, w in run)
                    run = []
                if item is not None:
                    run.append(item)
        return ZSet(out)

    def from_state(self, accepted):
        return self.inner.query({"in": self.sessions(accepted)})

    def closed_by(self, waterline):
        return waterline - self.gap

    def closed_rows(self, rows: ZSet, waterline: int) -> ZSet:
        """The rows no accepted change can reach any more (dropped from the state):
        those of sessions ending at or before waterline − gap, and rows not present
        (w <= 0) whose own time is as late as a late row's."""
        closed = []
        sessions = self.sessions(rows)
        n = len(self.input_schemas["in"].names)
        for row, w in sessions:
            if to_units(row[n + 1], self.time_type) <= waterline - self.gap:
                closed.append((row[:n], w))
        closed += [(row, w) for row, w in rows if (w <= 0 or row[self._t] is None)
                   and (row[self._t] is None or self.units(row) + self.gap <= waterline)]
        return ZSet(closed)

    def spark_admit(self, df, waterline):
        from pyspark.sql import functions as F

        from ..frames import WEIGHT

        t = self.spark_units(self.time)
        accepted = df.where(t.isNotNull())
        if waterline is None:
            return accepted, F.lit(0)
        accepted = accepted.where(t + F.lit(self.gap) > F.lit(waterline))
        late = F.when(t.isNotNull() & (t + F.lit(self.gap) <= F.lit(waterline)), F.abs(F.col(WEIGHT))).otherwise(0)
        return accepted, late

    def spark_sessions(self, df):
        """Rows present with their session windows, by window functions over each group."""
        from pyspark.sql import Window as W
        from pyspark.sql import functions as F

        from ..frames import WEIGHT, consolidate

        t = self.spark_units(self.time)
        present = consolidate(df).where((F.col(WEIGHT) > 0) & F.col(self.time).isNotNull()).withColumn("__t", t)
        groups = [F.col(g) for g in self.group_by] or [F.lit(0)]  # (one partition for a global session)
        order = W.partitionBy(*groups).orderBy("__t")
        gap_before = F.col("__t") - F.lag("__t").over(order)
        starts = present.withColumn("__new", F.when(gap_before.isNull() | (gap_before >= F.lit(self.gap)), 1).otherwise(0))
        sid = starts.withColumn("__sid", F.sum("__new").over(order.rowsBetween(W.unboundedPreceding, W.currentRow)))
        session = W.partitionBy(*groups, F.col("__sid"))
        bounded = sid.withColumn("__s", F.min("__t").over(session)).withColumn("__e", F.max("__t").over(session) + F.lit(self.gap))
        names = self.input_schemas["in"].names
        return bounded.select(*names, self.spark_time(F.col("__s")).alias(START), self.spark_time(F.col("__e")).alias(END), WEIGHT)

    def spark_from_state(self, accepted):
        return self.inner.spark_aggregate(self.spark_sessions(accepted))

    def state_description(self):
        return ["the accepted rows by group key (I(in)), dropped once their session ends at or before waterline − gap"]


class WindowReference:
    """The reference evaluator's executor for a window: keeps the previous whole input,
    the accepted contributions (never garbage-collected) and the waterline; the output
    is the windowed aggregate recomputed over everything accepted, every tick."""

    def __init__(self, op: Window, literal: bool):
        self.op, self.literal = op, literal
        self.previous, self.accepted = ZSet(), ZSet()
        self.waterline: int | None = None
        self.late = 0
        self.before: int | None = None  # the waterline when this tick started
        self.late_before = 0
        self.value = ZSet()  # the output: every window's row

    def step(self, inputs):
        value = inputs["in"] if inputs["in"] is not None else ZSet()
        self.before, self.late_before = self.waterline, self.late
        if self.literal:
            return self.op.query({"in": value})
        change, self.previous = value - self.previous, value
        accepted, late, self.waterline = self.op.admit(change, self.waterline)
        self.accepted = self.accepted + accepted
        self.late += late
        self.value = self.op.from_state(self.accepted)
        return self.value

    def event_time_progress(self):
        closed = 0
        if self.waterline is not None:  # the windows whose end the waterline passed this tick
            end = self.op.output_schema.names.index(END)
            low = self.op.closed_by(self.before) if self.before is not None else None
            high = self.op.closed_by(self.waterline)
            for row, w in self.value:
                t = to_units(row[end], self.op.time_type)
                if w > 0 and t <= high and (low is None or t > low):
                    closed += 1
        frontier, stats = window_progress(self.op, self.waterline, self.late)
        frontier["windows_closed"] = closed
        stats["late_rows_tick"] = self.late - self.late_before
        return frontier, stats


def window_progress(op: Window, waterline, late: int) -> tuple[dict, dict]:
    from ..types import to_json_value

    return {"waterline": to_json_value(from_units(waterline, op.time_type))}, {"late_rows": late}


class ClosedWindows:
    """The windows a node's output holds, counted by their end (one output row per
    window; fed each tick's output change), so that each tick can say how many the
    waterline closed. A closed window's row never changes again, so it leaves the count."""

    def __init__(self, op: Window):
        self.op = op
        self.open: dict[int, int] = {}  # window end (units) -> windows
        self.late_before = 0

    def output(self, table) -> None:
        """Count a change's rows (an Arrow table with the weight column `__w`) by end."""
        if table is None or table.num_rows == 0:
            return
        from ..frames import WEIGHT

        ends = table.group_by(END, use_threads=False).aggregate([(WEIGHT, "sum")])
        for end, w in zip(ends[END].to_pylist(), ends[f"{WEIGHT}_sum"].to_pylist()):
            t = to_units(end, self.op.time_type)
            self.open[t] = self.open.get(t, 0) + w

    def progress(self, waterline, late: int) -> tuple[dict, dict]:
        closed = 0
        if waterline is not None and self.open:
            bound = self.op.closed_by(waterline)
            for end in [e for e in self.open if e <= bound]:
                closed += self.open.pop(end)
        frontier, stats = window_progress(self.op, waterline, late)
        frontier["windows_closed"] = closed
        stats["late_rows_tick"], self.late_before = late - self.late_before, late
        return frontier, stats
