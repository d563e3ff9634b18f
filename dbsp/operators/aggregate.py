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

    def arrow_groups(self, table, output):
        """The groups of `table` (a consolidated change: the columns and `__w`) as rows of
        weight 1, computed column-wise by Arrow with `query`'s math (count, sum, avg, min,
        max; see dbsp.aggregates); None when this aggregate has no such form (a distinct
        aggregate, an expression Arrow does not cover, a double key (Arrow groups 0.0 and
        -0.0 apart), or a bigint sum that could leave 64 bits: the row form then)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not hasattr(self, "_arrow_aggs"):
            self._arrow_aggs = _arrow_aggregates(self)
        if self._arrow_aggs is None or self.is_global:
            return None
        w = table["__w"]
        columns = {f"k{i}": table[g] for i, g in enumerate(self.group_by)}
        columns["w"] = w
        wanted = [("w", "sum")]
        for i, (fn, f, typ) in enumerate(self._arrow_aggs):
            if f is None:  # count(*): Σ w
                continue
            v = f(table)
            v = pa.repeat(v, table.num_rows) if isinstance(v, pa.Scalar) else v
            present = pc.if_else(pc.is_valid(v), w, 0)
            if fn == "count":
                columns[f"a{i}"] = present
                wanted.append((f"a{i}", "sum"))
            elif fn in ("sum", "avg"):
                if typ == "bigint":
                    low, high = (x.as_py() or 0 for x in pc.min_max(v).values())  # Python ints: abs(MIN) does not wrap
                    if max(-low, high) * (pc.sum(pc.abs(w)).as_py() or 0) >= 2**62:  # could leave 64 bits: exact Python
                        return None
                    columns[f"a{i}"] = pc.multiply(v, w)
                else:
                    columns[f"a{i}"] = pc.multiply(v, pc.cast(w, pa.float64()))
                columns[f"n{i}"] = present
                wanted += [(f"a{i}", "sum"), (f"n{i}", "sum")]
            else:  # min / max over the rows present (w > 0)
                columns[f"a{i}"] = pc.if_else(pc.greater(w, 0), v, pa.scalar(None, v.type))
                wanted.append((f"a{i}", fn))
        keys = [f"k{i}" for i in range(len(self.group_by))]
        grouped = pa.table(columns).group_by(keys, use_threads=False).aggregate(wanted)
        grouped = grouped.filter(pc.not_equal(grouped["w_sum"], 0))  # a group exists while Σ w ≠ 0
        out = [grouped[k] for k in keys]
        for i, (fn, f, typ) in enumerate(self._arrow_aggs):
            if f is None:
                out.append(grouped["w_sum"])
            elif fn == "count":
                out.append(grouped[f"a{i}_sum"])
            elif fn in ("sum", "avg"):
                n, total = grouped[f"n{i}_sum"], grouped[f"a{i}_sum"]
                none = pc.equal(n, 0)
                value = total if fn == "sum" else pc.divide(pc.cast(total, pa.float64()), pc.cast(n, pa.float64()))
                out.append(pc.if_else(none, pa.scalar(None, value.type), value))
            else:
                out.append(grouped[f"a{i}_{fn}"])
        n = grouped.num_rows
        return pa.Table.from_arrays([pc.cast(c, field.type) for c, field in zip(out, output)] + [pa.array([1] * n, pa.int64())],
                                    schema=output)

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


def _arrow_aggregates(op) -> list | None:
    """(fn, Arrow form of the expression or None for COUNT(*), its type) per aggregate, or
    None when one is not covered column-wise."""
    from ..arrow_expr import compile_arrow

    schema = op.input_schemas["in"]
    if any(schema.column(g).type == "double" for g in op.group_by):
        return None
    forms = []
    for fn, e, _, _ in op.aggs:
        if fn not in ("count", "sum", "avg", "min", "max"):
            return None
        f = compile_arrow(e) if e is not None else None
        if e is not None and (f is None or e.type == "null" or (fn in ("sum", "avg") and e.type not in ("bigint", "double"))):
            return None
        forms.append((fn, f, e.type if e is not None else None))
    return forms


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
