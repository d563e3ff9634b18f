"""filter: keep the rows whose predicate is TRUE (NULL and FALSE drop the row).

Math: out = σ_p(in). Linear (σ_p(a + b) = σ_p(a) + σ_p(b)), so the incremental form is
the operator itself: Δout = σ_p(Δin), no state. Weights pass through.
Params: `predicate`: a boolean expression over the input's columns, e.g. `amount > 10`.
"""
from __future__ import annotations

from .base import Operator


class Filter(Operator):
    kind = "filter"
    title = "Filter"

    def check(self, input_schemas):
        schema = input_schemas["in"]
        problems = []
        self.expr = self.expression("predicate", self.params.get("predicate"), schema, problems)
        if self.expr is not None and self.expr.type not in ("boolean", "null"):
            problems.append(self.problem(f"predicate must be boolean, but it is {self.expr.type}", param="predicate"))
        if problems:
            return problems
        self.output_schema = schema
        self._python = self.expr.to_python(schema)
        return []

    def query(self, inputs):
        return inputs["in"].filter_rows(lambda row: self._python(row) is True)

    def arrow(self, tables, output):
        from ..arrow_expr import compile_arrow

        if not hasattr(self, "_arrow"):
            self._arrow = compile_arrow(self.expr)
        if self._arrow is None:
            return None
        import pyarrow.compute as pc

        table = tables["in"]
        if self.expr.type == "null":  # WHERE NULL keeps nothing
            return table.slice(0, 0).cast(output)
        return table.filter(pc.fill_null(self._arrow(table), False)).cast(output)

    def spark(self, ctx, inputs):
        predicate = self.expr.to_spark()
        return inputs["in"].where(predicate.cast("boolean") if self.expr.type == "null" else predicate)  # WHERE NULL
