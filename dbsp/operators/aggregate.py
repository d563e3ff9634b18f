"""aggregate: group by key columns and compute aggregates (see dbsp.aggregates).

Math: for each group k present in the input, one row (k, agg_1, ..., agg_n).
Incremental form: for every group touched by Δin, retract its old row and insert its
new one: Δout = Σ_k∈keys(Δin) -(k, old_k) + (k, new_k). State: I(Δin) indexed by the
group key (to recompute touched groups) and I(Δout) (their current rows); on Spark,
count/sum/avg keep per-group accumulators instead (dbsp/spark/accumulate.py), and the
distinct ones add the (group, value) pairs crossing 0 ↔ positive to them
(count_distinct(e) = Σ_{distinct(π_{group,e}(distinct(in)))} 1: dbsp/spark/distinct_aggregate.py).
Params: `group_by`: [column, ...] (may be empty: one global row);
`aggregates`: [{"fn": count|sum|avg|min|max|count_distinct|sum_distinct|avg_distinct, "expr": "amount", "as": "name"}]
(`expr` is optional for count: COUNT(*)).
"""
from __future__ import annotations

from ..aggregates import FUNCTIONS, LINEAR, NEEDS_EXPR, NUMERIC, python_aggregate, result_type, spark_aggregate
from ..types import Column, Schema, element_type
from ..zset import ZSet
from .base import Grouped, valid_column_name


class Aggregate(Grouped):
    kind = "aggregate"
    title = "Group by / aggregate"

    def check(self, input_schemas):
        schema = input_schemas["in"]
        problems = []
        self.group_by = self.columns_param("group_by", schema, problems, allow_empty=True)
        raw = self.params.get("aggregates")
        if not isinstance(raw, list) or not raw:
            problems.append(self.problem("parameter 'aggregates' must be a non-empty list of {fn, expr, as}", param="aggregates"))
            return problems
        self.aggs = aggregate_calls(self, raw, schema, problems, FUNCTIONS, taken=set(self.group_by))
        columns = [schema.column(g) for g in self.group_by if schema.column(g)] + [Column(name, rtype, True) for _, _, name, rtype in self.aggs]
        if problems:
            return problems
        self.output_schema = Schema(tuple(columns))
        self._keys = [schema.names.index(g) for g in self.group_by]
        self._fns = [(fn, e.to_python(schema) if e else (lambda r: 1)) for fn, e, _, _ in self.aggs]
        return []

    def query(self, inputs):
        groups: dict[tuple, list] = {}
        for row, w in inputs["in"]:
            groups.setdefault(tuple(row[i] for i in self._keys), []).append((row, w))
        if self.is_global:
            groups.setdefault((), [])
        out = []
        for key, rows in groups.items():
            if not self.is_global and sum(w for _, w in rows) == 0:
                continue
            values = tuple(python_aggregate(fn, [(f(r), w) for r, w in rows], self.is_global) for fn, f in self._fns)
            out.append((key + values, 1))
        return ZSet(out)

    def spark(self, ctx, inputs):
        return self.spark_aggregate(inputs["in"])

    def spark_recompute(self, df):
        """The groups of `df` recomputed on Spark (the grouped executor's large path)."""
        return self.spark_aggregate(df)

    def spark_aggregate(self, df):
        from pyspark.sql import functions as F

        from ..frames import WEIGHT, consolidate

        if any(fn not in LINEAR for fn, *_ in self.aggs):
            # min/max and the distinct ones look at which rows are present (w > 0): only the
            # summed weight of a row says so (a trace's parts hold a row's insert and
            # its delete apart)
            df = consolidate(df)
        w = F.col(WEIGHT)
        cols = [spark_aggregate(fn, e.to_spark() if e else None, w, self.is_global, rtype, e.where if e else None, e.type if e else None).alias(name)
                for fn, e, name, rtype in self.aggs]
        if self.is_global:
            return df.agg(*cols).withColumn(WEIGHT, F.lit(1).cast("long"))
        grouped = df.groupBy(*self.group_by).agg(*cols, F.sum(w).alias("__total"))
        return grouped.where(F.col("__total") != 0).drop("__total").withColumn(WEIGHT, F.lit(1).cast("long"))

    def describe_state(self):
        return ["I(in), indexed by the group key", "I(out): the current row of every group"]


def aggregate_calls(op, raw: list, schema, problems: list, functions, taken: set) -> list:
    """The `aggregates` parameter's calls, checked: [(fn, expr or None, name, result type)].
    `taken`: the output columns' names so far (a name among them is a duplicate)."""
    calls, taken = [], set(taken)
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            problems.append(op.problem(f"aggregates[{i}] must be an object {{fn, expr, as}}", param="aggregates"))
            continue
        fn, name, text = item.get("fn"), item.get("as"), item.get("expr")
        if fn not in functions:
            problems.append(op.problem(f"aggregates[{i}]: unknown function {fn!r} (one of {', '.join(functions)})", param="aggregates"))
            continue
        if not valid_column_name(name):
            problems.append(op.problem(f"aggregates[{i}]: output name ('as') {name!r} must be letters, digits and _", param="aggregates"))
            continue
        if name in taken:
            problems.append(op.problem(f"aggregates: duplicate output column {name!r}", param="aggregates"))
            continue
        taken.add(name)
        expr = None
        if text not in (None, "") or fn in NEEDS_EXPR:
            expr = op.expression("aggregates", text, schema, problems, label=f"{fn}({name})")
            if expr is None:
                continue
            if fn in NUMERIC and expr.type not in ("bigint", "double"):
                problems.append(op.problem(f"{fn}({name}) needs a number, got {expr.type}", param="aggregates"))
                continue
            if fn in ("min", "max") and element_type(expr.type) is not None:
                problems.append(op.problem(f"{fn}({name}): lists ({expr.type}) have no order; aggregate an element or cardinality()",
                                           param="aggregates"))
                continue
        calls.append((fn, expr, name, result_type(fn, expr.type if expr else None)))
    return calls
