"""Operators that read an integral (min / max / count_distinct aggregates, top_k,
distinct) read it consolidated on every Spark path, and touched-group keys keep the
order of `group_by`, whatever the input's column order (issue 11).

A trace's parts (driver part, Spark levels) are each consolidated, but a row inserted
into one part and deleted in a later one sits in both with opposite weights: only the
sum says it is gone. These tests put the insert and the delete in different parts."""
import pyarrow as pa
import pytest

from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, dele, ins, schema

ALL_ZERO = {"driver_max_rows": 0, "arrow_max_rows": 0, "recent_max": 0}


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def per_sensor_and_global():
    return circuit(
        {"r": schema("sensor:bigint", "v:bigint")},
        [("per_sensor", "aggregate", {"group_by": ["sensor"], "aggregates": [
            {"fn": "min", "expr": "v", "as": "lo"}, {"fn": "max", "expr": "v", "as": "hi"},
            {"fn": "count_distinct", "expr": "v", "as": "n"}]}),
         ("overall", "aggregate", {"group_by": [], "aggregates": [{"fn": "min", "expr": "v", "as": "lo"}]}),
         ("best", "top_k", {"group_by": ["sensor"], "order_by": [{"column": "v", "desc": True}], "k": 1}),
         ("by_sensor", "output", {}), ("global_min", "output", {}), ("top", "output", {})],
        ["r.out->per_sensor.in", "per_sensor.out->by_sensor.in", "r.out->overall.in", "overall.out->global_min.in",
         "r.out->best.in", "best.out->top.in"])


def integrated(runtime, plan, ticks):
    """Run the ticks; the integrated outputs after each one."""
    from dbsp import ZSet

    totals, history = {v: ZSet() for v in plan.views}, []
    for tick in ticks:
        changes = {n: changes_from_records(r, plan.inputs[n]) for n, r in tick.items()}
        out = runtime.step(changes).outputs
        totals = {v: totals[v] + out[v] for v in plan.views}
        history.append(totals)
    return history


@pytest.mark.parametrize("options", [ALL_ZERO, {"recent_max": 0}, {"driver_max_rows": 0, "recent_max": 0}],
                         ids=["all-zero", "spill", "spark-spill"])
def test_extremes_forget_deleted_rows(spark, options):
    """Per-sensor min/max/count_distinct, a global min and a top-1 after deleting the
    current extremes one tick at a time (each delete lands in a new small level that
    is not merged with the larger one holding the insert), then reinserting one."""
    from dbsp.spark import SparkRuntime

    plan = compile_plan(per_sensor_and_global())
    ticks = [
        {"r": [ins(sensor=1, v=v) for v in (1, 5, 3, 9, 4, 6, 7, 8)] + [ins(sensor=2, v=7), ins(sensor=2, v=0)]},
        {"r": [dele(sensor=1, v=1)]},
        {"r": [dele(sensor=1, v=9)]},
        {"r": [dele(sensor=2, v=0)]},
        {"r": [ins(sensor=1, v=9)]},
        {"r": [dele(sensor=1, v=9), dele(sensor=1, v=8)]},
    ]
    got = integrated(SparkRuntime(plan, spark, **options), plan, ticks)
    want = integrated(ReferenceRuntime(plan), plan, ticks)
    for t, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"tick {t}: {g} != {w}"
    # what a user checks: the deleted extremes are gone
    assert dict(got[3]["by_sensor"]) == {(1, 3, 8, 6): 1, (2, 7, 7, 1): 1}
    assert dict(got[3]["global_min"]) == {(3,): 1}
    assert dict(got[5]["top"]) == {(1, 7): 1, (2, 7): 1}


def rows_table(n, columns):
    """n rows of bigint columns a = i % 7, b = i % 5, c = i, weight 1."""
    data = {"a": pa.array([i % 7 for i in range(n)], pa.int64()), "b": pa.array([i % 5 for i in range(n)], pa.int64()),
            "c": pa.array(range(n), pa.int64()), "__w": pa.array([1] * n, pa.int64())}
    return pa.table({c: data[c] for c in columns + ["__w"]})


@pytest.mark.parametrize("kind", ["aggregate", "top_k"])
def test_group_by_out_of_column_order_on_a_large_tick(spark, kind):
    """group_by ["b", "a"] over columns (a, b, c), a tick of 10,001 rows (above the real
    default driver_max_rows): it used to die building the touched keys' DataFrame."""
    from dbsp.spark import SparkRuntime

    params = ({"group_by": ["b", "a"], "aggregates": [{"fn": "min", "expr": "c", "as": "lo"}, {"fn": "count", "as": "n"}]}
              if kind == "aggregate" else {"group_by": ["b", "a"], "order_by": [{"column": "c", "desc": False}], "k": 2})
    doc = circuit({"t": schema("a:bigint", "b:bigint", "c:bigint")}, [("g", kind, params), ("o", "output", {})],
                  ["t.out->g.in", "g.out->o.in"])
    plan = compile_plan(doc)
    fast, oracle = SparkRuntime(plan, spark), ReferenceRuntime(plan)
    from dbsp import ZSet

    table = rows_table(10_001, ["a", "b", "c"])
    as_zset = ZSet(((r["a"], r["b"], r["c"]), 1) for r in table.to_pylist())
    got, want = fast.step({"t": table}), oracle.step({"t": as_zset})
    assert got.outputs["o"] == want.outputs["o"]
    # and a second large tick deleting half of them (old and new rows of each group)
    half = rows_table(10_001, ["a", "b", "c"]).slice(0, 6_000)
    half = half.set_column(3, "__w", pa.array([-1] * 6_000, pa.int64()))
    got, want = fast.step({"t": half}), oracle.step({"t": ZSet(((r["a"], r["b"], r["c"]), -1) for r in half.to_pylist())})
    assert got.outputs["o"] == want.outputs["o"]
    assert len(got.outputs["o"]) > 0
