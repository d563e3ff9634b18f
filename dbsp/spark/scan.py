"""A lookup of many keys in a trace's Spark levels, run where the levels are.

A bulk change (a load tick of distinct, a join side changing many keys) looks up
thousands of keys, which touch every partition of every level, so partition pruning
(trace.py) cannot help. Spark's own way, a semi-join of the level with the keys,
shuffles the whole level on every such tick. Here each level's kept Arrow batches
(converted when the level was made; trace.py) are read by Python tasks on the
executors instead, a few tasks per level (partitions coalesced, no shuffle), the keys
broadcast to them, one NULL-safe semi-join per task in Arrow; only the rows found come
back to the driver.

Measured on one 2.76·10^6-row distinct level, 10^6 keys, both returning the same
189,109 rows: 0.62 s against 7.0 s for the shuffled semi-join (the first call in a
process also starts Spark's Python workers: 6 s).

The task code is a closure (pickled by value): the executors need pyarrow, nothing of
this project.
"""
from __future__ import annotations

import math

import pyarrow as pa

from .zsets import fill_value, join_codes, with_join_codes

#: the rows one task scans: a level's partitions are coalesced into tasks of about this many
ROWS_PER_TASK = 1_000_000


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def scan_levels(spark, levels, keys: pa.Table, columns: list[str], target: pa.Schema) -> pa.Table:
    """The rows of the levels whose `columns` equal (NULL-safe) a row of `keys`, as
    `target`. `levels`: [(a level's Arrow batches as a JavaRDD, Dataset.toArrowBatchRdd;
    its row count)]. One Spark job."""
    from pyspark.rdd import RDD
    from pyspark.serializers import NoOpSerializer

    sc = spark.sparkContext
    codes = join_codes(columns)
    key_codes = _ipc(with_join_codes(keys.select(columns), columns).select(codes))
    # each key column's NULL filler, typed as the level's column (with_join_codes' own)
    fills = _ipc(pa.table({c: pa.array([fill_value(target.field(c).type).as_py()], target.field(c).type) for c in columns}))
    schema = target.serialize().to_pybytes()
    broadcast = sc.broadcast(key_codes)

    def semi(blobs):  # on an executor: a task's batches -> the rows found, as Arrow IPC
        # (self-contained: with_join_codes' and _ipc's few lines are repeated here, because a
        # module function it called would be pickled by reference, needing dbsp on executors)
        import pyarrow as pa
        import pyarrow.compute as pc

        level_schema = pa.ipc.read_schema(pa.py_buffer(schema))
        batches = [pa.ipc.read_record_batch(pa.py_buffer(b), level_schema) for b in blobs]
        if not batches:
            return
        table = pa.Table.from_batches(batches, level_schema)
        filler = pa.ipc.open_stream(fills).read_all()
        coded = table
        for i, c in enumerate(columns):
            coded = coded.append_column(f"__k{i}", pc.fill_null(table[c], filler[c][0]))
        for i, c in enumerate(columns):
            coded = coded.append_column(f"__null{i}", pc.is_null(table[c]))
        wanted = pa.ipc.open_stream(broadcast.value).read_all()
        found = coded.join(wanted, keys=codes, join_type="left semi", use_threads=False).select(level_schema.names)
        if found.num_rows:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, found.schema) as writer:
                writer.write_table(found)
            yield sink.getvalue().to_pybytes()

    try:
        rdds = []
        for batches, rows in levels:
            rdd = RDD(batches, sc, NoOpSerializer())
            tasks = max(math.ceil(rows / ROWS_PER_TASK), sc.defaultParallelism)  # (at least one per core)
            rdds.append(rdd.coalesce(min(tasks, rdd.getNumPartitions())))
        blobs = (sc.union(rdds) if len(rdds) > 1 else rdds[0]).mapPartitions(lambda it: semi(list(it))).collect()
    finally:
        broadcast.destroy()
    tables = [pa.ipc.open_stream(b).read_all() for b in blobs]
    return pa.concat_tables(tables).cast(target) if tables else target.empty_table()
