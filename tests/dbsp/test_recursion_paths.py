"""The paths a recursive circuit's big first tick and its later small ticks take, each
against an oracle that shares no code with them:

- a fixed point's first tick runs semi-naively (each iteration's executors start as
  copies of the previous iteration's and take only the inner difference): on random
  graphs large enough that every iteration's change takes the vectorised paths, its
  output and the single-edge ticks after it equal the reference evaluator's, and the
  closure equals a BFS in plain Python;
- distinct's vectorised H (changes of vector_min_rows rows and more), on the driver and
  against state in Spark levels, equals the reference;
- the NULL-safe Arrow semi-join that driver lookups use, with the prefilter for few keys
  against a large table, finds what a Python scan finds.
"""
import random

import pyarrow as pa
import pytest

from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, schema
from tests.dbsp.recursive_circuits import hops_from_roots, transitive_closure


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def bfs_closure(edges) -> set:
    adjacency: dict = {}
    for a, b in edges:
        adjacency.setdefault(a, []).append(b)
    out = set()
    for start, first in adjacency.items():
        seen, stack = set(), list(first)
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack.extend(adjacency.get(x, ()))
        out.update((start, x) for x in seen)
    return out


def records(edges, kind="insert"):
    return [{kind: {"src": a, "dst": b}} for a, b in edges]


@pytest.mark.parametrize("mode", [{}, {"vector_min_rows": 0}])
def test_first_tick_of_a_closure_then_single_edges_equal_the_reference(spark, mode):
    """250 edges on 100 nodes: the first tick's iterations carry hundreds to thousands of
    rows (Arrow joins, vectorised distinct); then inserts and deletes of single edges.
    The second mode vectorises every change, however small. (State in Spark levels:
    test_fixedpoint.py's spilling mode, on smaller graphs.)"""
    from dbsp.spark import SparkRuntime

    plan = compile_plan(transitive_closure())
    fast, oracle = SparkRuntime(plan, spark, **mode), ReferenceRuntime(plan)
    rnd = random.Random(11)
    edges = sorted({(rnd.randrange(100), rnd.randrange(100)) for _ in range(250)})
    ticks = [records(edges)]
    present = list(edges)
    for _ in range(3):
        new = (rnd.randrange(100), rnd.randrange(100))
        old = present.pop(rnd.randrange(len(present)))
        ticks += [records([new]), records([old], "delete")]
        present.append(new)
    closure: dict = {}
    for t, tick in enumerate(ticks):
        changes = {"edges": changes_from_records(tick, plan.inputs["edges"])}
        got, want = fast.step(changes), oracle.step(changes)
        assert got.outputs["closure"] == want.outputs["closure"], f"tick {t}"
        for row, w in got.outputs["closure"]:
            closure[row] = closure.get(row, 0) + w
        if t == 0:
            assert got.frontier["tc"]["iteration"] == want.frontier["tc"]["iteration"]  # settles where the reference does
            assert {r for r, w in closure.items() if w} == bfs_closure(edges)
    assert {r for r, w in closure.items() if w} == bfs_closure(present)


def test_first_tick_with_an_aggregate_inside_the_recursion(spark):
    """hops_from_roots: min(hops) per node inside the loop (a non-linear aggregate whose
    per-iteration copies must hold exactly the previous iteration's groups)."""
    from dbsp.spark import SparkRuntime

    plan = compile_plan(hops_from_roots())
    fast, oracle = SparkRuntime(plan, spark, vector_min_rows=0), ReferenceRuntime(plan)
    rnd = random.Random(4)
    edges = sorted({(rnd.randrange(60), rnd.randrange(60)) for _ in range(150)})
    ticks = [{"edges": records(edges), "roots": [{"insert": {"node": 0}}, {"insert": {"node": 7}}]},
             {"edges": records(edges[:3], "delete")}, {"roots": [{"delete": {"node": 0}}]}]
    for t, tick in enumerate(ticks):
        changes = {n: changes_from_records(r, plan.inputs[n]) for n, r in tick.items()}
        got, want = fast.step(changes), oracle.step(changes)
        for view in plan.views:
            assert got.outputs[view] == want.outputs[view], f"tick {t}, {view}"


@pytest.mark.parametrize("mode", [{"vector_min_rows": 0}, {"vector_min_rows": 0, "recent_max": 40}])
def test_vectorised_distinct_equals_the_reference(spark, mode):
    from dbsp.spark import SparkRuntime

    doc = circuit({"a": schema("k:bigint", "s:string")}, [("d", "distinct", {}), ("o", "output", {})],
                  ["a.out->d.in", "d.out->o.in"])
    plan = compile_plan(doc)
    fast, oracle = SparkRuntime(plan, spark, **mode), ReferenceRuntime(plan)
    rnd = random.Random(1)
    live = []
    for t in range(12):
        tick = []
        for _ in range(rnd.randrange(1, 60)):
            if live and rnd.random() < 0.4:
                tick.append({"delete": live.pop(rnd.randrange(len(live)))})
            elif rnd.random() < 0.1:  # a delete of a row that is not there: weight -1
                tick.append({"delete": {"k": 100 + t, "s": None}})
            else:
                row = {"k": rnd.choice([None, *range(8)]), "s": rnd.choice([None, "x", "y"])}
                live.append(row)
                tick.append({"insert": dict(row)})
        changes = {"a": changes_from_records(tick, plan.inputs["a"])}
        assert fast.step(changes).outputs["o"] == oracle.step(changes).outputs["o"], f"tick {t}"


def test_null_safe_semi_join_with_few_keys_finds_what_a_scan_finds():
    from dbsp.spark.zsets import null_safe_semi_arrow

    rnd = random.Random(2)
    for trial in range(100):
        n = rnd.randrange(0, 400)
        table = pa.table({"a": pa.array([rnd.choice([None, 1, 2, 3, 4]) for _ in range(n)], pa.int64()),
                          "b": pa.array([rnd.choice([None, "x", "y"]) for _ in range(n)], pa.string()),
                          "__w": pa.array(range(n), pa.int64())})
        m = rnd.randrange(1, 20)
        keys = pa.table({"a": pa.array([rnd.choice([None, 1, 2, 5]) for _ in range(m)], pa.int64()),
                         "b": pa.array([rnd.choice([None, "x", "z"]) for _ in range(m)], pa.string())})
        wanted = set(zip(keys["a"].to_pylist(), keys["b"].to_pylist()))
        want = sorted(r["__w"] for r in table.to_pylist() if (r["a"], r["b"]) in wanted)
        assert sorted(null_safe_semi_arrow(table, keys, ["a", "b"])["__w"].to_pylist()) == want, trial
