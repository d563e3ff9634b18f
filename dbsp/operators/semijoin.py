"""semijoin, antijoin and left_join: the joins built from the others (DBSP.md's rewrites).

Math, with K(b)(k) = Σ_{y: key(y)=k} b(y) and k never NULL:
    semijoin(a, b)(x)  = a(x)  when K(b)(key(x)) > 0, else 0          (SQL EXISTS)
    antijoin(a, b)     = a - semijoin(a, b)                           (SQL NOT EXISTS)
    left_join(a, b)    = join(a, b) + pad(antijoin(a, b))            (LEFT OUTER JOIN)
where pad extends a row with NULLs for the right's columns. Incremental form: the
rewrite semijoin = π_a(a ⋈ distinct(π_k(b))), each part in its own Δ form (state:
I(a), I(distinct keys of b), I(π_k b)); antijoin and left_join are linear in it.
Params: `left_keys`, `right_keys` (non-empty, equal length). left_join output: the left
columns, then the right's except right keys named like their left key (all nullable).
"""
from __future__ import annotations

import functools

from ..types import Column, Schema
from ..zset import ZSet
from .base import Operator
from .join import Join


class _KeyedPair(Operator):
    inputs = ("left", "right")
    linear = False

    def check_keys(self, input_schemas):
        left, right = input_schemas["left"], input_schemas["right"]
        problems = []
        self.left_keys = self.columns_param("left_keys", left, problems, port="left")
        self.right_keys = self.columns_param("right_keys", right, problems, port="right")
        if not problems and len(self.left_keys) != len(self.right_keys):
            problems.append(self.problem(f"left_keys has {len(self.left_keys)} columns but right_keys has {len(self.right_keys)}", param="right_keys"))
        for lk, rk in zip(self.left_keys, self.right_keys) if not problems else ():
            lt, rt = left.column(lk).type, right.column(rk).type
            if lt != rt and not {lt, rt} <= {"bigint", "double"}:
                problems.append(self.problem(f"key {lk!r} ({lt}) cannot equal {rk!r} ({rt})", param="right_keys"))
        if not problems:
            self._lk = [left.names.index(k) for k in self.left_keys]
            self._rk = [right.names.index(k) for k in self.right_keys]
        return problems

    def check(self, input_schemas):
        """semijoin and antijoin keep the left rows as they are."""
        problems = self.check_keys(input_schemas)
        if not problems:
            self.output_schema = input_schemas["left"]
        return problems

    def matched(self, a: ZSet, b: ZSet) -> ZSet:
        totals: dict[tuple, int] = {}
        for row, w in b:
            key = tuple(row[i] for i in self._rk)
            if None not in key:
                totals[key] = totals.get(key, 0) + w
        present = {k for k, w in totals.items() if w > 0}
        return a.filter_rows(lambda row: tuple(row[i] for i in self._lk) in present)

    def spark_matched(self, a, b):
        """semijoin on whole DataFrames (literal mode; incremental mode uses the rewrite)."""
        from pyspark.sql import functions as F

        from ..frames import WEIGHT

        no_null_key = functools.reduce(lambda x, y: x & y, [F.col(k).isNotNull() for k in self.right_keys])
        keys = (b.where(no_null_key).groupBy(*self.right_keys).agg(F.sum(WEIGHT).alias("__total"))
                .where(F.col("__total") > 0).alias("k"))
        cond = [F.col(f"a.{lk}") == F.col(f"k.{rk}") for lk, rk in zip(self.left_keys, self.right_keys)]
        return a.alias("a").join(keys, on=cond, how="left_semi")

    def rewrite(self) -> list[tuple[str, Operator, dict]]:
        """semijoin as (node, operator, {port: source}) steps over "left"/"right":
        π_a(left ⋈ distinct(π_k(right)))."""
        from .distinct import Distinct
        from .map import Map

        left, right = self.input_schemas["left"], self.input_schemas["right"]
        taken = set(left.names)
        names = []
        for rk in self.right_keys:
            name, i = f"{rk}_k", 0
            while name in taken:
                i += 1
                name = f"{rk}_k{i}"
            taken.add(name)
            names.append(name)
        keys = Map(self.node_id, {"columns": [{"name": n, "expr": rk} for n, rk in zip(names, self.right_keys)]})
        distinct = Distinct(self.node_id, {})
        join = Join(self.node_id, {"left_keys": self.left_keys, "right_keys": names})
        project = Map(self.node_id, {"columns": [{"name": c, "expr": c} for c in left.names]})
        steps = [("keys", keys, {"in": "right"}), ("distinct", distinct, {"in": "keys"}),
                 ("join", join, {"left": "left", "right": "distinct"}), ("semi", project, {"in": "join"})]
        return _validated(steps, {"left": left, "right": right})


class SemiJoin(_KeyedPair):
    kind = "semijoin"
    title = "Semijoin (EXISTS)"

    def query(self, inputs):
        return self.matched(inputs["left"], inputs["right"])

    def spark(self, ctx, inputs):
        return self.spark_matched(inputs["left"], inputs["right"])

    def describe_state(self):
        return ["I(left) by key", "I(π_keys right) and its distinct keys"]


class AntiJoin(_KeyedPair):
    kind = "antijoin"
    title = "Antijoin (NOT EXISTS)"

    def query(self, inputs):
        return inputs["left"] - self.matched(inputs["left"], inputs["right"])

    def spark(self, ctx, inputs):
        from ..frames import negate

        return inputs["left"].unionByName(negate(self.spark_matched(inputs["left"], inputs["right"])))

    def rewrite(self):
        """a - semijoin(a, b)."""
        from .difference import Difference

        steps = SemiJoin.rewrite(self)
        steps.append(("anti", Difference(self.node_id, {}), {"a": "left", "b": "semi"}))
        return _validated(steps, dict(self.input_schemas))

    def describe_state(self):
        return ["as semijoin: I(left) by key, I(π_keys right) and its distinct keys"]


class LeftJoin(_KeyedPair):
    kind = "left_join"
    title = "Left outer join"

    def check(self, input_schemas):
        problems = self.check_keys(input_schemas)
        if problems:
            return problems
        self.inner = Join(self.node_id, {"left_keys": self.left_keys, "right_keys": self.right_keys})
        problems = self.inner.validate(input_schemas)
        if problems:
            return problems
        left = input_schemas["left"]
        self.padding = [Column(c.name, c.type, True) for c in self.inner.right_kept]
        self.output_schema = Schema(left.columns + tuple(self.padding))
        return []

    def query(self, inputs):
        a, b = inputs["left"], inputs["right"]
        unmatched = a - self.matched(a, b)
        nulls = (None,) * len(self.padding)
        return self.inner.query({"left": a, "right": b}) + unmatched.map_rows(lambda row: row + nulls)

    def spark(self, ctx, inputs):
        from pyspark.sql import functions as F

        from ..frames import WEIGHT, negate

        a, b = inputs["left"], inputs["right"]
        unmatched = a.unionByName(negate(self.spark_matched(a, b)))
        padded = unmatched.select(*self.input_schemas["left"].names,
                                  *[F.lit(None).cast(ctx.spark_type(c.type)).alias(c.name) for c in self.padding], WEIGHT)
        return self.inner.spark(ctx, inputs).unionByName(padded)

    def rewrite(self):
        """join(a, b) + pad(a - semijoin(a, b))."""
        from .map import Map
        from .union import Union

        sql_type = {"bigint": "BIGINT", "double": "DOUBLE", "string": "VARCHAR", "boolean": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP"}
        sql_type.update({f"array<{t}>": f"ARRAY<{sql_type[t]}>" for t in ("bigint", "double", "string", "boolean")})
        steps = AntiJoin.rewrite(self)
        pad = Map(self.node_id, {"columns": [{"name": c, "expr": c} for c in self.input_schemas["left"].names]
                                 + [{"name": c.name, "expr": f"CAST(NULL AS {sql_type[c.type]})"} for c in self.padding]})
        inner = Join(self.node_id, {"left_keys": self.left_keys, "right_keys": self.right_keys})
        steps += [("pad", pad, {"in": "anti"}), ("inner", inner, {"left": "left", "right": "right"}),
                  ("left_join", Union(self.node_id, {}), {"a": "inner", "b": "pad"})]
        return _validated(steps, dict(self.input_schemas))

    def describe_state(self):
        return ["I(left), I(right) by key (the inner join)", "I(π_keys right) and its distinct keys (the unmatched rows)"]


def _validated(steps, schemas: dict) -> list:
    """Check each rewritten step against the schemas flowing into it (sets their schemas)."""
    schemas = dict(schemas)
    for name, op, sources in steps:
        found = op.validate({port: schemas[src] for port, src in sources.items()})
        if found:
            raise ValueError(f"rewrite of {op.node_id!r} failed at {name}: {found[0].message}")
        schemas[name] = op.output_schema
    return steps
