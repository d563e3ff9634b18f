"""Tick latency of the foundation slice (input -> filter -> output) on Spark local mode,
against the floor: one trivial Spark job (10-row DataFrame from Arrow + collect).

Run: .venv/bin/python -m bench.slice_tick [--ticks 30] [--rows 10]
Prints medians and the ratio; both measured in this one run (the machine is noisy).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import pyarrow as pa

from dbsp import compile_plan
from dbsp.runtime import changes_from_records
from dbsp.spark import SparkRuntime, get_session

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "circuits" / "big_orders.json"


def median_ms(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ticks", type=int, default=30)
    parser.add_argument("--rows", type=int, default=10)
    args = parser.parse_args()

    t0 = time.perf_counter()
    spark = get_session()
    startup = time.perf_counter() - t0
    plan = compile_plan(json.loads(EXAMPLE.read_text()))
    schema = plan.inputs["orders"]
    rt = SparkRuntime(plan, spark)
    counter = iter(range(10**9))

    def tick():
        base = next(counter) * args.rows
        records = [{"insert": {"id": base + i, "customer": f"c{i}", "amount": 50 + 20 * i}} for i in range(args.rows)]
        rt.step({"orders": changes_from_records(records, schema)})

    table = pa.table({"x": list(range(args.rows))})

    def floor():
        spark.createDataFrame(table).collect()

    for _ in range(5):  # warm up the JVM paths of both
        tick()
        floor()
    floor_ms = median_ms(floor, args.ticks)
    tick_ms = median_ms(tick, args.ticks)
    empty_ms = median_ms(lambda: rt.step({}), args.ticks)
    print(json.dumps({
        "spark_startup_s": round(startup, 2),
        "rows_per_tick": args.rows,
        "floor_ms_median": round(floor_ms, 1),
        "tick_ms_median": round(tick_ms, 1),
        "tick_over_floor": round(tick_ms / floor_ms, 2),
        "empty_tick_ms_median": round(empty_ms, 3),
    }, indent=2))


if __name__ == "__main__":
    main()
