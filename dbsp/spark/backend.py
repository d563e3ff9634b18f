"""Evaluate a plan on Spark, tick by tick.

Relational circuits run in their incremental form: linear operators on the deltas,
join / distinct / aggregate through their Δ executors with traces. Circuits with DBSP
primitives run literally. Input changes become DataFrames from Arrow (a LocalTableScan,
no job); outputs are observed from the driver-side rows.
"""
from __future__ import annotations

import pyarrow as pa

from ..runtime import Runtime
from ..types import Schema
from ..zset import ZSet
from .batch import Batch
from .incremental import INCREMENTAL, PRIMITIVES, Lifted
from .session import get_session
from .zsets import WEIGHT, consolidate_arrow

_ARROW = {
    "bigint": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
}


def arrow_schema(schema: Schema) -> pa.Schema:
    fields = [pa.field(c.name, _ARROW[c.type], nullable=True) for c in schema.columns]
    return pa.schema(fields + [pa.field(WEIGHT, pa.int64(), nullable=False)])


def _spark_type(name: str):
    from pyspark.sql import types as T

    return {
        "bigint": T.LongType(),
        "double": T.DoubleType(),
        "string": T.StringType(),
        "boolean": T.BooleanType(),
        "date": T.DateType(),
        "timestamp": T.TimestampNTZType(),
    }[name]


def spark_schema(schema: Schema, columns: list[str] | None = None, weight: bool = True):
    from pyspark.sql import types as T

    cols = [c for c in schema.columns if columns is None or c.name in columns]
    fields = [T.StructField(c.name, _spark_type(c.type), True) for c in cols]
    if weight:
        fields.append(T.StructField(WEIGHT, T.LongType(), False))
    return T.StructType(fields)


class SparkRuntime(Runtime):
    def __init__(self, plan, session=None, driver_max_rows: int = 10_000, recent_max: int = 200_000,
                 arrow_max_rows: int = 1_000_000):
        self.spark = session or get_session()
        self.jobs = 0  # Spark jobs this runtime started (lookups, materializations, spills)
        #: changes up to this many rows are computed on the driver (see spark/incremental.py)
        self.driver_max_rows = driver_max_rows
        #: a trace keeps at most this many rows on the driver before they move to Spark
        self.recent_max = recent_max
        #: changes up to this many rows use vectorized Arrow operators on the driver
        #: (joins against state rows fetched by key); larger ones run entirely on Spark
        self.arrow_max_rows = arrow_max_rows
        self._arrow_schemas: dict[Schema, pa.Schema] = {}
        super().__init__(plan)

    # ---- the context operators and executors use --------------------------------
    def arrow_schema(self, schema: Schema) -> pa.Schema:
        if schema not in self._arrow_schemas:
            self._arrow_schemas[schema] = arrow_schema(schema)
        return self._arrow_schemas[schema]

    def spark_type(self, name: str):
        return _spark_type(name)

    def spark_struct(self, schema: Schema, columns: list[str]):
        return spark_schema(schema, columns, weight=False)

    def local_df(self, table: pa.Table, schema: Schema):
        return self.spark.createDataFrame(table, schema=spark_schema(schema))

    def to_zset_table(self, table: pa.Table, schema: Schema) -> ZSet:
        names = schema.names
        return ZSet((tuple(r[n] for n in names), r[WEIGHT]) for r in table.to_pylist())

    def to_zset(self, batch) -> ZSet:
        return ZSet() if batch is None else self.to_zset_table(batch.table(), batch.schema)

    def to_table(self, z: ZSet, schema: Schema) -> pa.Table:
        names = schema.names
        return pa.Table.from_pylist([dict(zip(names, row)) | {WEIGHT: w} for row, w in z], schema=self.arrow_schema(schema))

    def empty(self, schema: Schema):
        return self.local_df(self.arrow_schema(schema).empty_table(), schema)

    # ---- Runtime hooks ---------------------------------------------------------------
    def make_executor(self, node_id):
        op, schema = self.plan.operators[node_id], self.plan.schemas[node_id]
        if op.stream:
            return PRIMITIVES[op.kind](self, op, schema)
        if not self.plan.literal and op.kind in INCREMENTAL:
            return INCREMENTAL[op.kind](self, op, schema)
        return Lifted(self, op, schema)

    def from_zset(self, node_id, z):
        """A change as a ZSet, or (bulk loads) an Arrow table of the columns + `__w`."""
        schema = self.plan.schemas[node_id]
        if isinstance(z, pa.Table):
            return Batch.of_table(self, schema, consolidate_arrow(z.select(schema.names + [WEIGHT]).cast(self.arrow_schema(schema))))
        return Batch.of_table(self, schema, self.to_table(z, schema))

    def collect(self, value) -> ZSet:
        return self.to_zset(value)

    def rows_out(self, value) -> int:
        return 0 if value is None else value.table().num_rows

    def rows_json(self, value, schema):
        if value is None:
            return []
        names = schema.names
        temporal = [c.name for c in schema.columns if c.type in ("date", "timestamp")]
        rows = []
        for r in value.table().to_pylist():
            data = {n: r[n] for n in names}
            for n in temporal:
                if data[n] is not None:
                    data[n] = data[n].isoformat()
            rows.append({"data": data, "weight": r[WEIGHT]})
        return rows

    def state_rows(self, node_id) -> int:
        return self.executors[node_id].state_rows()
