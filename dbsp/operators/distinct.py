"""distinct: every row present (weight > 0) once; rows with weight <= 0 vanish.

Math: distinct(Z)(x) = 1 if Z(x) > 0 else 0. Not linear. Incremental form (DBSP):
Δout = H(I(Δin)_{t-1}, Δin) where, for each row x with old weight w0 and change d,
H emits +1 if w0 <= 0 < w0 + d, -1 if w0 > 0 >= w0 + d, else nothing.
State: I(Δin), the integrated input (a trace).
"""
from __future__ import annotations

from ..zset import ZSet
from .base import Operator


class Distinct(Operator):
    kind = "distinct"
    title = "Distinct"
    linear = False

    def check(self, input_schemas):
        self.output_schema = input_schemas["in"]
        return []

    def query(self, inputs):
        return ZSet((row, 1) for row, w in inputs["in"] if w > 0)

    def spark(self, ctx, inputs):
        from ..frames import WEIGHT, consolidate

        from pyspark.sql import functions as F

        return consolidate(inputs["in"]).where(F.col(WEIGHT) > 0).withColumn(WEIGHT, F.lit(1).cast("long"))

    def describe_state(self):
        return ["I(in): the integrated input, to know each row's old weight"]
