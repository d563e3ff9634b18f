"""What recording the operator profile costs a small tick: each node's path and Spark
jobs (dbsp/spark/backend.py: node_started / node_finished, one read of the JVM's job
counter per tick). The transactions circuit over 10,000 rows, 10-row ticks, alternating
blocks of ticks with the recording on and off (the hooks replaced by the base class's
no-ops) in one process, so both see the same load.

Run: .venv/bin/python -m bench.profile_overhead [--ticks 400] [--block 20]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from dbsp import compile_plan
from dbsp.runtime import Runtime
from dbsp.spark import SparkRuntime, get_session

from .transactions import EXAMPLE, transactions


class Unprofiled(SparkRuntime):
    """The same runtime without the profile's recording."""

    node_started = Runtime.node_started
    node_finished = Runtime.node_finished

    def step(self, changes, observe=None):
        return Runtime.step(self, changes, observe)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--ticks", type=int, default=400)
    parser.add_argument("--block", type=int, default=20)
    args = parser.parse_args()
    spark = get_session()
    plan = compile_plan(json.loads(EXAMPLE.read_text()))
    rnd = random.Random(7)
    load = transactions(0, args.size, max(args.size // 10, 10), rnd)
    engines = {"on": SparkRuntime(plan, spark), "off": Unprofiled(plan, spark)}
    for rt in engines.values():
        rt.step({"transactions": load})
    samples = {"on": [], "off": []}
    start = args.size
    for block in range(args.ticks // args.block):
        for name in (("on", "off") if block % 2 else ("off", "on")):
            rt = engines[name]
            for _ in range(args.block):
                chunk = transactions(start, 10, max(args.size // 10, 10), rnd)
                start += 10
                t0 = time.perf_counter()
                rt.step({"transactions": chunk})
                samples[name].append(time.perf_counter() - t0)
    jvm = engines["on"]
    t0 = time.perf_counter()
    for _ in range(200):
        jvm.spark_jobs_started()
    read_us = (time.perf_counter() - t0) / 200 * 1e6
    out = {name: {"median_ms": round(statistics.median(s[5:]) * 1000, 3), "mean_ms": round(statistics.mean(s[5:]) * 1000, 3)}
           for name, s in samples.items()}
    out["jvm_job_counter_read_us"] = round(read_us, 1)  # paid only by nodes that ran a Spark action
    t0 = time.perf_counter()
    for _ in range(10_000):  # the recording of a node with no Spark action, alone
        stats = {"rows_in": 10}
        jvm.node_started("x")
        jvm.took("row")
        jvm.node_finished("x", stats)
    out["recording_us_per_node"] = round((time.perf_counter() - t0) / 10_000 * 1e6, 2)
    out["nodes"] = len(plan.order)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
