"""flat_map: split a string column into one row per piece (explode).

Math: out = Σ_x in(x)·Σ_{p ∈ split(x.column)} {x with column := p}. Linear: Δout =
flat_map(Δin), no state. A NULL string produces no rows; empty pieces are dropped.
Params: `column` (a string column), `separator` (default " "), `as` (the output
column for each piece; default: replace `column`).
"""
from __future__ import annotations

from ..types import Column, Schema
from ..zset import ZSet
from .base import Operator


class FlatMap(Operator):
    kind = "flat_map"
    title = "Flat map (split)"

    def check(self, input_schemas):
        schema = input_schemas["in"]
        column, sep = self.params.get("column"), self.params.get("separator", " ")
        out_name = self.params.get("as") or column
        col = schema.column(column) if isinstance(column, str) else None
        if col is None:
            return [self.problem(f"parameter 'column' must name a string column (columns: {', '.join(schema.names)})", param="column")]
        if col.type != "string":
            return [self.problem(f"column {column!r} is {col.type}; flat_map splits strings", param="column")]
        if not isinstance(sep, str) or not sep:
            return [self.problem("parameter 'separator' must be a non-empty string", param="separator")]
        if out_name != column and schema.column(out_name) is not None:
            return [self.problem(f"output column {out_name!r} already exists", param="as")]
        self.column, self.separator, self.out_name = column, sep, out_name
        cols = [c for c in schema.columns if c.name != column] + [Column(out_name, "string", False)]
        self.output_schema = Schema(tuple(cols))
        self._index = schema.names.index(column)
        return []

    def query(self, inputs):
        i, sep = self._index, self.separator
        out = []
        for row, w in inputs["in"]:
            if row[i] is None:
                continue
            rest = row[:i] + row[i + 1:]
            out.extend((rest + (piece,), w) for piece in row[i].split(sep) if piece)
        return ZSet(out)

    def spark(self, ctx, inputs):
        from pyspark.sql import functions as F

        from ..spark.zsets import WEIGHT

        others = [c.name for c in self.input_schemas["in"].columns if c.name != self.column]
        pieces = F.explode(F.split(F.col(self.column), _java_regex_literal(self.separator), -1)).alias(self.out_name)
        return inputs["in"].select(*others, pieces, WEIGHT).where(F.col(self.out_name) != "")


def _java_regex_literal(text: str) -> str:
    """Quote a literal separator for Spark's regex-based split."""
    return "".join("\\" + ch if ch in r"\^$.|?*+()[]{}" else ch for ch in text)
