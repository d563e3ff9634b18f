"""Benchmark: windows over event time (examples/circuits/sensor_windows.json: a 1-minute
tumbling average per sensor and sessions with a 2-minute gap).

(1) State of N rows: N readings (N/100 sensors, one reading per sensor per second, so
    each sensor's readings form one open session) are loaded in 10^5-row ticks with the
    lateness set so that nothing closes (1000 days): the sessions keep all N rows.
    Then 10-row ticks (10 sensors, the next second): median tick latency of the
    incremental engine, against recomputing both windowed aggregates over the whole
    table on Spark (cached) and against the floor (one trivial Spark job).
(2) Garbage collection: the example's own lateness (30 s); 10 sensors send one reading
    per second for 60 s then pause 3 minutes, tick after tick; the state (per-window
    accumulators + open sessions' rows) is printed as the rows pushed grow.

Run: .venv/bin/python -m bench.windows --sizes 10000 100000 1000000 --ticks 20 --gc-ticks 2000
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import random
import statistics
from pathlib import Path

import pyarrow as pa

from bench.transactions import floor_ms, median_ms, timed
from dbsp import compile_plan
from dbsp.spark import SparkRuntime, get_session

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "circuits" / "sensor_windows.json"
T0 = dt.datetime(2026, 11, 21)


def document(lateness: str) -> dict:
    doc = copy.deepcopy(json.loads(EXAMPLE.read_text()))
    for node in doc["nodes"]:
        if node["kind"].endswith("_window"):
            node["params"]["lateness"] = lateness
    return doc


def readings(sensors: list[int], seconds: list[int], rnd: random.Random) -> pa.Table:
    return pa.table({
        "sensor": pa.array([f"s{s}" for s in sensors], pa.string()),
        "ts": pa.array([T0 + dt.timedelta(seconds=t) for t in seconds], pa.timestamp("us")),
        "value": pa.array([rnd.uniform(10, 30) for _ in sensors], pa.float64()),
        "__w": pa.array([1] * len(sensors), pa.int64()),
    })


def load(rt, size, sensors, batch, rnd):
    """size readings: second t of every sensor, t = 0, 1, ...; returns the next second."""
    per_sensor = size // sensors
    loaded, t, load_s = 0, 0, 0.0
    while loaded < size:
        n_seconds = max(1, min(batch, size - loaded) // sensors)
        secs = [t + i for i in range(n_seconds) for _ in range(sensors)]
        ids = [s for _ in range(n_seconds) for s in range(sensors)]
        chunk = readings(ids, secs, rnd)
        load_s += timed(lambda: rt.step({"readings": chunk}))
        loaded += chunk.num_rows
        t += n_seconds
    assert t >= per_sensor
    return t, load_s


def run_state(spark, plan, size, ticks, batch):
    rnd = random.Random(size)
    sensors = max(size // 100, 10)
    rt = SparkRuntime(plan, spark)
    t, load_s = load(rt, size, sensors, batch, rnd)
    samples, jobs = [], []
    for i in range(ticks):
        chunk = readings([rnd.randrange(sensors) for _ in range(10)], [t + i] * 10, rnd)
        j0 = rt.jobs
        samples.append(timed(lambda: rt.step({"readings": chunk})))
        jobs.append(rt.jobs - j0)
    state = {n: rt.executors[n].state_rows() for n in ("per_minute", "sessions")}
    warm = samples[3:] if len(samples) > 6 else samples
    return {"tick_ms": median_ms(warm), "tick_jobs": statistics.median(jobs), "load_rows_per_s": round(size / load_s),
            "state": state, "sensors": sensors, "next_second": t + ticks}


def run_recompute(spark, plan, size, repeats=5):
    """Both windowed aggregates over the whole (cached) table + 10 rows, on Spark."""
    rnd = random.Random(size)
    sensors = max(size // 100, 10)
    per = size // sensors
    table = readings([s for _ in range(per) for s in range(sensors)], [t for t in range(per) for _ in range(sensors)], rnd)
    state = spark.createDataFrame(table, schema="sensor string, ts timestamp_ntz, value double, __w long").cache()
    state.count()
    ops = [plan.operators["per_minute"], plan.operators["sessions"]]

    def query():
        extra = spark.createDataFrame(readings([rnd.randrange(sensors) for _ in range(10)], [per] * 10, rnd),
                                      schema="sensor string, ts timestamp_ntz, value double, __w long")
        whole = state.unionByName(extra)
        for op in ops:
            op.spark(None, {"in": whole}).toArrow()

    query()
    result = median_ms([timed(query) for _ in range(repeats)])
    state.unpersist()
    return result


def run_gc(spark, plan, ticks, every):
    """10 sensors, one reading each per second for 60 s, then a 3-minute pause."""
    rnd = random.Random(7)
    rt = SparkRuntime(plan, spark)
    out, samples = [], []
    for i in range(ticks):
        second = i + (i // 60) * 180
        chunk = readings(list(range(10)), [second] * 10, rnd)
        samples.append(timed(lambda: rt.step({"readings": chunk})))
        if (i + 1) % every == 0:
            out.append({"tick": i + 1, "rows_pushed": (i + 1) * 10,
                        "per_minute_state": rt.executors["per_minute"].state_rows(),
                        "sessions_state": rt.executors["sessions"].state_rows(),
                        "tick_ms_median": median_ms(samples[-every:])})
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--batch", type=int, default=100_000)
    parser.add_argument("--gc-ticks", type=int, default=2000)
    parser.add_argument("--no-recompute", action="store_true")
    args = parser.parse_args()
    spark = get_session()
    keep_all = compile_plan(document("1000 days"))
    rows = []
    for size in args.sizes:
        result = {"state_rows": size, "floor_ms": floor_ms(spark)}
        result |= run_state(spark, keep_all, size, args.ticks, args.batch)
        result["recompute_ms"] = None if args.no_recompute else run_recompute(spark, keep_all, size)
        result["floor_ms_after"] = floor_ms(spark)
        print(json.dumps(result), flush=True)
        rows.append(result)
    print("\n| readings in state | sensors | floor ms | tick ms | tick/floor | Spark jobs/tick | recompute ms | recompute/tick | load rows/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        floor = (r["floor_ms"] + r["floor_ms_after"]) / 2
        speedup = f"{r['recompute_ms'] / r['tick_ms']:.0f}x" if r["recompute_ms"] else "-"
        print(f"| {r['state_rows']:,} | {r['sensors']:,} | {floor:.0f} | {r['tick_ms']} | {r['tick_ms'] / floor:.2f} | {r['tick_jobs']} | "
              f"{r['recompute_ms'] or '-'} | {speedup} | {r['load_rows_per_s']:,} |")
    if args.gc_ticks:
        gc = run_gc(spark, compile_plan(document("30 seconds")), args.gc_ticks, max(args.gc_ticks // 10, 1))
        print("\n| ticks | rows pushed | per_minute state | sessions state | tick ms (median of the last span) |")
        print("|---|---|---|---|---|")
        for g in gc:
            print(f"| {g['tick']:,} | {g['rows_pushed']:,} | {g['per_minute_state']} | {g['sessions_state']} | {g['tick_ms_median']} |")


if __name__ == "__main__":
    main()
