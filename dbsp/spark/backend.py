"""Evaluate a plan on Spark. A change is a DataFrame of the data columns plus `__w`
(the integer weight); None stands for an empty change, which costs no job.

Input changes are built from Arrow tables with an explicit schema (a LocalTableScan, no
job); each output view is observed with one collect per tick and consolidated on the
driver (it is a delta, so small), which saves the shuffle a Spark-side groupBy costs.
"""
from __future__ import annotations

import pyarrow as pa

from ..runtime import Runtime
from ..types import Schema
from ..zset import ZSet
from .session import get_session

WEIGHT = "__w"

_ARROW = {
    "bigint": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
}


def arrow_schema(schema: Schema) -> pa.Schema:
    fields = [pa.field(c.name, _ARROW[c.type], nullable=c.nullable) for c in schema.columns]
    return pa.schema(fields + [pa.field(WEIGHT, pa.int64(), nullable=False)])


def spark_schema(schema: Schema):
    from pyspark.sql import types as T

    spark_types = {
        "bigint": T.LongType(),
        "double": T.DoubleType(),
        "string": T.StringType(),
        "boolean": T.BooleanType(),
        "date": T.DateType(),
        "timestamp": T.TimestampNTZType(),
    }
    fields = [T.StructField(c.name, spark_types[c.type], c.nullable) for c in schema.columns]
    return T.StructType(fields + [T.StructField(WEIGHT, T.LongType(), False)])


class SparkRuntime(Runtime):
    def __init__(self, plan, session=None):
        super().__init__(plan)
        self.spark = session or get_session()

    def from_zset(self, node_id, z: ZSet):
        schema = self.plan.schemas[node_id]
        columns = list(zip(*[row + (w,) for row, w in z])) or [() for _ in range(len(schema.columns) + 1)]
        table = pa.Table.from_arrays(
            [pa.array(list(col), type=f.type) for col, f in zip(columns, arrow_schema(schema))],
            schema=arrow_schema(schema),
        )
        return self.spark.createDataFrame(table, schema=spark_schema(schema))

    def evaluate(self, node_id, delta):
        return self.plan.operators[node_id].spark(self, delta)

    def collect(self, df) -> ZSet:
        names = [c for c in df.columns if c != WEIGHT]
        return ZSet((tuple(r[n] for n in names), r[WEIGHT]) for r in df.collect())
