"""map: compute new columns from each row (projection with expressions).

Math: out = lift(f)(in), f applied to every row, weights kept: Σ_x in(x)·{f(x)}. Linear,
so Δout = map(Δin), no state. Equal results of different rows add up (consolidation).
Params: `columns`: [{"name": "balance", "expr": "credits - debits"}, ...] — the output
has exactly these columns, in this order (an expression may be just a column name).
"""
from __future__ import annotations

import pyarrow as pa

from ..types import Column, Schema
from .base import Operator, valid_column_name


class Map(Operator):
    kind = "map"
    title = "Map / project"

    def check(self, input_schemas):
        schema = input_schemas["in"]
        raw = self.params.get("columns")
        if not isinstance(raw, list) or not raw:
            return [self.problem("parameter 'columns' must be a non-empty list of {name, expr}", param="columns")]
        problems, self.exprs, columns, seen = [], [], [], set()
        for i, item in enumerate(raw):
            name = item.get("name") if isinstance(item, dict) else None
            if not valid_column_name(name):
                problems.append(self.problem(f"columns[{i}]: name {name!r} must be letters, digits and _", param="columns"))
                continue
            if name in seen:
                problems.append(self.problem(f"columns: duplicate output column {name!r}", param="columns"))
                continue
            seen.add(name)
            expr = self.expression("columns", item.get("expr"), schema, problems, label=f"column {name!r}")
            if expr is not None:
                self.exprs.append((name, expr))
                columns.append(Column(name, "string" if expr.type == "null" else expr.type, True))
        if problems:
            return problems
        self.output_schema = Schema(tuple(columns))
        self._python = [e.to_python(schema) for _, e in self.exprs]
        return []

    def query(self, inputs):
        fns = self._python
        return inputs["in"].map_rows(lambda row: tuple(f(row) for f in fns))

    def arrow(self, tables, output):
        from ..arrow_expr import compile_arrow

        if not hasattr(self, "_arrow"):
            forms = [compile_arrow(e) for _, e in self.exprs]
            self._arrow = None if None in forms else forms
        if self._arrow is None:
            return None
        table = tables["in"]
        columns = [f(table).cast(field.type) for f, field in zip(self._arrow, output)]
        return pa.Table.from_arrays([*columns, table["__w"]], schema=output)

    def spark(self, ctx, inputs):
        from ..frames import WEIGHT

        cols = [e.to_spark().cast(ctx.spark_type(c.type)).alias(c.name) for (_, e), c in zip(self.exprs, self.output_schema.columns)]
        return inputs["in"].select(*cols, WEIGHT)
