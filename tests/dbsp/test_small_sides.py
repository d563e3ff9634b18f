"""Joins whose sides are small run on the driver: no Spark job at all (counted by the
JVM's own job counter, which sees every job whatever thread started it), for cartesian
products and equi-joins alike, and the same when one side is big and held in Spark
levels while the tick changes only the other data. Every tick's output equals the
reference evaluator's (dbsp/reference.py)."""
import random

import pytest

from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, schema


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def spark_jobs(spark) -> int:
    """Jobs the JVM has started so far (every thread's: the lookups run on a pool)."""
    return spark.sparkContext._jsc.sc().dagScheduler().nextJobId()


def join_circuit(keys: bool, then_sum: bool = False):
    nodes = [("j", "join", {"left_keys": ["k"] if keys else [], "right_keys": ["k2"] if keys else []})]
    edges = ["a.out->j.left", "b.out->j.right"]
    if then_sum:  # a grouped sum after the product: its own trace, its own lookups
        nodes.append(("s", "aggregate", {"group_by": ["x"], "aggregates": [{"fn": "sum", "expr": "y", "as": "total"}]}))
        edges += ["j.out->s.in", "s.out->o.in"]
    else:
        edges.append("j.out->o.in")
    nodes.append(("o", "output", {}))
    return circuit({"a": schema("k:bigint", "x:bigint"), "b": schema("k2:bigint", "y:bigint")}, nodes, edges)


def rows(side, rnd, n, keys=4):
    name = "k" if side == "a" else "k2"
    other = "x" if side == "a" else "y"
    return [{"insert": {name: rnd.randrange(keys), other: rnd.randrange(100)}} for _ in range(n)]


def step_both(plan, fast, oracle, tick):
    changes = {n: changes_from_records(r, plan.inputs[n], None) for n, r in tick.items()}
    got, want = fast.step(changes), oracle.step(changes)
    for view in plan.views:
        assert got.outputs[view] == want.outputs[view], view
    return got


@pytest.mark.parametrize("keys, then_sum", [(False, False), (False, True), (True, False)])
def test_small_sides_run_no_spark_job(spark, keys, then_sum):
    from dbsp.spark import SparkRuntime

    plan = compile_plan(join_circuit(keys, then_sum))
    fast, oracle = SparkRuntime(plan, spark), ReferenceRuntime(plan)
    rnd = random.Random(3)
    inserted = {"a": [], "b": []}
    for t in range(8):
        tick = {"a": rows("a", rnd, 16), "b": rows("b", rnd, 16)}
        if t >= 3:  # and deletes of rows inserted before, on both sides
            for side in ("a", "b"):
                tick[side] += [{"delete": dict(r)} for r in rnd.sample(inserted[side], 4)]
        for side in ("a", "b"):
            inserted[side] += [r["insert"] for r in tick[side] if "insert" in r]
            for r in tick[side]:
                if "delete" in r:
                    inserted[side].remove(r["delete"])
        before = spark_jobs(spark)
        got = step_both(plan, fast, oracle, tick)
        assert spark_jobs(spark) == before, f"tick {t}: Spark jobs ran for a join of small sides"
        assert fast.jobs == 0
    assert got.outputs["o"]  # the last tick changed the product (the check above compared something)


@pytest.mark.parametrize("keys", [False, True])
def test_one_big_side_in_spark_and_a_small_side(spark, keys):
    """b's state (400 rows) lives in Spark levels; a's (a few rows) on the driver. Ticks
    that change only b meet a's state on the driver: no job. Ticks that change a must
    read b's state from Spark: jobs, and still the reference's output."""
    from dbsp.spark import SparkRuntime

    plan = compile_plan(join_circuit(keys))
    fast, oracle = SparkRuntime(plan, spark, recent_max=100), ReferenceRuntime(plan)
    rnd = random.Random(5)
    step_both(plan, fast, oracle, {"a": rows("a", rnd, 6), "b": rows("b", rnd, 400, keys=40)})
    right = fast.executors["j"].right
    assert right.levels, "the big side spilled to Spark"
    for t in range(6):
        before = spark_jobs(spark)
        step_both(plan, fast, oracle, {"b": rows("b", rnd, 3, keys=40)})
        assert spark_jobs(spark) == before, f"tick {t}: a change of the big side needs only the small side's state"
    before = spark_jobs(spark)
    step_both(plan, fast, oracle, {"a": rows("a", rnd, 2)})
    assert spark_jobs(spark) > before  # the probe of b's Spark levels (the counter does count jobs)
    step_both(plan, fast, oracle, {"a": [{"delete": {"k": 99, "x": 1}}], "b": rows("b", rnd, 2, keys=40)})
