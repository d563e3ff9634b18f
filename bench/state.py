"""Large join and distinct state, tick by tick (issue 18), measured as ratios in one run.

(a) join:     orders(id, customer, amount) ⋈ customers(customer, region), then
              sum(amount) by region. N orders over N/100 customers in 10 regions.
(b) distinct: events(k, v) with duplicates → distinct → count(*), sum(k).
              N rows of state (about 0.9N distinct rows).

For each kind and size N: the state is loaded in `--load-batch`-row ticks (the load
rate: rows/s); then 10-row ticks run while the load's last spills and level merges
finish in the background (settle_ticks, settle_s, their median: a compaction after a
load, timed apart), then `--ticks` ticks of 10 rows each are run:
  join:     8 new orders + one customer moving region (−old, +new: 2 rows), so both
            traces are looked up every tick (the orders trace by customer);
  distinct: 6 duplicates of existing rows, 2 new rows, 2 deletions of existing rows.
Reported: the 10-row tick's median over all ticks, over the first 20 and the last 20
(flat over time: last/first), Spark jobs per tick, the floor (one trivial 10-row
createDataFrame().toArrow() job, as bench/transactions.py, before and after), the
worker's peak RSS, the JVM heap used after a full GC (System.gc() through py4j), the
state's Arrow size (the loaded rows as Arrow), and where the state sits (driver rows /
Spark levels). Every run ends with a cross-check: the incremental result (its output
deltas integrated over the load and every tick) must equal a pandas recomputation
from every row pushed, or the bench stops.

Run: SPARK_DRIVER_MEMORY=12g .venv/bin/python -m bench.state --sizes 100000 1000000 10000000 --ticks 200
     [--kinds join distinct] [--recent-max 1000]  (a row count: forces the state into Spark)
     [--state-bytes N]  (the driver budget, DBSPWEB_DRIVER_STATE_BYTES)
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import pandas as pd
import pyarrow as pa

from dbsp import compile_plan
from dbsp.spark import SparkRuntime, get_session
from dbsp.spark.warmup import warm_up

REGIONS = 10
BASELINE_HEAP_MB = 0  # the idle JVM's heap after GC (set by main)


#: the longest the bench runs ticks after a load, waiting for its background level jobs
SETTLE_MAX_S = 900


def _schema(*cols):
    return [{"name": n, "type": t} for n, t in (c.split(":") for c in cols)]


def join_circuit() -> dict:
    return {"nodes": [
        {"id": "orders", "kind": "input", "params": {"schema": _schema("id:bigint", "customer:bigint", "amount:bigint")}},
        {"id": "customers", "kind": "input", "params": {"schema": _schema("customer:bigint", "region:bigint")}},
        {"id": "j", "kind": "join", "params": {"left_keys": ["customer"], "right_keys": ["customer"]}},
        {"id": "by_region", "kind": "aggregate",
         "params": {"group_by": ["region"], "aggregates": [{"fn": "sum", "expr": "amount", "as": "total"}]}},
        {"id": "totals", "kind": "output", "params": {}},
    ], "edges": [
        {"from": {"node": "orders", "port": "out"}, "to": {"node": "j", "port": "left"}},
        {"from": {"node": "customers", "port": "out"}, "to": {"node": "j", "port": "right"}},
        {"from": {"node": "j", "port": "out"}, "to": {"node": "by_region", "port": "in"}},
        {"from": {"node": "by_region", "port": "out"}, "to": {"node": "totals", "port": "in"}},
    ]}


def distinct_circuit() -> dict:
    return {"nodes": [
        {"id": "events", "kind": "input", "params": {"schema": _schema("k:bigint", "v:bigint")}},
        {"id": "d", "kind": "distinct", "params": {}},
        {"id": "stats", "kind": "aggregate", "params": {"group_by": [], "aggregates": [
            {"fn": "count", "as": "n"}, {"fn": "sum", "expr": "k", "as": "sum_k"}]}},
        {"id": "summary", "kind": "output", "params": {}},
    ], "edges": [
        {"from": {"node": "events", "port": "out"}, "to": {"node": "d", "port": "in"}},
        {"from": {"node": "d", "port": "out"}, "to": {"node": "stats", "port": "in"}},
        {"from": {"node": "stats", "port": "out"}, "to": {"node": "summary", "port": "in"}},
    ]}


def _table(columns: dict, weights=None) -> pa.Table:
    n = len(next(iter(columns.values())))
    data = {k: pa.array(np.array(v, dtype=np.int64)) for k, v in columns.items()}  # a copy: the region array changes later
    data["__w"] = pa.array(np.ones(n, np.int64) if weights is None else np.asarray(weights, np.int64))
    return pa.table(data)


class JoinWorkload:
    name, view = "join", "totals"

    def __init__(self, size: int, rng: np.random.Generator):
        self.size, self.rng = size, rng
        self.customers = max(size // 100, 10)
        self.region = rng.integers(0, REGIONS, self.customers)  # the current region of each customer
        self.next_id = 0
        self.pushed: dict[str, list[pa.Table]] = {"orders": [], "customers": []}

    def _orders(self, n):
        ids = np.arange(self.next_id, self.next_id + n)
        self.next_id += n
        return _table({"id": ids, "customer": self.rng.integers(0, self.customers, n), "amount": self.rng.integers(1, 1000, n)})

    def load_changes(self, batch):
        yield {"customers": _table({"customer": np.arange(self.customers), "region": self.region})}
        for start in range(0, self.size, batch):
            yield {"orders": self._orders(min(batch, self.size - start))}

    def tick(self):
        c = int(self.rng.integers(0, self.customers))
        old, new = int(self.region[c]), int((self.region[c] + 1 + self.rng.integers(0, REGIONS - 1)) % REGIONS)
        self.region[c] = new
        return {"orders": self._orders(8), "customers": _table({"customer": [c, c], "region": [old, new]}, [-1, 1])}

    def record(self, change):
        for name, t in change.items():
            self.pushed[name].append(t)

    def state_arrow_bytes(self):
        return sum(t.nbytes for ts in self.pushed.values() for t in ts)

    def expected(self) -> dict:
        orders = pa.concat_tables(self.pushed["orders"]).to_pandas()
        customers = pa.concat_tables(self.pushed["customers"]).to_pandas()
        customers = customers.groupby(["customer", "region"], as_index=False)["__w"].sum()
        customers = customers[customers["__w"] != 0]
        joined = orders.merge(customers, on="customer", suffixes=("_o", "_c"))
        joined["amount_w"] = joined["amount"] * joined["__w_o"] * joined["__w_c"]
        sums = joined.groupby("region")["amount_w"].sum()
        return {(int(r),): int(s) for r, s in sums.items()}

    @staticmethod
    def fold(view_rows: dict) -> dict:
        """The integrated view (region -> total) from its rows with weight 1."""
        return {(k[0],): k[1] for k, w in view_rows.items() if w == 1}


class DistinctWorkload:
    name, view = "distinct", "summary"

    def __init__(self, size: int, rng: np.random.Generator):
        self.size, self.rng = size, rng
        self.keys = max(size // 2, 10)  # k in [0, N/2), v in [0, 4): about 0.9N distinct rows at N
        self.pushed: list[pa.Table] = []

    def load_changes(self, batch):
        for start in range(0, self.size, batch):
            n = min(batch, self.size - start)
            yield {"events": _table({"k": self.rng.integers(0, self.keys, n), "v": self.rng.integers(0, 4, n)})}

    def tick(self):
        # duplicates of (probably) present rows, new rows, and deletions of rows pushed before
        old = pa.concat_tables(self.pushed[-3:]) if self.pushed else None
        pick = self.rng.integers(0, old.num_rows, 8)
        dup = old.take(pick)
        dup = dup.filter(pa.compute.greater(dup["__w"], 0))
        k = np.concatenate([dup["k"].to_numpy()[:8], self.keys + self.rng.integers(0, self.keys, 10)])[:10]
        v = np.concatenate([dup["v"].to_numpy()[:8], self.rng.integers(0, 4, 10)])[:10]
        w = np.ones(10, np.int64)
        w[6:8] = -1  # two of the duplicates become deletions of a row pushed before
        return {"events": _table({"k": k, "v": v}, w)}

    def record(self, change):
        self.pushed.append(change["events"])

    def state_arrow_bytes(self):
        return sum(t.nbytes for t in self.pushed)

    def expected(self) -> dict:
        # in NumPy, column by column (pandas' groupby over 10^8 rows took the bench past
        # 24 GB with the JVM's heap beside it): each (k, v) as one code, v in [0, 4)
        k = np.concatenate([t["k"].to_numpy() for t in self.pushed])
        code = k * 4
        del k
        code += np.concatenate([t["v"].to_numpy() for t in self.pushed])
        codes, at = np.unique(code, return_inverse=True)
        del code
        w = np.bincount(at, weights=np.concatenate([t["__w"].to_numpy() for t in self.pushed]), minlength=len(codes))
        present = codes[w > 0.5]  # (integer sums, exact in float64)
        return {(int(len(present)), int((present // 4).sum())): 1}

    @staticmethod
    def fold(view_rows: dict) -> dict:
        return {k: w for k, w in view_rows.items() if w != 0}


def median_ms(samples):
    return round(statistics.median(samples) * 1000, 2) if samples else None


def floor_ms(spark, repeats=15):
    table = pa.table({"x": pa.array(range(10), pa.int64())})
    for _ in range(3):
        spark.createDataFrame(table).toArrow()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        spark.createDataFrame(table).toArrow()
        samples.append(time.perf_counter() - t0)
    return median_ms(samples)


def jvm_heap_after_gc(spark) -> int:
    jvm = spark.sparkContext._jvm
    for _ in range(2):
        jvm.System.gc()
    runtime = jvm.java.lang.Runtime.getRuntime()
    return int(runtime.totalMemory() - runtime.freeMemory())


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def state_where(rt) -> dict:
    from dbsp.spark.trace import Trace

    driver = levels = level_rows = 0
    for ex in rt.executors.values():
        for value in vars(ex).values():
            if isinstance(value, Trace):
                driver += getattr(value, "driver_rows", value._recent_rows)()
                levels += len(value.levels)
                level_rows += sum(n for _, n in value.levels)
    return {"driver_rows": driver, "spark_levels": levels, "spark_level_rows": level_rows}


def busy(rt) -> bool:
    """Whether a level job (a spill or a merge) is running in the background for one of
    the run's traces."""
    from dbsp.spark.trace import Trace

    for ex in rt.executors.values():
        for value in vars(ex).values():
            if isinstance(value, Trace) and any(job is not None and not job.done()
                                                for job in (value._merging, value._spilling)):
                return True
    return False


def integrate(view_rows: dict, result, view: str) -> None:
    for r in result.outputs_json().get(view, []):
        key = tuple(r["data"].values())
        view_rows[key] = view_rows.get(key, 0) + r["weight"]


def run(spark, kind, size, ticks, batch, options, seed=18):
    rng = np.random.default_rng(seed + size)
    work = (JoinWorkload if kind == "join" else DistinctWorkload)(size, rng)
    plan = compile_plan(join_circuit() if kind == "join" else distinct_circuit())
    floor_before = floor_ms(spark)
    rt = SparkRuntime(plan, spark, **options)
    view_rows: dict = {}
    loaded, load_s, load_max = 0, 0.0, 0.0
    for change in work.load_changes(batch):
        t0 = time.perf_counter()
        result = rt.step(change)
        load_max = max(load_max, time.perf_counter() - t0)
        load_s += time.perf_counter() - t0
        loaded += sum(t.num_rows for t in change.values())
        work.record(change)
        integrate(view_rows, result, work.view)
    # the load's last spills and merges finish in the background while ticks go on:
    # those ticks are timed apart (cross-checked like the rest), then the timed ticks
    settle, settle_t0 = [], time.perf_counter()
    while busy(rt) and time.perf_counter() - settle_t0 < SETTLE_MAX_S:
        change = work.tick()
        t0 = time.perf_counter()
        result = rt.step(change)
        settle.append(time.perf_counter() - t0)
        work.record(change)
        integrate(view_rows, result, work.view)
    settle_s = time.perf_counter() - settle_t0
    samples, jobs, during_merge = [], [], []
    for _ in range(ticks):
        change = work.tick()
        j0 = rt.jobs
        during_merge.append(busy(rt))
        t0 = time.perf_counter()
        result = rt.step(change)
        samples.append(time.perf_counter() - t0)
        jobs.append(rt.jobs - j0)
        work.record(change)
        integrate(view_rows, result, work.view)
    floor_after = floor_ms(spark)
    got, want = work.fold(view_rows), work.expected()
    if got != want:
        raise AssertionError(f"cross-check failed ({kind}, {size}): incremental {sorted(got.items())[:12]}, "
                             f"recomputed {sorted(want.items())[:12]}")
    gc.collect()
    out = {
        "kind": kind, "state_rows": size, "ticks": ticks,
        "tick_ms": median_ms(samples), "first20_ms": median_ms(samples[:20]), "last20_ms": median_ms(samples[-20:]),
        "last_over_first": round(statistics.median(samples[-20:]) / statistics.median(samples[:20]), 2),
        "tick_max_ms": round(max(samples) * 1000, 1),
        "first20_each_ms": [round(t * 1000, 1) for t in samples[:20]],  # (where a warm-up shows, if any)
        # after the load: the ticks that ran while its last spills and merges finished in
        # the background (how many, how long in all, their median and max)
        "settle_ticks": len(settle), "settle_s": round(settle_s, 1),
        "settle_tick_ms": median_ms(settle) if settle else None,
        "settle_tick_max_ms": round(max(settle) * 1000, 1) if settle else None,
        # timed ticks that ran beside a level job all the same (a merge started by a timed tick)
        "ticks_during_merge": sum(during_merge),
        "jobs_per_tick": statistics.median(jobs), "floor_ms": round((floor_before + floor_after) / 2, 1),
        "load_rows_per_s": round(loaded / load_s), "load_s": round(load_s, 2),
        "load_tick_max_s": round(load_max, 2),  # (a spill, or a level merge when it runs in the tick)
        "peak_rss_mb": round(peak_rss() / 2**20), "jvm_heap_after_gc_mb": round(jvm_heap_after_gc(spark) / 2**20),
        "state_arrow_mb": round(work.state_arrow_bytes() / 2**20, 1),
        **state_where(rt), "checked": True,
    }
    out["tick_over_floor"] = round(out["tick_ms"] / out["floor_ms"], 2)
    # the heap the state adds (over the idle JVM's, measured at the start of the run) per Arrow byte
    out["heap_over_arrow"] = round(max(out["jvm_heap_after_gc_mb"] - BASELINE_HEAP_MB, 0) / max(out["state_arrow_mb"], 1), 2)
    rt.close()
    del rt, work, view_rows
    gc.collect()
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--kinds", nargs="+", default=["join", "distinct"], choices=["join", "distinct"])
    p.add_argument("--ticks", type=int, default=200)
    p.add_argument("--load-batch", type=int, default=1_000_000)
    p.add_argument("--recent-max", type=int, default=None, help="a trace's driver rows (forces state into Spark)")
    p.add_argument("--state-bytes", type=int, default=None, help="the driver state budget in bytes")
    args = p.parse_args(argv)
    spark = get_session()
    global BASELINE_HEAP_MB
    BASELINE_HEAP_MB = round(jvm_heap_after_gc(spark) / 2**20)
    options = {}
    if args.recent_max is not None:
        options["recent_max"] = args.recent_max
    if args.state_bytes is not None:
        options["state_bytes"] = args.state_bytes
    # warm up Arrow kernels and Spark code paths once per process: a worker's own warm-up
    # (lookups into Spark-held state, as a worker runs when it starts), then each kind small
    warm_up(spark)
    for kind in args.kinds:
        run(spark, kind, 20_000, 30, 10_000, options)
    rows = []
    for kind in args.kinds:
        for size in args.sizes:
            out = run(spark, kind, size, args.ticks, args.load_batch, options)
            out["load_average"] = os.getloadavg()[0]
            print(json.dumps(out), flush=True)
            rows.append(out)
    print(f"\n| kind | state rows | tick ms (all) | first 20 | last 20 | last/first | jobs/tick | floor ms | tick/floor "
          f"| load rows/s | peak RSS MB | JVM heap after GC MB (idle: {BASELINE_HEAP_MB}) | state Arrow MB | heap/Arrow | driver rows | Spark levels | load avg |")
    print("|" + "---|" * 17)
    for r in rows:
        print(f"| {r['kind']} | {r['state_rows']:,} | {r['tick_ms']} | {r['first20_ms']} | {r['last20_ms']} | "
              f"{r['last_over_first']} | {r['jobs_per_tick']} | {r['floor_ms']} | {r['tick_over_floor']} | "
              f"{r['load_rows_per_s']:,} | {r['peak_rss_mb']:,} | {r['jvm_heap_after_gc_mb']:,} | {r['state_arrow_mb']} | "
              f"{r['heap_over_arrow']} | {r['driver_rows']:,} | {r['spark_levels']} | {r['load_average']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
