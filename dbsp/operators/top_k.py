"""top_k: the first k rows of each group by an ordering (ROW_NUMBER() <= k).

Math: within each group, the rows present (w > 0) in order — `order_by` columns, ASC
with NULLs first or DESC with NULLs last, then the remaining columns ascending as a
tie-break so the order is total (a list column by its JSON text) — each row taking
min(w, k - taken) of the k places.
Not linear. Incremental form, as aggregate: for every group touched by Δin, retract
its old top k and insert its new one. State: I(Δin) indexed by the group key.
Params: `group_by` (may be empty), `order_by`: [{"column": c, "desc": bool}], `k` >= 1;
optional `rank`: the name of an added bigint column holding each row's ROW_NUMBER()
(1..k in that order; a row of weight w takes w places, so it comes out as w rows of
weight 1, one per rank).
"""
from __future__ import annotations

import functools

from ..types import Column, Schema, element_type, encode_list
from ..zset import ZSet
from .base import Grouped


class TopK(Grouped):
    kind = "top_k"
    title = "Top-k per group"

    def check(self, input_schemas):
        schema = input_schemas["in"]
        problems = []
        self.group_by = self.columns_param("group_by", schema, problems, allow_empty=True)
        self.order = order_param(self, schema, problems, required=True)
        k = self.params.get("k")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            problems.append(self.problem(f"parameter 'k' must be a positive integer, got {k!r}", param="k"))
        rank = self.params.get("rank")
        if rank is not None and (not isinstance(rank, str) or not rank or schema.column(rank) is not None):
            problems.append(self.problem(f"parameter 'rank' must be a new column name, got {rank!r}", param="rank"))
        if problems:
            return problems
        self.k = k
        self.rank = rank
        ordered = {c for c, _ in self.order}
        self.tie_break = [c for c in schema.names if c not in ordered]
        self.output_schema = Schema(schema.columns + (Column(rank, "bigint", False),)) if rank else schema
        names = schema.names
        self._keys = [names.index(g) for g in self.group_by]
        self._sort = [(names.index(c), desc) for c, desc in self.order] + [(names.index(c), False) for c in self.tie_break]
        # a list column breaks ties by its physical form (JSON text), as Spark orders it
        self._lists = {i for i, c in enumerate(schema.columns) if element_type(c.type) is not None}
        return []

    def _compare(self, x: tuple, y: tuple) -> int:
        return compare_rows(self._sort, self._lists, x, y)

    def query(self, inputs):
        groups: dict[tuple, list] = {}
        for row, w in inputs["in"]:
            if w > 0:
                groups.setdefault(tuple(row[i] for i in self._keys), []).append((row, w))
        out = []
        for rows in groups.values():
            rows.sort(key=functools.cmp_to_key(lambda p, q: self._compare(p[0], q[0])))
            taken = 0
            for row, w in rows:
                if taken >= self.k:
                    break
                places = min(w, self.k - taken)
                if self.rank:
                    out += [(tuple(row) + (taken + i + 1,), 1) for i in range(places)]
                else:
                    out.append((row, places))
                taken += w
        return ZSet(out)

    def spark(self, ctx, inputs):
        return self.spark_recompute(inputs["in"])

    def spark_recompute(self, df):
        """The same with a window: running Σw in order, each row keeping what fits in k."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        from ..frames import WEIGHT, consolidate

        order = [F.col(c).desc_nulls_last() if desc else F.col(c).asc_nulls_first() for c, desc in self.order]
        order += [F.col(c).asc_nulls_first() for c in self.tie_break]
        window = Window.partitionBy(*self.group_by).orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
        present = consolidate(df).where(F.col(WEIGHT) > 0)
        before = F.sum(WEIGHT).over(window) - F.col(WEIGHT)
        ranked = present.withColumn("__before", before)
        kept = ranked.where(F.col("__before") < self.k)
        places = F.least(F.col(WEIGHT), F.lit(self.k) - F.col("__before")).cast("long")
        if self.rank:  # one row per place taken: ranks before+1 .. before+places
            ranks = F.sequence((F.col("__before") + 1).cast("long"), (F.col("__before") + places).cast("long"))
            names = [c for c in df.columns if c != WEIGHT]
            return kept.select(*names, F.explode(ranks).alias(self.rank), F.lit(1).cast("long").alias(WEIGHT))
        return kept.withColumn(WEIGHT, places).drop("__before")

    def describe_state(self):
        return ["I(in), indexed by the group key"]


def compare_rows(sort: list[tuple[int, bool]], lists: set[int], x: tuple, y: tuple) -> int:
    """x against y by `sort` ([(column index, desc)]): ASC with NULLs first, DESC with
    NULLs last; a list column (an index in `lists`) by its JSON text, as Spark orders it."""
    for i, desc in sort:
        a, b = x[i], y[i]
        if i in lists:
            a, b = encode_list(a), encode_list(b)
        if a == b:
            continue
        if a is None or b is None:  # ASC: NULLs first; DESC: NULLs last
            first = a is None
            return (-1 if first else 1) if not desc else (1 if first else -1)
        return (-1 if a < b else 1) * (-1 if desc else 1)
    return 0


def order_param(op, schema, problems: list, required: bool) -> list[tuple[str, bool]]:
    """The `order_by` parameter, checked: [(column, desc)] (a list column has no order)."""
    order = op.params.get("order_by", None if required else [])
    if not isinstance(order, list) or (required and not order) or not all(isinstance(o, dict) for o in order):
        problems.append(op.problem(f"parameter 'order_by' must be a {'non-empty ' if required else ''}list of {{column, desc}}",
                                   param="order_by"))
        return []
    out = []
    for o in order:
        c = o.get("column")
        if schema.column(c) is None:
            problems.append(op.problem(f"order_by: unknown column {c!r} (columns: {', '.join(schema.names)})", param="order_by"))
        elif element_type(schema.column(c).type) is not None:
            problems.append(op.problem(f"order_by: column {c!r} is a list ({schema.column(c).type}); lists have no order", param="order_by"))
        else:
            out.append((c, bool(o.get("desc", False))))
    return out
