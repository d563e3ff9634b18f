"""join: inner equi-join on one or more key columns (no keys: the cartesian product).

Math: (a ⋈ b)(x ++ y) = a(x)·b(y) for rows whose keys are equal and not NULL (SQL).
Bilinear, so the incremental form is
    Δ(a ⋈ b) = Δa ⋈ I(b)_{t-1} + I(a)_{t-1} ⋈ Δb + Δa ⋈ Δb = Δa ⋈ I(b)_t + I(a)_{t-1} ⋈ Δb
State: the integral of each side (traces), probed with the (small, broadcast) deltas.
Params: `left_keys`, `right_keys`: lists of equal length ([] and [] = cartesian product).
Output columns: the left's, then the right's except right keys named like their left key.
"""
from __future__ import annotations

from collections import Counter

from ..limits import check_tick_rows
from ..types import Schema
from ..zset import ZSet
from .base import Operator


class Join(Operator):
    kind = "join"
    title = "Join (inner)"
    inputs = ("left", "right")
    linear = False
    empty_when = "any"

    def check(self, input_schemas):
        left, right = input_schemas["left"], input_schemas["right"]
        problems = []
        self.left_keys = self.columns_param("left_keys", left, problems, port="left", allow_empty=True)
        self.right_keys = self.columns_param("right_keys", right, problems, port="right", allow_empty=True)
        if problems:
            return problems
        if len(self.left_keys) != len(self.right_keys):
            return [self.problem(f"left_keys has {len(self.left_keys)} columns but right_keys has {len(self.right_keys)}", param="right_keys")]
        for lk, rk in zip(self.left_keys, self.right_keys):
            lt, rt = left.column(lk).type, right.column(rk).type
            if lt != rt and not {lt, rt} <= {"bigint", "double"}:
                problems.append(self.problem(f"key {lk!r} ({lt}) cannot equal {rk!r} ({rt})", param="right_keys"))
        dropped = {rk for lk, rk in zip(self.left_keys, self.right_keys) if lk == rk}
        self.right_kept = [c for c in right.columns if c.name not in dropped]
        for c in self.right_kept:
            if left.column(c.name) is not None:
                problems.append(self.problem(
                    f"column {c.name!r} is on both sides; rename it with a map before the join", port="right", param="right_keys"))
        if problems:
            return problems
        self.output_schema = Schema(left.columns + tuple(self.right_kept))
        self._lk = [left.names.index(k) for k in self.left_keys]
        self._rk = [right.names.index(k) for k in self.right_keys]
        self._rkeep = [right.names.index(c.name) for c in self.right_kept]
        return []

    def query(self, inputs):
        index: dict[tuple, list] = {}
        for row, w in inputs["right"]:
            key = tuple(row[i] for i in self._rk)
            if None not in key:
                index.setdefault(key, []).append((row, w))
        # the output's size from the keys' counts, before any of it is built
        left_keys = Counter(tuple(row[i] for i in self._lk) for row, _ in inputs["left"])
        check_tick_rows(self.node_id, self.kind, sum(n * len(index.get(key, ())) for key, n in left_keys.items()),
                        schema=self.output_schema)
        out = []
        for row, w in inputs["left"]:
            key = tuple(row[i] for i in self._lk)
            if None in key:
                continue
            for other, v in index.get(key, ()):
                out.append((row + tuple(other[i] for i in self._rkeep), w * v))
        return ZSet(out)

    def spark(self, ctx, inputs):
        return self.spark_join(inputs["left"], inputs["right"])

    def spark_join(self, left, right, broadcast: str | None = None):
        """left ⋈ right on Spark; `broadcast` names the side to broadcast ("left"/"right")."""
        from pyspark.sql import functions as F

        from ..frames import WEIGHT

        l, r = left.alias("l"), right.alias("r")
        if broadcast == "left":
            l = F.broadcast(l)
        elif broadcast == "right":
            r = F.broadcast(r)
        cols = [F.col(f"l.{c}").alias(c) for c in self.input_schemas["left"].names]
        cols += [F.col(f"r.{c.name}").alias(c.name) for c in self.right_kept]
        weight = (F.col(f"l.{WEIGHT}") * F.col(f"r.{WEIGHT}")).alias(WEIGHT)
        if not self.left_keys:
            return l.crossJoin(r).select(*cols, weight)
        cond = [F.col(f"l.{a}") == F.col(f"r.{b}") for a, b in zip(self.left_keys, self.right_keys)]
        return l.join(r, on=cond, how="inner").select(*cols, weight)

    def arrow_pairs(self, left, right) -> int:
        """The rows arrow_join(left, right) builds, from counts of each side's keys
        (a product: the sides' row counts multiplied); nothing of the output is built."""
        import pyarrow.compute as pc

        if left is None or right is None or left.num_rows == 0 or right.num_rows == 0:
            return 0
        if not self.left_keys:
            return left.num_rows * right.num_rows
        counts = left.select(self.left_keys).group_by(self.left_keys, use_threads=False).aggregate([([], "count_all")])
        r = right.select(self.right_keys).rename_columns([f"r__{k}" for k in self.right_keys])
        other = r.group_by(r.column_names, use_threads=False).aggregate([([], "count_all")]) \
            .rename_columns([f"r__{k}" for k in self.right_keys] + ["r__count"])
        met = counts.join(other, keys=self.left_keys, right_keys=[f"r__{k}" for k in self.right_keys],
                          join_type="inner", use_threads=False)
        if met.num_rows == 0:
            return 0
        return int(pc.sum(pc.multiply(met["count_all"], met["r__count"])).as_py())

    def spark_pairs(self, left, right) -> int:
        """The rows spark_join(left, right) builds, from counts of each side's keys
        (one Spark job; a product: two counts)."""
        from pyspark.sql import functions as F

        if not self.left_keys:
            return left.count() * right.count()
        lc = left.groupBy(*self.left_keys).agg(F.count(F.lit(1)).alias("__lc")).alias("l")
        rc = right.groupBy(*self.right_keys).agg(F.count(F.lit(1)).alias("__rc")).alias("r")
        cond = [F.col(f"l.{a}") == F.col(f"r.{b}") for a, b in zip(self.left_keys, self.right_keys)]
        total = lc.join(rc, on=cond, how="inner").select(F.sum(F.col("l.__lc") * F.col("r.__rc"))).first()[0]
        return int(total or 0)

    def arrow_join(self, left, right, out_schema):
        """left ⋈ right on Arrow tables (the driver's vectorized path): a C++ hash join;
        NULL keys never match, weights multiply."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if left is None or right is None or left.num_rows == 0 or right.num_rows == 0:
            return None
        r = right.rename_columns([f"r__{n}" for n in right.column_names])
        if self.left_keys:
            joined = left.join(r, keys=self.left_keys, right_keys=[f"r__{k}" for k in self.right_keys],
                               join_type="inner", coalesce_keys=False, use_threads=False)
        else:  # cartesian product
            import numpy as np

            li = pa.array(np.repeat(np.arange(left.num_rows, dtype=np.int64), right.num_rows))
            ri = pa.array(np.tile(np.arange(right.num_rows, dtype=np.int64), left.num_rows))
            joined = pa.table({**{c: left[c].take(li) for c in left.column_names}, **{c: r[c].take(ri) for c in r.column_names}})
        columns = {c: joined[c] for c in self.input_schemas["left"].names}
        columns |= {c.name: joined[f"r__{c.name}"] for c in self.right_kept}
        columns["__w"] = pc.multiply(joined["__w"], joined["r____w"])
        return pa.table(columns).cast(out_schema)

    def describe_state(self):
        return ["I(left), indexed by the left keys", "I(right), indexed by the right keys"]
