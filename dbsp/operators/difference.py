"""difference: the Z-set difference of two inputs with the same columns.

Math: out = a - b (weights subtract; SQL EXCEPT ALL on positive tables when b ⊆ a).
Linear, so Δout = Δa - Δb, no state. For set difference (SQL EXCEPT), use
antijoin-style rewrites: distinct(a) - distinct(a) ∩ b, or follow with distinct.
"""
from __future__ import annotations

from .union import SameColumnsPair


class Difference(SameColumnsPair):
    kind = "difference"
    title = "Difference (a − b)"

    def query(self, inputs):
        return inputs["a"] - inputs["b"]

    def arrow(self, tables, output):
        import pyarrow as pa
        import pyarrow.compute as pc

        b = tables["b"]
        b = b.set_column(b.schema.get_field_index("__w"), "__w", pc.negate_checked(b["__w"]))
        return pa.concat_tables([tables["a"].cast(output), b.cast(output)])

    def spark(self, ctx, inputs):
        from ..frames import negate

        return inputs["a"].unionByName(negate(inputs["b"]))
