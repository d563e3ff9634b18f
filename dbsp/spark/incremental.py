"""Per-node executors on Spark: the incremental (Δ) forms of stateful operators, the
stream primitives, and the plain lift of everything else.

Every executor's `step(inputs)` takes this tick's input values (Batch, or None for an
empty change) and returns this tick's output (Batch or None). Stateful executors
materialize their output on the driver (one Spark job each) so lineage never grows.

Small changes stay on the driver: a linear operator whose inputs are all driver-side
and fewer than `ctx.vector_min_rows` rows is applied with its Python form (the same
semantics, checked equal by the tests); up to `ctx.arrow_max_rows`, with its Arrow form
when it has one (and its Python form up to `ctx.driver_max_rows` when not) — Spark's optimizer does the same for
projections over local relations; only the collect would have cost a job. Aggregates
fetch just the touched groups' rows from their Spark state (one broadcast semi-join)
and compute old and new rows on the driver. Large changes take the all-Spark path.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


from ..aggregates import LINEAR
from ..limits import check_tick_rows, tick_max_rows
from ..operators.base import Operator
from ..zset import ZSet
from .accumulate import LinearAggregateDelta
from .asof import AsofJoinDelta
from .batch import Batch
from .distinct_aggregate import DistinctAggregateDelta
from .trace import Trace, flat
from .zsets import WEIGHT, consolidate_arrow, negate, null_safe_semi, union_all


class Lifted:
    """op applied to this tick's values (linear ops on deltas; anything in literal mode)."""

    def __init__(self, ctx, op: Operator, schema):
        self.ctx, self.op, self.schema = ctx, op, schema

    def step(self, inputs):
        present = [v for v in inputs.values() if v is not None]
        if (self.op.empty_when == "all" and not present) or (self.op.empty_when == "any" and len(present) < len(inputs)):
            return None
        if self.op.kind in ("input", "output"):  # identities: pass the change through as it is
            return inputs["in"]
        if self.op.kind == "union" and len(present) == 1 and present[0].rows is not None:
            return Batch.of_table(self.ctx, self.schema, present[0].table())  # a + 0 = a (same columns, consolidated)
        ctx = self.ctx
        on_driver = all(v.rows is not None for v in present)
        rows = sum(v.rows for v in present) if on_driver else None
        if on_driver and min(ctx.vector_min_rows, ctx.driver_max_rows + 1) <= rows and (rows <= ctx.arrow_max_rows or ctx.arrow_max_rows > 0):
            # vectorised on the driver, when the operator has that form: up to
            # arrow_max_rows, and beyond when the change is on the driver already (a
            # large join's output): through Spark it would only be copied out and back
            # (arrow_max_rows = 0 switches Arrow off)
            tables = {p: (v.table() if v is not None else ctx.empty_table(self.op.input_schemas[p])) for p, v in inputs.items()}
            out = self.op.arrow(tables, ctx.arrow_schema(self.schema))
            if out is not None:
                ctx.took("arrow")
                return Batch.of_table(ctx, self.schema, consolidate_arrow(out))
        if on_driver and rows <= ctx.driver_max_rows:
            zsets = {p: (ctx.to_zset(v) if v is not None else ZSet()) for p, v in inputs.items()}
            ctx.took("row")
            return Batch.of_table(ctx, self.schema, ctx.to_table(self.op.query(zsets), self.schema))
        frames = {p: (v.df() if v is not None else self.ctx.empty(self.op.input_schemas[p])) for p, v in inputs.items()}
        ctx.took("spark")
        df = self.op.spark(self.ctx, frames)
        if self.op.kind == "flat_map":  # the one linear operator that makes more rows than it takes: count them first
            ctx.jobs += 1
            check_tick_rows(self.op.node_id, self.op.kind, df.count(), schema=self.schema)
        return Batch(self.ctx, self.schema, df=df)

    def state_rows(self) -> int:
        return 0


_LOOKUPS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dbsp-lookup")


class JoinDelta:
    """Δ(a ⋈ b) = Δa ⋈ (I(b)_{t-1} + Δb) + I(a)_{t-1} ⋈ Δb; state: I(a), I(b).

    Small changes: each side's trace is asked only for the rows whose key the other
    side's change carries (one filter job per side, none while the trace is all on the
    driver) and the three products are formed on the driver. Large: all on Spark.
    """

    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.left = Trace(ctx, op.input_schemas["left"], key=op.left_keys)
        self.right = Trace(ctx, op.input_schemas["right"], key=op.right_keys)

    def step(self, inputs):
        da, db = inputs["left"], inputs["right"]
        rows = sum(v.table().num_rows for v in (da, db) if v is not None)
        if rows <= self.ctx.driver_max_rows and rows < self.ctx.vector_min_rows:
            self.ctx.took("row")
            out = self._on_driver(da, db)
        elif rows <= self.ctx.arrow_max_rows:
            self.ctx.took("arrow")
            out = self._with_arrow(da, db)
        else:
            self.ctx.took("spark")
            out = self._on_spark(da, db)
        if da is not None:
            self.left.add(da.table())
        if db is not None:
            self.right.add(db.table())
        return out

    def _keys(self, batch, columns, named) -> pa.Table:
        """The change's distinct join keys without NULLs (an inner join never matches a
        NULL key), its columns named as the other side's (`named`)."""
        keys = batch.table().select(columns)
        valid = None
        for c in columns:
            valid = pc.is_valid(keys[c]) if valid is None else pc.and_(valid, pc.is_valid(keys[c]))
        return keys.filter(valid).group_by(columns, use_threads=False).aggregate([]).select(columns).rename_columns(named)

    def _old_state(self, da, db):
        """The state rows each side's change meets: I(b)_{t-1} for Δa and I(a)_{t-1} for Δb.
        The two lookups are independent Spark jobs, so they run concurrently."""
        op = self.op

        def old_b():
            if da is None:
                return None
            return self.right.lookup(op.right_keys, self._keys(da, op.left_keys, op.right_keys)) if op.right_keys else self._all(self.right)

        def old_a():
            if db is None:
                return None
            return self.left.lookup(op.left_keys, self._keys(db, op.right_keys, op.left_keys)) if op.left_keys else self._all(self.left)

        if da is not None and db is not None and (self.left.levels or self.right.levels):
            future = _LOOKUPS.submit(old_a)
            return old_b(), future.result()
        return old_b(), old_a()

    def _check_size(self, da, db, old_b, old_a) -> None:
        """Fail the tick before the products are formed when they would pass its row
        limit: Δa ⋈ old_b + Δa ⋈ Δb + old_a ⋈ Δb, counted from the keys on each side."""
        op = self.op
        ta = da.table() if da is not None else None
        tb = db.table() if db is not None else None
        limit = tick_max_rows(self.schema)  # the row limit, or fewer rows when they are wide
        na, nb, nob, noa = (t.num_rows if t is not None else 0 for t in (ta, tb, old_b, old_a))
        if limit is None or na * (nob + nb) + noa * nb <= limit:  # cannot pass it: no key counts
            return
        check_tick_rows(op.node_id, op.kind, op.arrow_pairs(ta, old_b) + op.arrow_pairs(ta, tb) + op.arrow_pairs(old_a, tb),
                        schema=self.schema)

    def _on_driver(self, da, db):
        ctx, op = self.ctx, self.op
        left_schema, right_schema = op.input_schemas["left"], op.input_schemas["right"]
        old_b, old_a = self._old_state(da, db)
        self._check_size(da, db, old_b, old_a)
        fetched = sum(t.num_rows for t in (old_a, old_b) if t is not None)
        if fetched >= ctx.vector_min_rows:  # a small change meeting many state rows: Arrow's hash join
            return self._arrow_products(da, db, old_b, old_a)
        za, zb = ctx.to_zset(da), ctx.to_zset(db)
        out = ZSet()
        if da is not None:
            out = out + op.query({"left": za, "right": (ctx.to_zset_table(old_b, right_schema) if old_b is not None else ZSet()) + zb})
        if db is not None and old_a is not None:
            out = out + op.query({"left": ctx.to_zset_table(old_a, left_schema), "right": zb})
        return Batch.of_table(ctx, self.schema, ctx.to_table(out, self.schema))

    def _all(self, trace):
        """The whole integral of one side (a cartesian product meets every row): the
        driver part as it is, no Spark job while nothing spilled; one collect when some
        of it lives in Spark levels."""
        if not trace.levels:
            return trace.recent
        self.ctx.jobs += 1
        return trace.snapshot_table()

    def _with_arrow(self, da, db):
        """A larger change: the matching state rows are fetched (one semi-join job per
        side) and the three products formed by Arrow's hash join on the driver."""
        old_b, old_a = self._old_state(da, db)
        self._check_size(da, db, old_b, old_a)
        return self._arrow_products(da, db, old_b, old_a)

    def _arrow_products(self, da, db, old_b, old_a):
        """Δa ⋈ (old_b + Δb) + old_a ⋈ Δb with Arrow's hash join, on the driver."""
        from .zsets import concat, consolidate_arrow

        op, ctx = self.op, self.ctx
        out_schema = ctx.arrow_schema(self.schema)
        parts = []
        ta = da.table() if da is not None else None
        tb = db.table() if db is not None else None
        if ta is not None:
            parts.append(op.arrow_join(ta, concat([old_b, tb]), out_schema))
        if tb is not None:
            parts.append(op.arrow_join(old_a, tb, out_schema))
        joined = concat(parts)
        if joined is None:
            return None
        # One product of two consolidated tables is consolidated already (each output
        # row is one pair of input rows), unless equal-by-join float keys (0.0, -0.0)
        # merge rows that differ only in the right key
        single = (ta is None or tb is None) and not any(c.type == "double" for c in op.input_schemas["left"].columns if c.name in op.left_keys)
        return Batch.of_table(ctx, self.schema, joined if single else consolidate_arrow(joined))

    def _may_pass_limit(self, da, db) -> bool:
        """Whether the products could pass the tick's row limit, from the sizes known
        without a job (|Δa|·(|b|+|Δb|) + |a|·|Δb|, upper bounds): only then are the keys
        counted exactly (a Spark job per product)."""
        limit = tick_max_rows(self.schema)
        if limit is None:
            return False
        na, nb = (x.rows if x is not None else 0 for x in (da, db))
        if na is None or nb is None:
            return True
        return na * (self.right.rows + nb) + self.left.rows * nb > limit

    def _on_spark(self, da, db):
        parts, pairs = [], 0
        count = self._may_pass_limit(da, db)
        if da is not None:
            right_now = union_all([self.right.df(), db.df() if db is not None else None])
            if right_now is not None:
                if count:
                    self.ctx.jobs += 1  # (the key counts' action: counted before it runs, see SparkRuntime.jobs)
                    pairs += self.op.spark_pairs(da.df(), right_now)
                parts.append(self.op.spark_join(da.df(), right_now, broadcast="left"))
        if db is not None:
            left_before = self.left.df()
            if left_before is not None:
                if count:
                    self.ctx.jobs += 1
                    pairs += self.op.spark_pairs(left_before, db.df())
                parts.append(self.op.spark_join(left_before, db.df(), broadcast="right"))
        if parts:
            check_tick_rows(self.op.node_id, self.op.kind, pairs, schema=self.schema)
        return Batch(self.ctx, self.schema, df=union_all(parts)).materialize() if parts else None

    def state_rows(self) -> int:
        return self.left.rows + self.right.rows


class DistinctDelta:
    """Δout = H(I(Δin)_{t-1}, Δin); state: I(Δin). The old weights of the changed rows
    come from one lookup; H is applied on the driver."""

    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.trace = Trace(ctx, schema, key=schema.names)

    def step(self, inputs):
        d = inputs["in"]
        if d is None:
            return None
        delta = d.table()
        names = self.schema.names
        if delta.num_rows >= self.ctx.vector_min_rows and delta.num_rows <= self.ctx.arrow_max_rows:
            out, part = self._with_arrow(delta)
            self.trace.add(part)
            return Batch.of_table(self.ctx, self.schema, out)
        if delta.num_rows <= self.ctx.driver_max_rows:
            self.ctx.took("row")
            keys = [tuple(r[n] for n in names) for r in delta.to_pylist()]
            found = self.trace.lookup(names, keys)
            old = dict(self.ctx.to_zset_table(found, self.schema)) if found is not None else {}
        elif delta.num_rows <= self.ctx.arrow_max_rows:
            out, part = self._with_arrow(delta)
            self.trace.add(part)
            return Batch.of_table(self.ctx, self.schema, out)
        else:
            self.ctx.took("spark")
            old = self._old_on_spark(d)
        out = []
        for row, dw in self.ctx.to_zset_table(delta, self.schema):
            w0 = old.get(row, 0)
            if w0 <= 0 < w0 + dw:
                out.append((row, 1))
            elif w0 > 0 >= w0 + dw:
                out.append((row, -1))
        self.trace.add(delta)
        return Batch.of_table(self.ctx, self.schema, self.ctx.to_table(ZSet(out), self.schema)) if out else None

    def _with_arrow(self, delta: pa.Table):
        """H over whole columns (a bulk change): the changed rows' old weights come from
        the trace (each driver part matched by its index; one job for the Spark levels);
        a row appears where its weight crosses zero. Returns the output and the change as
        a driver part (sorted for those matches once: the trace keeps it as it is)."""
        self.ctx.took("arrow")
        names, target = self.schema.names, self.ctx.arrow_schema(self.schema)
        part = self.trace.part_of(delta)  # (a consolidated change: distinct rows)
        rows = part.table
        w0 = self.trace.weights(rows)
        w1 = w0 + flat(rows[WEIGHT]).to_numpy(zero_copy_only=False)
        weight = np.where((w0 <= 0) & (w1 > 0), 1, np.where((w0 > 0) & (w1 <= 0), -1, 0)).astype(np.int64)
        changed = weight != 0
        out = pa.Table.from_arrays([rows[n] for n in names] + [pa.array(weight)], names=names + [WEIGHT])
        return out.filter(pa.array(changed)).cast(target), part

    def _old_on_spark(self, d) -> dict:
        from pyspark.sql import functions as F

        state = self.trace.df()
        if state is None:
            return {}
        names = self.schema.names
        touched = null_safe_semi(state, d.df(), names).groupBy(*names).agg(F.sum(WEIGHT).alias(WEIGHT))
        self.ctx.jobs += 1
        return dict(self.ctx.to_zset_table(touched.toArrow().cast(self.ctx.arrow_schema(self.schema)), self.schema))

    def state_rows(self) -> int:
        return self.trace.rows


class AggregateDelta:
    """For each group touched by Δin: -(k, old) + (k, new). State: I(Δin) by key.
    Serves every per-group recompute: min/max aggregates (with any other function beside
    them; distinct ones over doubles or lists), top_k and window aggregates.

    Global aggregates of only count/sum/avg keep O(1) accumulators on the driver.
    Otherwise the touched groups' rows are fetched from the state (one broadcast
    semi-join) and old/new rows are computed on the driver with the operator's own
    definition; a change touching more than `driver_max_rows` rows aggregates on Spark.
    """

    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.inputs = Trace(ctx, op.input_schemas["in"], key=op.group_by)
        self.accumulate = op.is_global and op.kind == "aggregate" and all(fn in LINEAR for fn, *_ in op.aggs)
        self.sums = ZSet()  # the global accumulators: I(Δin) folded into one weighted summary
        self.last_global: ZSet | None = None
        self.started = False

    def step(self, inputs):
        d = inputs["in"]
        first, self.started = not self.started, True
        if d is None and not (first and self.op.is_global):
            return None
        delta = d.table() if d is not None else None
        if self.op.is_global:
            return self._global(d, delta)
        if delta.num_rows > self.ctx.driver_max_rows:
            self.ctx.took("spark")
            before = self.inputs.df()
            self.inputs.add(delta)
            return self._on_spark(d, before)
        group_by = self.op.group_by
        keys = delta.select(group_by).group_by(group_by, use_threads=False).aggregate([]).select(group_by)
        # (group_by is never empty here: global recomputes go through _global)
        fetched = self.inputs.lookup(group_by, keys)  # from I(Δin)_{t-1}
        self.inputs.add(delta)
        if delta.num_rows >= self.ctx.vector_min_rows and (out := self._with_arrow(fetched, delta)) is not None:
            self.ctx.took("arrow")
            return Batch.of_table(self.ctx, self.schema, out)
        self.ctx.took("row")
        old_rows = self.ctx.to_zset_table(fetched, self.op.input_schemas["in"]) if fetched is not None else ZSet()
        change = self.ctx.to_zset(d)
        out = self.op.query({"in": old_rows + change}) - self.op.query({"in": old_rows})
        return Batch.of_table(self.ctx, self.schema, self.ctx.to_table(out, self.schema))

    def _with_arrow(self, fetched, delta):
        """The touched groups' old and new rows computed column-wise (Aggregate.arrow_groups),
        Δout = new - old consolidated; None when the operator has no such form."""
        arrow_groups = getattr(self.op, "arrow_groups", None)
        if arrow_groups is None:
            return None
        target = self.ctx.arrow_schema(self.schema)
        old = fetched.select(delta.column_names).cast(delta.schema) if fetched is not None else delta.slice(0, 0)
        new_rows = arrow_groups(consolidate_arrow(pa.concat_tables([old, delta])), target)
        old_rows = arrow_groups(consolidate_arrow(old), target) if old.num_rows else target.empty_table()
        if new_rows is None or old_rows is None:
            return None
        retracted = old_rows.set_column(old_rows.schema.get_field_index(WEIGHT), WEIGHT, pc.negate(old_rows[WEIGHT]))
        return consolidate_arrow(pa.concat_tables([new_rows, retracted.cast(new_rows.schema)]))

    def _touched_keys(self, delta):
        keys = delta.select(self.op.group_by).group_by(self.op.group_by, use_threads=False).aggregate([])
        return self.ctx.spark.createDataFrame(keys, schema=self.ctx.spark_struct(self.op.input_schemas["in"], self.op.group_by))

    def _global(self, d, delta):
        if self.accumulate:
            # count/sum/avg are linear: fold the change into per-row summaries on the driver.
            self.ctx.took("row")
            if d is not None:
                self.sums = self.sums + self.ctx.to_zset(d)
                self.inputs.add(delta)
            new = self.op.query({"in": self.sums})
        else:
            self.inputs.add(delta)
            state = self.inputs.df()
            if state is None:
                self.ctx.took("row")
                new = self.op.query({"in": ZSet()})
            elif self.inputs.rows <= self.ctx.driver_max_rows:
                self.ctx.took("row")
                self.ctx.jobs += 1
                new = self.op.query({"in": self.ctx.to_zset_table(state.toArrow(), self.op.input_schemas["in"])})
            else:
                self.ctx.took("spark")
                new = self.ctx.to_zset(Batch(self.ctx, self.schema, df=self.op.spark_recompute(state)))
        out = new - (self.last_global or ZSet())
        self.last_global = new
        return Batch.of_table(self.ctx, self.schema, self.ctx.to_table(out, self.schema))

    def _on_spark(self, d, before):
        """A large change: old and new rows of the touched groups, aggregated by Spark."""
        keys_df = self._touched_keys(d.table())
        after = self.inputs.df()  # None when the change cancelled the whole state
        parts = [self.op.spark_recompute(null_safe_semi(after, keys_df, self.op.group_by))] if after is not None else []
        if before is not None:
            parts.append(negate(self.op.spark_recompute(null_safe_semi(before, keys_df, self.op.group_by))))
        return Batch(self.ctx, self.schema, df=union_all(parts)).materialize() if parts else None

    def state_rows(self) -> int:
        return self.inputs.rows


class IntegrateState:
    """I: out[t] = Σ_{i<=t} in[i], kept as a trace."""

    def __init__(self, ctx, op, schema):
        self.ctx, self.schema = ctx, schema
        self.trace = Trace(ctx, schema)

    def step(self, inputs):
        if inputs["in"] is not None:
            self.trace.add(inputs["in"].table())
        df = self.trace.df()
        if df is not None:
            self.ctx.took("spark")
        return None if df is None else Batch(self.ctx, self.schema, df=df)

    def state_rows(self) -> int:
        return self.trace.rows


class DifferentiateState:
    """D: out[t] = in[t] - in[t-1]; state: the previous input, on the driver."""

    def __init__(self, ctx, op, schema):
        self.ctx, self.schema = ctx, schema
        self.previous: Batch | None = None

    def step(self, inputs):
        now = inputs["in"].materialize() if inputs["in"] is not None else None
        if now is not None or self.previous is not None:
            self.ctx.took("spark")
        parts = [now.df() if now is not None else None, negate(self.previous.df()) if self.previous is not None else None]
        self.previous = now
        df = union_all(parts)
        return None if df is None else Batch(self.ctx, self.schema, df=df).materialize()

    def state_rows(self) -> int:
        return self.previous.rows if self.previous is not None else 0


class DelayState:
    """z^-1: emits the previous tick's input at the start of a tick."""

    def __init__(self, ctx, op, schema):
        self.previous: Batch | None = None

    def emit(self):
        return self.previous

    def absorb(self, value) -> None:
        self.previous = value.materialize() if value is not None else None

    def state_rows(self) -> int:
        return self.previous.rows or 0 if self.previous is not None else 0


class Composite:
    """An operator run as its rewrite into other operators, each in its own Δ form
    (semijoin, antijoin, left_join: see dbsp/operators/semijoin.py)."""

    def __init__(self, ctx, op, schema):
        self.steps = []
        for name, inner, sources in op.rewrite():
            make = INCREMENTAL.get(inner.kind, Lifted)
            self.steps.append((name, make(ctx, inner, inner.output_schema), sources))

    def step(self, inputs):
        values = dict(inputs)
        for name, executor, sources in self.steps:
            values[name] = executor.step({port: values[src] for port, src in sources.items()})
        return values[self.steps[-1][0]]

    def state_rows(self) -> int:
        return sum(executor.state_rows() for _, executor, _ in self.steps)


def aggregate_executor(ctx, op, schema, distinct: bool = True):
    """`distinct`: whether the distinct aggregates may take their incremental form (windows
    keep the recomputing one: their garbage collection drops I(in)'s closed windows)."""
    if LinearAggregateDelta.applies(op):
        return LinearAggregateDelta(ctx, op, schema)
    if distinct and DistinctAggregateDelta.applies(op):
        return DistinctAggregateDelta(ctx, op, schema, DistinctDelta)
    return AggregateDelta(ctx, op, schema)


INCREMENTAL = {
    "join": JoinDelta,
    "distinct": DistinctDelta,
    "aggregate": aggregate_executor,
    "semijoin": Composite,
    "antijoin": Composite,
    "left_join": Composite,
    "asof_join": AsofJoinDelta,
    "top_k": AggregateDelta,
    "window_aggregate": AggregateDelta,
}
PRIMITIVES = {"integrate": IntegrateState, "differentiate": DifferentiateState, "delay": DelayState}
