"""asof_join: each left row with the one right row of its key nearest in time, SQL's
`FROM a [LEFT] ASOF JOIN b MATCH_CONDITION (a.t >= b.t) ON a.k = b.k` (Feldera's and
Snowflake's spelling; DuckDB's `a ASOF [LEFT] JOIN b ON a.k = b.k AND a.t >= b.t`).

Math. Let R be the right side's present rows (weight > 0; a row counts once whatever
its weight), and for a left row x with key k = x[left_keys] and time t = x[left_time]
let the candidates be the rows y of R with y[right_keys] = k and y[right_time] ⋈ t,
where `match` ⋈ says how the left time compares to the right one:
    ">=": y.time <= t, the nearest is the greatest;   ">": y.time <  t, the greatest;
    "<=": y.time >= t, the nearest is the least;       "<": y.time >  t, the least.
NULL keys and NULL times never match (SQL's comparison). Among candidates with the
nearest time, the greatest row by its columns in order (NULLs smallest) wins: a total
order, so the answer is certain (Feldera's asof join picks the greatest too).
    asof(a, b)(x ++ m(x)) += a(x)        for every left row x (any weight),
with m(x) that row's columns except right keys named like their left key; an x without
a candidate is dropped (inner) or kept with NULLs for them (`outer`, LEFT ASOF JOIN).

So asof is linear in a for a fixed b, and a change of b changes the matches of the left
rows of b's changed keys only. The incremental form (dbsp/spark/asof.py):
    Δout = asof(Δa, b_t) + Σ_{k in keys(Δb)} [asof(a_{t-1}|k, b_t) - asof(a_{t-1}|k, b_{t-1})]
where a|k are a's rows with key k. State: I(a) and I(b), indexed by their keys.
Params: `left_keys`, `right_keys` (non-empty, of equal length), `left_time`,
`right_time` (columns of comparable types), `match` (">=", ">", "<=", "<"; default
">="), `outer` (bool; default true: LEFT). Output columns: the left's, then the right's
except right keys named like their left key (as join); every right column nullable when
`outer`.
"""
from __future__ import annotations

import bisect
import functools

from ..types import Column, Schema, element_type
from ..zset import ZSet
from .base import Operator
from .top_k import compare_rows

MATCHES = (">=", ">", "<=", "<")
TIME_TYPES = ("bigint", "double", "timestamp", "date", "string")


class AsofJoin(Operator):
    kind = "asof_join"
    title = "As-of join (ASOF JOIN)"
    inputs = ("left", "right")
    linear = False

    @property
    def empty_when(self) -> str:  # an inner one is empty when either side is; a LEFT one only without a left
        return "all" if getattr(self, "outer", True) else "any"

    def check(self, input_schemas):
        left, right = input_schemas["left"], input_schemas["right"]
        problems = []
        self.left_keys = self.columns_param("left_keys", left, problems, port="left")
        self.right_keys = self.columns_param("right_keys", right, problems, port="right")
        self.left_time = self._time("left_time", left, "left", problems)
        self.right_time = self._time("right_time", right, "right", problems)
        self.match = self.params.get("match", ">=")
        if self.match not in MATCHES:
            problems.append(self.problem(f"match must be one of {', '.join(MATCHES)} (left time against right time), "
                                         f"got {self.match!r}", param="match"))
        self.outer = self.params.get("outer", True)
        if not isinstance(self.outer, bool):
            problems.append(self.problem("outer must be true (LEFT ASOF JOIN) or false", param="outer"))
        if problems:
            return problems
        if len(self.left_keys) != len(self.right_keys):
            return [self.problem(f"left_keys has {len(self.left_keys)} columns but right_keys has {len(self.right_keys)}",
                                 param="right_keys")]
        for lk, rk in zip(self.left_keys, self.right_keys):
            lt, rt = left.column(lk).type, right.column(rk).type
            if lt != rt and not {lt, rt} <= {"bigint", "double"}:
                problems.append(self.problem(f"key {lk!r} ({lt}) cannot equal {rk!r} ({rt})", param="right_keys"))
        lt, rt = left.column(self.left_time).type, right.column(self.right_time).type
        if lt != rt and not {lt, rt} <= {"bigint", "double"}:
            problems.append(self.problem(f"time {self.left_time!r} ({lt}) cannot be compared with {self.right_time!r} ({rt})",
                                         param="right_time"))
        dropped = {rk for lk, rk in zip(self.left_keys, self.right_keys) if lk == rk}
        kept = [c for c in right.columns if c.name not in dropped]
        for c in kept:
            if left.column(c.name) is not None:
                problems.append(self.problem(
                    f"column {c.name!r} is on both sides; rename it with a map before the join", port="right", param="right_keys"))
        if problems:
            return problems
        self.right_kept = [Column(c.name, c.type, True) if self.outer else c for c in kept]
        self.output_schema = Schema(left.columns + tuple(self.right_kept))
        self._lk = [left.names.index(k) for k in self.left_keys]
        self._rk = [right.names.index(k) for k in self.right_keys]
        self._lt, self._rt = left.names.index(self.left_time), right.names.index(self.right_time)
        self._rkeep = [right.names.index(c.name) for c in kept]
        # the tie-break: the right's columns, greatest first (DESC puts NULLs last)
        self._ties = [(i, True) for i in range(len(right.columns))]
        self._lists = {i for i, c in enumerate(right.columns) if element_type(c.type) is not None}
        return []

    def _time(self, param, schema, port, problems) -> str:
        name = self.params.get(param)
        if not isinstance(name, str) or schema.column(name) is None:
            problems.append(self.problem(f"parameter {param!r} must name a column of port {port!r} "
                                         f"(columns: {', '.join(schema.names)})", param=param, port=port))
            return ""
        if schema.column(name).type not in TIME_TYPES:
            problems.append(self.problem(f"{param}: column {name!r} is {schema.column(name).type}; an as-of join "
                                         f"compares {', '.join(TIME_TYPES)}", param=param, port=port))
        return name

    @property
    def latest(self) -> bool:
        """Whether the nearest candidate is the greatest time (>=, >) or the least (<=, <)."""
        return self.match in (">=", ">")

    # ---- the reference ---------------------------------------------------------------
    def index(self, right: ZSet) -> dict[tuple, tuple[list, list]]:
        """key -> (its distinct times ascending, the winning row at each time)."""
        by_key: dict[tuple, dict] = {}
        better = functools.cmp_to_key(lambda p, q: compare_rows(self._ties, self._lists, p, q))
        for row, w in right:
            if w <= 0:
                continue
            key, t = tuple(row[i] for i in self._rk), row[self._rt]
            if None in key or t is None:
                continue
            at = by_key.setdefault(key, {})
            if t not in at or better(row) < better(at[t]):  # (DESC order: "less" is the greater row)
                at[t] = row
        out = {}
        for key, at in by_key.items():
            times = sorted(at)
            out[key] = (times, [at[t] for t in times])
        return out

    def nearest(self, index, row) -> tuple | None:
        """The right row matched with the left `row`, or None."""
        key, t = tuple(row[i] for i in self._lk), row[self._lt]
        if None in key or t is None or key not in index:
            return None
        times, rows = index[key]
        if self.match == ">=":
            i = bisect.bisect_right(times, t) - 1
        elif self.match == ">":
            i = bisect.bisect_left(times, t) - 1
        elif self.match == "<=":
            i = bisect.bisect_left(times, t)
        else:
            i = bisect.bisect_right(times, t)
        return rows[i] if 0 <= i < len(rows) else None

    def query(self, inputs):
        index = self.index(inputs["right"])
        nulls = (None,) * len(self._rkeep)
        out = []
        for row, w in inputs["left"]:
            other = self.nearest(index, row)
            if other is not None:
                out.append((row + tuple(other[i] for i in self._rkeep), w))
            elif self.outer:
                out.append((row + nulls, w))
        return ZSet(out)

    # ---- Spark -------------------------------------------------------------------------
    def spark(self, ctx, inputs):
        return self.spark_asof(inputs["left"], inputs["right"])

    def spark_asof(self, left, right):
        """The same on DataFrames: the left rows (consolidated, so each is one partition)
        joined with the right's present rows of their key on the time condition (a left
        outer join for LEFT), the nearest ranked first in each left row's window."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        from ..frames import WEIGHT, consolidate

        lnames = self.input_schemas["left"].names
        rnames = self.input_schemas["right"].names
        l = consolidate(left).alias("l")
        r = consolidate(right).where(F.col(WEIGHT) > 0).select(*[F.col(c).alias(f"__r_{c}") for c in rnames]).alias("r")
        lt, rt = F.col(f"l.{self.left_time}"), F.col(f"r.__r_{self.right_time}")
        cond = [F.col(f"l.{a}") == F.col(f"r.__r_{b}") for a, b in zip(self.left_keys, self.right_keys)]
        cond.append({">=": lt >= rt, ">": lt > rt, "<=": lt <= rt, "<": lt < rt}[self.match])
        joined = l.join(r, on=cond, how="left" if self.outer else "inner")
        nearest = rt.desc_nulls_last() if self.latest else rt.asc_nulls_last()
        window = Window.partitionBy(*[F.col(f"l.{c}") for c in lnames], F.col(f"l.{WEIGHT}")).orderBy(
            nearest, *[F.col(f"r.__r_{c}").desc_nulls_last() for c in rnames])
        ranked = joined.withColumn("__rank", F.row_number().over(window)).where(F.col("__rank") == 1)
        cols = [F.col(f"l.{c}").alias(c) for c in lnames]
        cols += [F.col(f"r.__r_{rnames[i]}").alias(c.name) for i, c in zip(self._rkeep, self.right_kept)]
        return ranked.select(*cols, F.col(f"l.{WEIGHT}").alias(WEIGHT))

    def describe_state(self):
        return ["I(left), indexed by the left keys (the rows a right change re-matches)",
                "I(right), indexed by the right keys (each key's rows in time order)"]
