"""Tick latency of the foundation slice (input -> filter -> output) on Spark local mode,
in the default (hybrid) mode and with everything forced onto Spark, against the floor:
one trivial Spark job (a 10-row DataFrame from Arrow, collected with toArrow).

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
    counter = iter(range(10**9))
    hybrid = SparkRuntime(plan, spark)
    all_spark = SparkRuntime(plan, spark, driver_max_rows=0, arrow_max_rows=0, recent_max=0)

    def tick(rt):
        base = next(counter) * args.rows
        records = [{"insert": {"id": base + i, "customer": f"c{i}", "amount": 50 + 20 * i}} for i in range(args.rows)]
        rt.step({"orders": changes_from_records(records, schema)})

    table = pa.table({"x": list(range(args.rows))})

    def floor():
        spark.createDataFrame(table).toArrow()

    for _ in range(5):  # warm up the JVM paths of all three
        tick(hybrid)
        tick(all_spark)
        floor()
    floor_ms = median_ms(floor, args.ticks)
    hybrid_ms = median_ms(lambda: tick(hybrid), args.ticks)
    spark_ms = median_ms(lambda: tick(all_spark), args.ticks)
    empty_ms = median_ms(lambda: all_spark.step({}), args.ticks)
    print(json.dumps({
        "spark_startup_s": round(startup, 2),
        "rows_per_tick": args.rows,
        "floor_ms_median": round(floor_ms, 1),
        "hybrid_tick_ms_median": round(hybrid_ms, 2),
        "all_spark_tick_ms_median": round(spark_ms, 1),
        "all_spark_tick_over_floor": round(spark_ms / floor_ms, 2),
        "empty_tick_ms_median": round(empty_ms, 3),
    }, indent=2))


if __name__ == "__main__":
    main()
