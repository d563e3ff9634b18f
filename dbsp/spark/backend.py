"""Evaluate a plan on Spark, tick by tick.

Relational circuits run in their incremental form: linear operators on the deltas,
join / distinct / aggregate through their Δ executors with traces. Circuits with DBSP
primitives run literally. Input changes become DataFrames from Arrow (a LocalTableScan,
no job); outputs are observed from the driver-side rows.
"""
from __future__ import annotations

import pyarrow as pa

from ..runtime import Runtime
from ..types import ARRAY_TYPES, Schema, decode_list, encode_list
from ..zset import ZSet
from .batch import Batch
from .incremental import INCREMENTAL, PRIMITIVES, Lifted
from .ordered import ordered_executor
from .session import get_session
from .trace import StateBudget, default_state_bytes
from .zsets import WEIGHT, consolidate_arrow

_ARROW = {
    "bigint": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    # lists travel as canonical JSON text (types.encode_list): Arrow's group_by, sort and
    # hash join, and Spark's grouping, all work on it and compare lists by value
    **{t: pa.string() for t in ARRAY_TYPES},
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
        **{t: T.StringType() for t in ARRAY_TYPES},
    }[name]


def spark_schema(schema: Schema, columns: list[str] | None = None, weight: bool = True):
    from pyspark.sql import types as T

    # in the order asked for (a group_by's order, which the key tables built from it keep)
    cols = list(schema.columns) if columns is None else [schema.column(name) for name in columns]
    fields = [T.StructField(c.name, _spark_type(c.type), True) for c in cols]
    if weight:
        fields.append(T.StructField(WEIGHT, T.LongType(), False))
    return T.StructType(fields)


#: where a node's tick ran, from the least work to the most: a node that took several
#: paths in one tick (a window admits rows in Python, then aggregates with Arrow) reports
#: the heaviest of them
PATHS = ("skipped", "row", "arrow", "spark")


class SparkRuntime(Runtime):
    def __init__(self, plan, session=None, driver_max_rows: int = 10_000, recent_max: int | None = None,
                 arrow_max_rows: int = 1_000_000, vector_min_rows: int = 1_000, state_bytes: int | None = None):
        self.spark = session or get_session()
        self._jobs = 0  # Spark actions this runtime started (lookups, materializations, spills): `jobs`
        #: changes up to this many rows are computed on the driver (see spark/incremental.py)
        self.driver_max_rows = driver_max_rows
        #: the bytes all traces together keep on the driver before the largest move to
        #: Spark (default: DBSPWEB_DRIVER_STATE_BYTES, else half of SPARK_DRIVER_MEMORY;
        #: see dbsp/spark/trace.py). A driver lookup is a binary search (well under a ms),
        #: a Spark lookup a job (tens of ms), so state stays on the driver while it fits.
        self.state_budget = StateBudget(default_state_bytes() if state_bytes is None else state_bytes)
        #: an explicit override: each trace keeps at most this many rows on the driver
        #: (tests use small ones to reach the Spark paths); None: the byte budget decides
        self.recent_max = recent_max
        #: changes up to this many rows use vectorized Arrow operators on the driver
        #: (joins against state rows fetched by key); larger ones run entirely on Spark
        self.arrow_max_rows = arrow_max_rows
        #: from this many rows on, an operator with a vectorised (Arrow) form uses it even
        #: below driver_max_rows: row-by-row Python is faster only for small changes
        self.vector_min_rows = vector_min_rows
        self._arrow_schemas: dict[Schema, pa.Schema] = {}
        self._paths: set[str] = set()  # where the node being evaluated ran (took())
        self._dag = None  # the JVM's DAGScheduler, whose job ids count Spark jobs exactly
        self._jobs_before: int | None = None  # its count before the node's first action
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

    def local_df(self, table: pa.Table, schema: Schema, partitions: int | None = None):
        """The table as a DataFrame: createDataFrame's Arrow path, one partition per
        `spark.sql.execution.arrow.maxRecordsPerBatch` rows (10k), or per
        rows/`partitions` rows when given (a table about to be shuffled: every map
        partition writes a block for every reduce partition, so a 6*10^7-row spill in
        10k-row partitions into 6,000 partitions reads 3.6*10^7 blocks)."""
        if partitions is None or table.num_rows <= partitions or not hasattr(self.spark, "_jsparkSession"):
            return self.spark.createDataFrame(table, schema=spark_schema(schema))
        conf = self.spark._jsparkSession.sessionState().conf()
        key = "spark.sql.execution.arrow.maxRecordsPerBatch"
        before = conf.getConfString(key, None)
        size = max(-(-table.num_rows // partitions), int(before or 10_000))
        # one chunk per `size` rows (createDataFrame cuts batches at chunk boundaries too,
        # and a consolidated table comes in many small chunks)
        table = pa.Table.from_batches([b for start in range(0, table.num_rows, size)
                                       for b in table.slice(start, size).combine_chunks().to_batches()], table.schema)
        conf.setConfString(key, str(size))
        try:
            return self.spark.createDataFrame(table, schema=spark_schema(schema))
        finally:
            if before is None:
                conf.unsetConf(key)
            else:
                conf.setConfString(key, before)

    def to_zset_table(self, table: pa.Table, schema: Schema) -> ZSet:
        columns = [table[c.name].to_pylist() for c in schema.columns]
        for i, c in enumerate(schema.columns):
            if c.type in ARRAY_TYPES:
                columns[i] = [decode_list(v) for v in columns[i]]
        return ZSet.of_columns(list(zip(*columns)) if columns else [()] * table.num_rows, table[WEIGHT].to_pylist())

    def to_zset(self, batch) -> ZSet:
        return ZSet() if batch is None else self.to_zset_table(batch.table(), batch.schema)

    def to_table(self, z: ZSet, schema: Schema) -> pa.Table:
        target = self.arrow_schema(schema)
        items = list(z)
        rows = [row for row, _ in items]
        lists = {i for i, c in enumerate(schema.columns) if c.type in ARRAY_TYPES}
        columns = [pa.array([encode_list(r[i]) for r in rows] if i in lists else [r[i] for r in rows], field.type)
                   for i, field in enumerate(target) if field.name != WEIGHT]
        return pa.Table.from_arrays([*columns, pa.array([w for _, w in items], pa.int64())], schema=target)

    def empty_table(self, schema: Schema) -> pa.Table:
        return self.arrow_schema(schema).empty_table()

    def empty(self, schema: Schema):
        return self.local_df(self.arrow_schema(schema).empty_table(), schema)

    def close(self) -> None:
        """Unpersist every trace's cached Spark levels, wherever an executor keeps one
        (inside fixed points' per-iteration executors, windows' inner aggregates, ...)."""
        from .trace import Trace

        seen: set[int] = set()

        def walk(obj, depth=0):
            if id(obj) in seen or depth > 6 or obj is self:
                return
            seen.add(id(obj))
            if isinstance(obj, Trace):
                obj.release()
                return
            if isinstance(obj, dict):
                values = obj.values()
            elif isinstance(obj, (list, tuple)):
                values = obj
            else:
                values = getattr(obj, "__dict__", {}).values()
            for value in values:
                if isinstance(value, (Trace, dict, list, tuple)) or type(value).__module__.startswith("dbsp."):
                    walk(value, depth + 1)

        for executor in self.executors.values():
            walk(executor)

    # ---- where a node's tick ran, and its Spark jobs -----------------------------------
    def took(self, path: str) -> None:
        """An executor says where this tick's work ran: "row" (Python on the driver),
        "arrow" (vectorised on the driver) or "spark"."""
        self._paths.add(path)

    def spark_jobs_started(self) -> int:
        """Spark jobs the session's context has started so far (its next job id; for
        Spark Connect, which has no context here, the actions this runtime counted)."""
        if self._dag is None:
            try:
                self._dag = self.spark.sparkContext._jsc.sc().dagScheduler()
            except Exception:  # Spark Connect
                self._dag = False
        return self._dag.nextJobId() if self._dag else self.jobs

    @property
    def jobs(self) -> int:
        """Spark actions this runtime started. Every action of the backend counts itself
        here just before it runs (`ctx.jobs += 1`): the first in a node reads the JVM's
        job counter, and the node's end reads it again, so a node's `spark_jobs` are the
        Spark jobs its actions ran (one action may run several: adaptive execution's
        stages, a checkpoint), and a node without an action costs nothing to count."""
        return self._jobs

    @jobs.setter
    def jobs(self, value: int) -> None:
        if self._jobs_before is None:
            self._jobs_before = self.spark_jobs_started()
        self._jobs = value

    def node_started(self, node_id):
        self._paths = set()
        self._jobs_before = None

    def node_finished(self, node_id, stats):
        jobs = 0
        if self._jobs_before is not None:
            jobs, self._jobs_before = self.spark_jobs_started() - self._jobs_before, None
        stats["spark_jobs"] = stats.get("spark_jobs", 0) + jobs
        if self._paths:
            path = max(self._paths, key=PATHS.index)
        elif jobs:
            path = "spark"
        else:
            path = "row" if stats.get("rows_in") or stats.get("rows_out") else "skipped"
        if PATHS.index(path) > PATHS.index(stats.get("path", "skipped")):
            stats["path"] = path
        else:
            stats.setdefault("path", path)

    # ---- Runtime hooks ---------------------------------------------------------------
    def make_executor(self, node_id):
        op, schema = self.plan.operators[node_id], self.plan.schemas[node_id]
        if op.kind == "fixedpoint":
            from .fixedpoint import FixedPointRecompute, node_executor

            return FixedPointRecompute(self, op, schema) if self.plan.literal else node_executor(self, op, schema)
        if op.stream:
            return PRIMITIVES[op.kind](self, op, schema)
        if executor := ordered_executor(self, op, schema, self.plan.literal):  # windows, keyed tables
            return executor
        if not self.plan.literal and op.kind in INCREMENTAL:
            return INCREMENTAL[op.kind](self, op, schema)
        return Lifted(self, op, schema)

    def from_zset(self, node_id, z):
        """A change as a ZSet, or (bulk loads) an Arrow table of the columns + `__w`."""
        schema = self.plan.schemas[node_id]
        self.took("arrow" if isinstance(z, pa.Table) else "row")
        if isinstance(z, pa.Table):
            return Batch.of_table(self, schema, consolidate_arrow(z.select(schema.names + [WEIGHT]).cast(self.arrow_schema(schema))))
        return Batch.of_table(self, schema, self.to_table(z, schema))

    def collect(self, value) -> ZSet:
        return self.to_zset(value)

    def size(self, value) -> int | None:
        return 0 if value is None else value.rows

    def nbytes(self, value) -> int | None:
        """A change on the driver: its Arrow table's bytes (None: a frame in Spark)."""
        return 0 if value is None else (value.table().nbytes if value.rows is not None else None)

    def rows_out(self, value) -> int:
        return 0 if value is None else value.table().num_rows

    def rows_json(self, value, schema):
        if value is None:
            return []
        names = schema.names
        temporal = [c.name for c in schema.columns if c.type in ("date", "timestamp")]
        lists = [c.name for c in schema.columns if c.type in ARRAY_TYPES]
        rows = []
        for r in value.table().to_pylist():
            data = {n: r[n] for n in names}
            for n in temporal:
                if data[n] is not None:
                    data[n] = data[n].isoformat()
            for n in lists:
                if data[n] is not None:
                    data[n] = list(decode_list(data[n]))
            rows.append({"data": data, "weight": r[WEIGHT]})
        return rows

    def state_rows(self, node_id) -> int:
        return self.executors[node_id].state_rows()
