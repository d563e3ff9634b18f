"""union: the Z-set sum of two inputs with the same columns (SQL UNION ALL).

Math: out = a + b. Linear, so Δout = Δa + Δb, no state. For set union (SQL UNION),
follow it with distinct. Columns are matched by name; types must agree.
"""
from __future__ import annotations

from .base import Operator


def same_columns(op: Operator, a, b) -> list:
    if [(c.name, c.type) for c in a.columns] != [(c.name, c.type) for c in b.columns]:
        left = ", ".join(f"{c.name} {c.type}" for c in a.columns)
        right = ", ".join(f"{c.name} {c.type}" for c in b.columns)
        return [op.problem(f"inputs 'a' and 'b' must have the same columns; a has ({left}), b has ({right})", port="b")]
    return []


class SameColumnsPair(Operator):
    """Two inputs `a` and `b` with the same columns; the output has them too."""

    inputs = ("a", "b")

    def check(self, input_schemas):
        problems = same_columns(self, input_schemas["a"], input_schemas["b"])
        if not problems:
            self.output_schema = input_schemas["a"]
        return problems


class Union(SameColumnsPair):
    kind = "union"
    title = "Union (all)"

    def query(self, inputs):
        return inputs["a"] + inputs["b"]

    def arrow(self, tables, output):
        import pyarrow as pa

        return pa.concat_tables([tables["a"].cast(output), tables["b"].cast(output)])

    def spark(self, ctx, inputs):
        return inputs["a"].unionByName(inputs["b"])
