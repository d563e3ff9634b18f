"""One core configuration of the Nexmark bench: a child process that the bench starts
pinned to its CPUs (bench/nexmark/cores.py: `taskset -c 0` with Spark `local[1]`, or
`taskset -c 0,1` with `local[2]`) and then asks for one measurement at a time.

It generates the same events as every other configuration (same seed, same ticks),
starts its own SparkSession (its JVM inherits the pinning), warms up, says `ready`, and
then answers requests, one JSON line each on stdin:

    {"run": "engine", "query": "q3"}              the engine, checked as --check says
    {"run": "paced", "query": "q3", "rate": 1e5}  the engine, unchecked, input paced
    {"run": "sss", "query": "q3"}                 Structured Streaming, checked against DuckDB

Each answer is one line on stdout starting with `@@ ` then JSON (other lines, e.g.
Spark's, are not answers). A failed measurement is an answer with "error".
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
from pathlib import Path

from bench.nexmark import engine, streaming
from bench.nexmark.queries import ORACLE
from connectors.nexmark_events import Config, NexmarkGenerator

MARK = "@@ "


def answer(payload: dict) -> None:
    sys.stdout.write(MARK + json.dumps(payload) + "\n")
    sys.stdout.flush()


def warm_up(spark, sss: bool) -> None:
    """Arrow's kernels, the engine's code paths and Spark's streaming planner are set up
    once per process: a throwaway run of q0 (engine and, when asked, Structured
    Streaming) on 2,000 events before anything is timed."""
    small = list(NexmarkGenerator(Config(seed=99)).batches(2_000, 1_000))
    engine.run_query("q0", small, spark=spark, check=False)
    if sss:
        files = streaming.EventFiles(small)
        try:
            streaming.run_query(spark, "q0", files, 2_000, None)
        finally:
            files.close()


def jvm_cpus(spark) -> str:
    """The CPUs the driver's JVM may run on (Linux's Cpus_allowed_list): the proof that
    the pinning reached Spark, not only Python."""
    try:
        pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    except Exception as error:  # not local mode, or not Linux
        return f"unknown ({type(error).__name__})"
    return "unknown"


class Measurements:
    def __init__(self, events: int, batch: int, seed: int, check: str, spark):
        self.events, self.check, self.spark = events, check, spark
        self.batches = list(NexmarkGenerator(Config(seed=seed)).batches(events, batch))
        self.files = None
        self.oracle = None

    def engine(self, query: str, rate: float | None = None) -> dict:
        gc.collect()
        if rate is not None:
            return engine.run_query(query, self.batches, spark=self.spark, check=False, rate=rate)
        checked = query in ORACLE
        return engine.run_query(query, self.batches, spark=self.spark, check=checked and self.check == "tick",
                                final_check=checked and self.check == "end")

    def sss(self, query: str) -> dict:
        if self.files is None:  # written once, on the first Structured Streaming request
            self.files = streaming.EventFiles(self.batches)
            self.oracle = engine.DuckDBOracle(list(self.batches[0]))
            for batch in self.batches:
                for table, rows in batch.items():
                    self.oracle.append(table, rows)
        gc.collect()
        expected = self.oracle.answer(ORACLE[query]) if query in ORACLE else None
        return streaming.run_query(self.spark, query, self.files, self.events, expected)

    def close(self) -> None:
        if self.files is not None:
            self.files.close()


def serve(measurements: Measurements, lines) -> None:
    for line in lines:
        if not line.strip():
            continue
        request = json.loads(line)
        query = request["query"]
        try:
            if request["run"] == "engine":
                result = measurements.engine(query)
            elif request["run"] == "paced":
                result = measurements.engine(query, rate=request["rate"])
            elif request["run"] == "sss":
                result = measurements.sss(query)
            else:
                result = {"query": query, "error": f"unknown request {request['run']!r}"}
        except engine.Mismatch as error:
            result = {"query": query, "error": f"wrong result: {error}"[:400]}
        except Exception as error:  # the engine's failure (TickFailed, ...): recorded, the bench goes on
            result = {"query": query, "error": f"{type(error).__name__}: {error}"[:400]}
        answer(result)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--check", choices=["tick", "end"], required=True)
    parser.add_argument("--sss", action="store_true", help="warm up Structured Streaming too")
    args = parser.parse_args()
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # Spark's refusals: recorded
    from dbsp.spark import get_session

    spark = get_session()
    warm_up(spark, args.sss)
    measurements = Measurements(args.events, args.batch, args.seed, args.check, spark)
    answer({"ready": True, "master": spark.sparkContext.master,
            "default_parallelism": spark.sparkContext.defaultParallelism,
            "python_cpus": sorted(os.sched_getaffinity(0)), "jvm_cpus": jvm_cpus(spark)})
    try:
        serve(measurements, sys.stdin)
    finally:
        measurements.close()


if __name__ == "__main__":
    main()
