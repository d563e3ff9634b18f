"""filter: keep the rows whose predicate is TRUE (NULL and FALSE drop the row).

Math: out[t] = σ_p(in[t]). Linear (σ_p(a + b) = σ_p(a) + σ_p(b)), so the incremental
form is the operator itself: Δout = σ_p(Δin), with no state. Weights pass through.
Params: `predicate`: a boolean expression over the input's columns, e.g. `amount > 10`.
"""
from __future__ import annotations

from ..errors import ExpressionError
from ..expr import parse_expression
from .base import Operator


class Filter(Operator):
    kind = "filter"
    inputs = ("in",)

    def check(self, input_schemas):
        schema = input_schemas["in"]
        text = self.params.get("predicate")
        if not isinstance(text, str) or not text.strip():
            return [self.problem("parameter 'predicate' must be a boolean expression", param="predicate")]
        try:
            self.expr = parse_expression(text, schema)
        except ExpressionError as e:
            return [self.problem(f"predicate: {e}", param="predicate", position=e.position)]
        if self.expr.type not in ("boolean", "null"):
            return [self.problem(f"predicate must be boolean, but it is {self.expr.type}", param="predicate")]
        self.output_schema = schema
        self._python = self.expr.to_python(schema)
        return []

    def spark(self, ctx, delta):
        df = delta.get("in")
        return None if df is None else df.where(self.expr.to_spark())

    def reference(self, delta):
        z = delta.get("in")
        return None if z is None else z.filter_rows(lambda row: self._python(row) is True)
