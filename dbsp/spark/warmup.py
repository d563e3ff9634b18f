"""Warm a process's Spark paths before its first run.

A JVM compiles the code it runs often (the JIT) only after running it a while, so the
first ticks of a process that look up state held in Spark cost more than the later
ones: measured at 10^6 rows of join state in Spark, the first 20 ticks of a new process
took 2x the next 20, while the first 20 ticks of a second, identical load in the same
process were as fast as its last 20 (bench/README.md, section (d)). A worker runs this
once, in a background thread right after it reports ready (workers/tasks.py), so a
run's first ticks are as fast as its later ones.

What it runs is the engine's own path, not a stand-in: a small circuit (a join, then
distinct) loaded in two steps whose state goes to Spark levels (it is over
`recent_max`; the second step looks its many keys up in the first's levels), then
stepped tick by tick with a few rows on both join sides, which stay on the driver: so
each tick looks up every trace's levels partition by partition, one Spark job per
trace (`trace.run_on_partitions`), as a tick over state held in Spark does.
"""
from __future__ import annotations

import time

import numpy as np
import pyarrow as pa

#: ticks of lookups into Spark levels (the first 20 of a cold process are the slow ones)
TICKS = 40
#: rows loaded into each join side before the ticks, in two steps. Big enough to warm the
#: load's own paths (spills, level merges, bulk lookups: scan.py), which a first real load
#: would otherwise warm, slowing the ticks after it: measured (bench/README.md, (d)),
#: after a 2,000-row warm-up the first 20 ticks after a 10^6-row load took ~41 ms against
#: ~29 ms later; after a 200,000-row one, 23-26 ms from the first tick.
LOAD_ROWS = 200_000


def _schema(*cols: str) -> list[dict]:
    return [{"name": n, "type": t} for n, t in (c.split(":") for c in cols)]


def circuit() -> dict:
    """a ⋈ b on k, then distinct (three traces: both join sides by k, distinct's by all)."""
    return {"nodes": [
        {"id": "a", "kind": "input", "params": {"schema": _schema("k:bigint", "v:bigint")}},
        {"id": "b", "kind": "input", "params": {"schema": _schema("k:bigint", "w:bigint")}},
        {"id": "j", "kind": "join", "params": {"left_keys": ["k"], "right_keys": ["k"]}},
        {"id": "d", "kind": "distinct", "params": {}},
        {"id": "out", "kind": "output", "params": {}},
    ], "edges": [
        {"from": {"node": "a", "port": "out"}, "to": {"node": "j", "port": "left"}},
        {"from": {"node": "b", "port": "out"}, "to": {"node": "j", "port": "right"}},
        {"from": {"node": "j", "port": "out"}, "to": {"node": "d", "port": "in"}},
        {"from": {"node": "d", "port": "out"}, "to": {"node": "out", "port": "in"}},
    ]}


def _rows(start: int, n: int, keys: int, second: str) -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"k": ids % keys, second: ids, "__w": np.ones(n, np.int64)})


def warm_up(spark, ticks: int = TICKS, load_rows: int | None = None) -> dict:
    """Run the small circuit on `spark`: a load of `load_rows` (LOAD_ROWS) rows a side,
    then `ticks` ticks of a few rows on each side. Returns what ran ({"ticks", "jobs",
    "seconds"}); nothing is kept (the runtime's levels are released)."""
    load = load_rows or LOAD_ROWS
    from ..plan import compile_plan
    from .backend import SparkRuntime

    t0 = time.perf_counter()
    rt = SparkRuntime(compile_plan(circuit()), spark, recent_max=load // 4)
    try:
        keys = load // 4
        half = load // 2  # two load steps: the second looks its many keys up in the first's levels (scan.py)
        rt.step({"a": _rows(0, half, keys, "v"), "b": _rows(0, half, keys, "w")})
        rt.step({"a": _rows(half, half, keys, "v"), "b": _rows(half, half, keys, "w")})
        for t in range(ticks):
            start = load + 3 * t
            rt.step({"a": _rows(start, 3, keys, "v"), "b": _rows(start, 3, keys, "w")})
        jobs = rt.jobs
    finally:
        rt.close()
    return {"ticks": ticks, "jobs": jobs, "seconds": round(time.perf_counter() - t0, 2)}
