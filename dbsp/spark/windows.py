"""Δ executors for the windowed aggregates (dbsp/operators/window.py) on Spark.

Each tick: the change is checked against the waterline (the lateness rule), the
accepted part goes into the window's state, the waterline moves, and the state of
windows no accepted row can reach any more is dropped (and so released: Arrow rows
on the driver are filtered out; Spark levels are filtered into new checkpoints and
the old ones unpersisted).

- Tumbling and sliding windows: the accepted (row, window) pairs feed the aggregate's
  own Δ executor keyed by (group_by, window_start, window_end): per-window accumulators
  for count/sum/avg, I(in) by key otherwise. A window is dropped once its end <= W.
- Session windows: the accepted rows are kept by group key; a change recomputes the
  touched groups' sessions over their rows before and after (−old + new). Rows of
  sessions ending at or before W − gap are dropped.
Small changes (at most `driver_max_rows`, already on the driver) are admitted with the
operator's Python definition; larger ones with its Spark form (one job for the late
count and the maximum event time).
"""
from __future__ import annotations

from ..operators.window import END, ClosedWindows, SessionWindow, Window, to_units
from ..zset import ZSet
from .batch import Batch
from .incremental import LinearAggregateDelta, aggregate_executor
from .trace import Trace
from .zsets import WEIGHT, consolidate, negate, null_safe_semi, union_all

#: next_gc when the smallest window end in the state is unknown (after a Spark-path tick)
UNKNOWN = float("-inf")


class _Admission:
    """The lateness rule and the waterline, shared by both window executors."""

    def __init__(self, ctx, op: Window, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.waterline: int | None = None
        self.late = 0
        self.closed = ClosedWindows(op)

    def on_driver(self, d) -> bool:
        return d.rows is not None and d.rows <= self.ctx.driver_max_rows

    def output(self, out):
        """This tick's output change, counted by window end (see ClosedWindows)."""
        if out is not None:
            self.closed.output(out.table())
        return out

    def admit_on_driver(self, d) -> ZSet:
        self.ctx.took("row")
        accepted, late, self.waterline = self.op.admit(self.ctx.to_zset(d), self.waterline)
        self.late += late
        return accepted

    def admit_on_spark(self, d):
        """The accepted part as a lazy DataFrame; one job for the late count and max time."""
        from pyspark.sql import functions as F

        self.ctx.took("spark")
        change = consolidate(d.df())
        accepted, late = self.op.spark_admit(change, self.waterline)
        t = self.op.spark_units(self.op.time)
        self.ctx.jobs += 1  # (counted before an action runs: see SparkRuntime.jobs)
        row = change.agg(F.sum(late).alias("late"), F.max(F.when(F.col(WEIGHT) > 0, t)).alias("t")).collect()[0]
        self.late += int(row["late"] or 0)
        if row["t"] is not None:
            candidate = self.op.waterline_after(int(row["t"]))
            self.waterline = candidate if self.waterline is None else max(self.waterline, candidate)
        return accepted

    def event_time_progress(self):
        return self.closed.progress(self.waterline, self.late)


def _filter_trace(trace: Trace, arrow_keep, spark_keep, levels=None) -> None:
    """Drop rows from a trace: `arrow_keep(table)` is a mask over the driver part,
    `spark_keep` a Column over the levels (each re-checkpointed, the old one released).
    `levels`: the ids of the levels to filter (default: all)."""
    if trace.recent is not None:
        trace.recent = trace.recent.filter(arrow_keep(trace.recent))
        if trace.recent.num_rows == 0:
            trace.recent = None
    kept_levels = []
    for df, rows in trace.levels:
        if levels is not None and id(df) not in levels:
            kept_levels.append((df, rows))
            continue
        trace.ctx.jobs += 1  # (counted before the actions run: see SparkRuntime.jobs)
        kept = trace._level(df.where(spark_keep), rows)
        n = kept.count()
        trace._forget(df)  # (kept when a copy's levels are these too)
        if n:
            kept_levels.append((kept, n))
        else:
            trace._forget(kept)
    trace.levels = kept_levels


class WindowDelta(_Admission):
    """Tumbling and sliding windows: admission + the aggregate's Δ executor + GC."""

    def __init__(self, ctx, op, schema):
        super().__init__(ctx, op, schema)
        self.inner = aggregate_executor(ctx, op.inner, schema, distinct=False)
        self.next_gc: float | None = None  # no window in the state ends before this
        self._level_min: dict[int, int | None] = {}  # id(Spark level) -> its earliest window end (not snapshotted)

    def step(self, inputs):
        d = inputs["in"]
        if d is None:
            return None
        schema = self.op.assigned_schema
        if self.on_driver(d):
            accepted = self.admit_on_driver(d)
            if accepted:
                ends = min(to_units(row[-1], self.op.time_type) for row, _ in accepted)
                self.next_gc = ends if self.next_gc is None else min(self.next_gc, ends)
            batch = Batch.of_table(self.ctx, schema, self.ctx.to_table(accepted, schema))
        else:
            batch = Batch(self.ctx, schema, df=self.admit_on_spark(d))
            self.next_gc = UNKNOWN
        out = self.inner.step({"in": batch}) if batch is not None else None
        self.collect_garbage()
        return self.output(out)

    def collect_garbage(self) -> None:
        w = self.waterline
        if w is None or self.next_gc is None or self.next_gc > w:
            return
        time_type = self.op.time_type
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark.sql import functions as F

        units = (lambda c: c) if time_type == "bigint" else (lambda c: c.cast(pa.int64()))
        if isinstance(self.inner, LinearAggregateDelta):  # accumulators keyed by (group, window_end)
            self.inner.keep_groups(lambda t: pc.greater(units(t[END]), w))
            base = self.inner.base
            self.next_gc = pc.min(units(base[END])).as_py() if base is not None and base.num_rows else None
            return
        trace = self.inner.inputs
        ends = self.op.spark_units(END)
        for df, _ in trace.levels:  # each level's earliest window end, once per level
            if id(df) not in self._level_min:
                self.ctx.jobs += 1
                self._level_min[id(df)] = df.agg(F.min(ends)).collect()[0][0]
        due = {id(df) for df, _ in trace.levels if self._level_min[id(df)] is not None and self._level_min[id(df)] <= w}
        _filter_trace(trace, lambda t: pc.greater(units(t[END]), w), ends > F.lit(w), levels=due)
        live = {id(df) for df, _ in trace.levels}
        self._level_min = {k: v for k, v in self._level_min.items() if k in live}
        recent_min = pc.min(units(trace.recent[END])).as_py() if trace.recent is not None else None
        known = [v for v in (recent_min, *[self._level_min.get(id(df)) for df, _ in trace.levels]) if v is not None]
        unknown = any(id(df) not in self._level_min for df, _ in trace.levels)
        self.next_gc = UNKNOWN if unknown else min(known, default=None)

    def state_rows(self) -> int:
        return self.inner.state_rows()


class SessionDelta(_Admission):
    """Session windows: the touched groups' sessions recomputed (−old + new) over their
    accepted rows, kept by group key; closed sessions' rows dropped."""

    def __init__(self, ctx, op: SessionWindow, schema):
        super().__init__(ctx, op, schema)
        self.in_schema = op.input_schemas["in"]
        self.trace = Trace(ctx, self.in_schema, key=op.group_by)
        self.gc_at: int | None = None  # the waterline of the last collection

    def step(self, inputs):
        d = inputs["in"]
        if d is None:
            return None
        op, ctx = self.op, self.ctx
        if self.on_driver(d):
            accepted = self.admit_on_driver(d)
            out = None
            if accepted:
                table = ctx.to_table(accepted, self.in_schema)
                old = self._old_rows(table)
                self.trace.add(table)
                change = op.from_state(old + accepted) - op.from_state(old)
                out = Batch.of_table(ctx, self.schema, ctx.to_table(change, self.schema))
        else:
            accepted = Batch(ctx, self.in_schema, df=self.admit_on_spark(d)).materialize()
            out = self._on_spark(accepted) if accepted is not None else None
        self.collect_garbage()
        return self.output(out)

    def _old_rows(self, table) -> ZSet:
        group_by = self.op.group_by
        if group_by:
            keys = table.select(group_by).group_by(group_by, use_threads=False).aggregate([]).to_pylist()
            found = self.trace.lookup(group_by, [tuple(k[c] for c in group_by) for k in keys])
        else:
            found = self.trace.snapshot_table() if self.trace.levels else self.trace.recent
        return self.ctx.to_zset_table(found, self.in_schema) if found is not None else ZSet()

    def _on_spark(self, accepted):
        op = self.op
        before = self.trace.df()
        self.trace.add(accepted.table())
        after = self.trace.df()
        if op.group_by:
            keys = accepted.table().select(op.group_by).group_by(op.group_by, use_threads=False).aggregate([])
            keys_df = self.ctx.spark.createDataFrame(keys, schema=self.ctx.spark_struct(self.in_schema, op.group_by))
            before = null_safe_semi(before, keys_df, op.group_by) if before is not None else None
            after = null_safe_semi(after, keys_df, op.group_by) if after is not None else None  # None: all cancelled
        parts = [op.spark_from_state(after) if after is not None else None,
                 negate(op.spark_from_state(before)) if before is not None else None]
        parts = [p for p in parts if p is not None]
        return Batch(self.ctx, self.schema, df=union_all(parts)).materialize() if parts else None

    def collect_garbage(self) -> None:
        """Every time the waterline has moved by a gap: drop closed sessions' rows."""
        w, op = self.waterline, self.op
        if w is None or (self.gc_at is not None and w - self.gc_at < op.gap) or not self.trace.rows:
            return
        self.gc_at = w
        trace = self.trace
        if not trace.levels:
            rows = self.ctx.to_zset_table(trace.recent, self.in_schema)
            kept = rows - op.closed_rows(rows, w)
            trace.recent = self.ctx.to_table(kept, self.in_schema) if kept else None
            return
        from pyspark.sql import functions as F

        whole = consolidate(trace.df())
        t = op.spark_units(op.time)
        names = self.in_schema.names
        open_rows = op.spark_sessions(whole).where(op.spark_units(END) > F.lit(w - op.gap)).select(*names, WEIGHT)
        pending = whole.where((F.col(WEIGHT) <= 0) & (t + F.lit(op.gap) > F.lit(w)))
        self.ctx.jobs += 1  # (counted before the actions run: see SparkRuntime.jobs)
        level = trace._level(open_rows.unionByName(pending), trace.rows)
        n = level.count()
        for df, _ in trace.levels:
            trace._forget(df)
        trace.levels = [(level, n)] if n else []
        if trace.recent is not None:  # already folded into `whole`
            trace.recent = None
        if not n:
            trace._forget(level)

    def state_rows(self) -> int:
        return self.trace.rows


def window_executor(ctx, op, schema):
    return SessionDelta(ctx, op, schema) if isinstance(op, SessionWindow) else WindowDelta(ctx, op, schema)
