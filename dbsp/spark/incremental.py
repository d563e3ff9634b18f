"""Per-node executors on Spark: the incremental (Δ) forms of stateful operators, the
stream primitives, and the plain lift of everything else.

Every executor's `step(inputs)` takes this tick's input values (Batch, or None for an
empty change) and returns this tick's output (Batch or None). Stateful executors
materialize their output on the driver (one Spark job each) so lineage never grows.
"""
from __future__ import annotations

import pyarrow as pa

from ..operators.base import Operator
from .batch import Batch
from .trace import Trace
from .zsets import WEIGHT, negate, null_safe_semi, union_all


class Lifted:
    """op applied to this tick's values (linear ops on deltas; anything in literal mode)."""

    def __init__(self, ctx, op: Operator, schema):
        self.ctx, self.op, self.schema = ctx, op, schema

    def step(self, inputs):
        present = [v for v in inputs.values() if v is not None]
        if (self.op.empty_when == "all" and not present) or (self.op.empty_when == "any" and len(present) < len(inputs)):
            return None
        frames = {p: (v.df() if v is not None else self.ctx.empty(self.op.input_schemas[p])) for p, v in inputs.items()}
        return Batch(self.ctx, self.schema, df=self.op.spark(self.ctx, frames))

    def state_rows(self) -> int:
        return 0


class JoinDelta:
    """Δ(a ⋈ b) = Δa ⋈ (I(b)_{t-1} + Δb) + I(a)_{t-1} ⋈ Δb; state: I(a), I(b)."""

    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.left = Trace(ctx, op.input_schemas["left"])
        self.right = Trace(ctx, op.input_schemas["right"])

    def step(self, inputs):
        da, db = inputs["left"], inputs["right"]
        parts = []
        if da is not None:
            right_now = union_all([self.right.df(), db.df() if db is not None else None])
            if right_now is not None:
                parts.append(self.op.spark_join(da.df(), right_now, broadcast="left"))
        if db is not None:
            left_before = self.left.df()
            if left_before is not None:
                parts.append(self.op.spark_join(left_before, db.df(), broadcast="right"))
        out = Batch(self.ctx, self.schema, df=union_all(parts)).materialize() if parts else None
        if da is not None:
            self.left.add(da.table())
        if db is not None:
            self.right.add(db.table())
        return out

    def state_rows(self) -> int:
        return self.left.rows + self.right.rows


class DistinctDelta:
    """Δout = H(I(Δin)_{t-1}, Δin); state: I(Δin)."""

    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.trace = Trace(ctx, schema)

    def step(self, inputs):
        d = inputs["in"]
        if d is None:
            return None
        delta = d.table()
        old: dict[tuple, int] = {}
        state = self.trace.df()
        if state is not None and delta.num_rows:
            from pyspark.sql import functions as F

            names = self.schema.names
            touched = null_safe_semi(state, d.df(), names).groupBy(*names).agg(F.sum(WEIGHT).alias(WEIGHT))
            self.ctx.jobs += 1
            for r in touched.toArrow().to_pylist():
                old[tuple(r[n] for n in names)] = r[WEIGHT]
        rows = delta.to_pylist()
        names = self.schema.names
        out = []
        for r in rows:
            key = tuple(r[n] for n in names)
            w0, w1 = old.get(key, 0), old.get(key, 0) + r[WEIGHT]
            if w0 <= 0 < w1:
                out.append({**r, WEIGHT: 1})
            elif w0 > 0 >= w1:
                out.append({**r, WEIGHT: -1})
        self.trace.add(delta)
        if not out:
            return None
        return Batch.of_table(self.ctx, self.schema, pa.Table.from_pylist(out, schema=self.ctx.arrow_schema(self.schema)))

    def state_rows(self) -> int:
        return self.trace.rows


class AggregateDelta:
    """For each group touched by Δin: -(k, old) + (k, new). State: I(Δin) by key, I(Δout)."""

    def __init__(self, ctx, op, schema):
        self.ctx, self.op, self.schema = ctx, op, schema
        self.inputs = Trace(ctx, op.input_schemas["in"])
        self.outputs = Trace(ctx, schema)
        self.started = False

    def step(self, inputs):
        d = inputs["in"]
        first, self.started = not self.started, True
        if d is None and not (first and self.op.is_global):
            return None
        if d is not None:
            self.inputs.add(d.table())
        state = self.inputs.df()
        if state is None:
            state = self.ctx.empty(self.op.input_schemas["in"])
        old = self.outputs.df()
        if self.op.is_global:
            new = self.op.spark_aggregate(state)
        else:
            keys = d.table().select(self.op.group_by).group_by(self.op.group_by, use_threads=False).aggregate([])
            keys_df = self.ctx.spark.createDataFrame(keys, schema=self.ctx.spark_struct(self.op.input_schemas["in"], self.op.group_by))
            new = self.op.spark_aggregate(null_safe_semi(state, keys_df, self.op.group_by))
            old = null_safe_semi(old, keys_df, self.op.group_by) if old is not None else None
        delta = new if old is None else new.unionByName(negate(old))
        out = Batch(self.ctx, self.schema, df=delta).materialize()
        if out is not None:
            self.outputs.add(out.table())
        return out

    def state_rows(self) -> int:
        return self.inputs.rows + self.outputs.rows


class IntegrateState:
    """I: out[t] = Σ_{i<=t} in[i], kept as a trace."""

    def __init__(self, ctx, op, schema):
        self.ctx, self.schema = ctx, schema
        self.trace = Trace(ctx, schema)

    def step(self, inputs):
        if inputs["in"] is not None:
            self.trace.add(inputs["in"].table())
        df = self.trace.df()
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


INCREMENTAL = {"join": JoinDelta, "distinct": DistinctDelta, "aggregate": AggregateDelta}
PRIMITIVES = {"integrate": IntegrateState, "differentiate": DifferentiateState, "delay": DelayState}
