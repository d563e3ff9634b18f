"""flat_map: one row per element of a list column, or per piece of a split string (explode).

Math: out = Σ_x in(x)·Σ_{p ∈ pieces(x.column)} {x with column := p}, where pieces is
the list's elements in order (duplicates kept, NULL elements kept as NULL rows) or the
string split at `separator` (empty pieces dropped). Linear: Δout = flat_map(Δin), no
state. A NULL list or string and an empty list produce no rows (SQL's EXPLODE).
Params: `column` (a list column, array<T>, or a string column), `separator` (strings
only; default " "), `as` (the output column for each piece; default: replace
`column`). The output column's type is T for a list, string for a string.
"""
from __future__ import annotations

from ..limits import check_tick_rows, tick_max_rows
from ..types import Column, Schema, decode_list, element_type
from ..zset import ZSet
from .base import Operator, valid_column_name


class FlatMap(Operator):
    kind = "flat_map"
    title = "Flat map (explode a list, split a string)"

    def check(self, input_schemas):
        schema = input_schemas["in"]
        column, sep = self.params.get("column"), self.params.get("separator", " ")
        out_name = self.params.get("as") or column
        col = schema.column(column) if isinstance(column, str) else None
        if col is None:
            return [self.problem(f"parameter 'column' must name a list or string column (columns: {', '.join(schema.names)})", param="column")]
        self.element = element_type(col.type)
        if self.element is None and col.type != "string":
            return [self.problem(f"column {column!r} is {col.type}; flat_map explodes a list (array<...>) or splits a string", param="column")]
        if self.element is not None and "separator" in self.params:
            return [self.problem(f"parameter 'separator' applies to string columns; {column!r} is a list ({col.type})", param="separator")]
        if not isinstance(sep, str) or not sep:
            return [self.problem("parameter 'separator' must be a non-empty string", param="separator")]
        if not valid_column_name(out_name):
            return [self.problem(f"parameter 'as' must be a column name, got {out_name!r}", param="as")]
        if out_name != column and schema.column(out_name) is not None:
            return [self.problem(f"output column {out_name!r} already exists", param="as")]
        self.column, self.separator, self.out_name = column, sep, out_name
        piece = Column(out_name, self.element, True) if self.element else Column(out_name, "string", False)
        cols = [c for c in schema.columns if c.name != column] + [piece]
        self.output_schema = Schema(tuple(cols))
        self._index = schema.names.index(column)
        return []

    def _pieces(self, value) -> list:
        if self.element is not None:
            return list(decode_list(value))
        return [piece for piece in value.split(self.separator) if piece]

    def query(self, inputs):
        i, limit = self._index, tick_max_rows(self.output_schema)
        out = []
        for row, w in inputs["in"]:
            if row[i] is None:
                continue
            rest = row[:i] + row[i + 1:]
            out.extend((rest + (piece,), w) for piece in self._pieces(row[i]))
            if limit is not None and len(out) > limit:  # stop as soon as it passes the limit
                check_tick_rows(self.node_id, self.kind, len(out), built=True, schema=self.output_schema)
        return ZSet(out)

    def spark(self, ctx, inputs):
        from pyspark.sql import functions as F

        from ..frames import WEIGHT

        others = [c.name for c in self.input_schemas["in"].columns if c.name != self.column]
        if self.element is not None:  # the list's physical form is JSON text (types.encode_list)
            values = F.from_json(F.col(self.column), f"array<{self.element}>")
            return inputs["in"].select(*others, F.explode(values).alias(self.out_name), WEIGHT)
        pieces = F.explode(F.split(F.col(self.column), _java_regex_literal(self.separator), -1)).alias(self.out_name)
        return inputs["in"].select(*others, pieces, WEIGHT).where(F.col(self.out_name) != "")

    def describe_state(self):
        return []


def _java_regex_literal(text: str) -> str:
    """Quote a literal separator for Spark's regex-based split."""
    return "".join("\\" + ch if ch in r"\^$.|?*+()[]{}" else ch for ch in text)
