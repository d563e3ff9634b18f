"""Benchmark: joins of small sides run on the driver, with no Spark job.

Three circuits, each in its own runtime, ticks of 16 new rows per side (and from the
fourth tick 4 deletes per side of rows inserted before):
1. `cartesian`: a ⋈ b on no key (the cartesian product), view = the product;
2. `cartesian_sum`: the product, then sum(y) grouped by x;
3. `keyed`: a ⋈ b on k = k2;
and `big_side`: the keyed join and the cartesian product with b's state (20k rows) held
in Spark levels (recent_max 1000) and a's on the driver, ticks of 3 rows into b only,
then ticks of 2 rows into a (which must read b's Spark state).

Per circuit: median tick ms, Spark jobs per tick counted by the JVM (every job, from
any thread), and the floor (one trivial Spark job, bench/transactions.py). Every
tick's output is checked against the reference evaluator (dbsp/reference.py).

Run: .venv/bin/python -m bench.small_sides [--ticks 20]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from dbsp.spark import SparkRuntime, get_session

from .transactions import floor_ms


def jvm_jobs(spark) -> int:
    return spark.sparkContext._jsc.sc().dagScheduler().nextJobId()


def document(keys: bool, then_sum: bool = False) -> dict:
    cols = lambda *names: [{"name": n, "type": "bigint"} for n in names]  # noqa: E731
    nodes = [{"id": "a", "kind": "input", "params": {"schema": cols("k", "x")}},
             {"id": "b", "kind": "input", "params": {"schema": cols("k2", "y")}},
             {"id": "j", "kind": "join", "params": {"left_keys": ["k"] if keys else [], "right_keys": ["k2"] if keys else []}},
             {"id": "o", "kind": "output", "params": {}}]
    edges = [("a", "j", "left"), ("b", "j", "right")]
    if then_sum:
        nodes.append({"id": "s", "kind": "aggregate", "params": {"group_by": ["x"], "aggregates": [{"fn": "sum", "expr": "y", "as": "total"}]}})
        edges += [("j", "s", "in"), ("s", "o", "in")]
    else:
        edges.append(("j", "o", "in"))
    return {"nodes": nodes, "edges": [{"from": {"node": f, "port": "out"}, "to": {"node": t, "port": p}} for f, t, p in edges]}


def rows(side, rnd, n, keys=4):
    k, v = ("k", "x") if side == "a" else ("k2", "y")
    return [{k: rnd.randrange(keys), v: rnd.randrange(1000)} for _ in range(n)]


class Pair:
    """The Spark runtime and the reference, stepped together and compared every tick."""

    def __init__(self, spark, doc, **options):
        self.spark, self.plan = spark, compile_plan(doc)
        self.fast, self.oracle = SparkRuntime(self.plan, spark, **options), ReferenceRuntime(self.plan)
        self.samples: list[tuple[float, int]] = []

    def step(self, tick: dict, timed: bool = True):
        changes = {n: changes_from_records(r, self.plan.inputs[n]) for n, r in tick.items()}
        jobs, t0 = jvm_jobs(self.spark), time.perf_counter()
        got = self.fast.step(changes)
        elapsed, jobs = time.perf_counter() - t0, jvm_jobs(self.spark) - jobs
        want = self.oracle.step(changes)
        assert got.outputs == want.outputs, f"tick {len(self.samples)}: Spark runtime != reference"
        if timed:
            self.samples.append((elapsed, jobs))

    def summary(self) -> dict:
        return {"ticks": len(self.samples), "ms": round(statistics.median(s for s, _ in self.samples) * 1000, 2),
                "jobs_per_tick": statistics.median(j for _, j in self.samples), "max_jobs": max(j for _, j in self.samples),
                "checked_against_reference": True}


def small_sides(spark, keys: bool, then_sum: bool, ticks, rnd) -> dict:
    pair = Pair(spark, document(keys, then_sum))
    live = {"a": [], "b": []}
    for t in range(ticks):
        tick = {}
        for side in ("a", "b"):
            new = rows(side, rnd, 16)
            records = [{"insert": r} for r in new]
            if t >= 3:
                for r in rnd.sample(live[side], 4):
                    live[side].remove(r)
                    records.append({"delete": dict(r)})
            live[side] += new
            tick[side] = records
        pair.step(tick)
    return pair.summary() | {"rows_per_side": [len(live["a"]), len(live["b"])]}


def big_side(spark, keys: bool, ticks, rnd) -> dict:
    pair = Pair(spark, document(keys), recent_max=1000)
    pair.step({"a": [{"insert": r} for r in rows("a", rnd, 4)], "b": [{"insert": r} for r in rows("b", rnd, 20_000, keys=400)]}, timed=False)
    assert pair.fast.executors["j"].right.levels, "b's state is in Spark levels"
    for _ in range(ticks):
        pair.step({"b": [{"insert": r} for r in rows("b", rnd, 3, keys=400)]})
    b_only = pair.summary()
    pair.samples = []
    for _ in range(max(3, ticks // 4)):
        pair.step({"a": [{"insert": r} for r in rows("a", rnd, 2)]})
    return {"ticks_into_b_only": b_only, "ticks_into_a": pair.summary()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ticks", type=int, default=20)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    spark = get_session()
    rnd = random.Random(args.seed)
    report = {"load_average_before": os.getloadavg()[0], "floor_ms": floor_ms(spark)}
    report["cartesian"] = small_sides(spark, False, False, args.ticks, rnd)
    report["cartesian_sum"] = small_sides(spark, False, True, args.ticks, rnd)
    report["keyed"] = small_sides(spark, True, False, args.ticks, rnd)
    report["big_side_keyed"] = big_side(spark, True, args.ticks, rnd)
    report["big_side_cartesian"] = big_side(spark, False, max(4, args.ticks // 4), rnd)
    report["floor_ms_after"] = floor_ms(spark)
    report["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    sys.exit(main())
