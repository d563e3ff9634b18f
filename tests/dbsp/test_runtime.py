"""The Spark backend against the pure-Python reference, tick by tick, on the slice."""
import pytest

from dbsp import ZSet, compile_plan
from dbsp.errors import DataInvalid
from dbsp.reference import ReferenceRuntime, recompute
from dbsp.runtime import changes_from_records
from tests.conftest import example

PLAN = compile_plan(example("big_orders"))
SCHEMA = PLAN.inputs["orders"]


def changes(records):
    return changes_from_records(records, SCHEMA)


TICKS = [
    [{"insert": {"id": 1, "customer": "ada", "amount": 250}}, {"insert": {"id": 2, "customer": "bob", "amount": 20}}],
    [],
    [{"weight": 3, "data": {"id": 3, "customer": None, "amount": 101}}, {"insert": {"id": 4, "customer": "cy", "amount": None}}],
    [{"delete": {"id": 1, "customer": "ada", "amount": 250}}, {"delete": {"id": 9, "customer": "x", "amount": 500}}],
    [{"insert": {"id": 5, "customer": "d", "amount": 100}}, {"insert": {"id": 5, "customer": "d", "amount": 100}},
     {"delete": {"id": 5, "customer": "d", "amount": 100}}],
]


def test_change_records_become_a_consolidated_zset():
    z = changes(TICKS[4])
    assert z == ZSet([((5, "d", 100), 1)])


def test_bad_rows_are_all_named():
    with pytest.raises(DataInvalid) as err:
        changes([
            {"insert": {"id": 1, "customer": "a", "amount": "lots"}},
            {"insert": {"id": None, "customer": "a", "amount": 1}},
            {"insert": {"id": 2, "colour": "red"}},
            {"weight": 0, "data": {"id": 3}},
            {"upsert": {}},
        ])
    found = {(p.row, p.field) for p in err.value.problems}
    assert {(0, "amount"), (1, "id"), (2, "colour"), (3, "weight"), (4, None)} <= found


def test_reference_incremental_equals_recompute_every_tick():
    rt = ReferenceRuntime(PLAN)
    table, view = ZSet(), ZSet()
    for records in TICKS:
        z = changes(records)
        table = table + z
        view = view + rt.step({"orders": z}).outputs["big_orders"]
        assert view == recompute(PLAN, {"orders": table})["big_orders"]


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def test_spark_matches_reference_tick_by_tick(spark):
    from dbsp.spark import SparkRuntime

    spark_rt, ref_rt = SparkRuntime(PLAN, spark), ReferenceRuntime(PLAN)
    seen = []
    for records in TICKS:
        z = changes(records)
        s, r = spark_rt.step({"orders": z}), ref_rt.step({"orders": z})
        assert s.tick == r.tick
        assert s.outputs == r.outputs
        assert s.frontier["big_orders"] == {"tick": s.tick}
        seen.append(s.outputs_json()["big_orders"])
    # What a user would check: the big order arrives at tick 0, a weight-3 row at 2, leaves at 3.
    assert seen[0] == [{"data": {"id": 1, "customer": "ada", "amount": 250}, "weight": 1}]
    assert seen[1] == []
    assert seen[2] == [{"data": {"id": 3, "customer": None, "amount": 101}, "weight": 3}]
    assert {"data": {"id": 1, "customer": "ada", "amount": 250}, "weight": -1} in seen[3]
    assert seen[4] == []  # amount 100 is not > 100


def test_empty_tick_runs_no_spark_job(spark):
    from dbsp.spark import SparkRuntime

    rt = SparkRuntime(PLAN, spark)
    tracker = spark.sparkContext.statusTracker()
    before = len(tracker.getJobIdsForGroup())
    result = rt.step({})
    assert result.outputs["big_orders"] == ZSet()
    assert len(tracker.getJobIdsForGroup()) == before


def test_a_failure_inside_a_tick_names_the_node_and_operator(spark):
    """One error type, whatever fails: node id, operator kind and the cause in its text
    (the worker stores "TickFailed: <text>" as the run's error as it is)."""
    from dbsp import TickFailed
    from dbsp.spark import SparkRuntime
    from tests.dbsp.helpers import circuit, schema

    plan = compile_plan(circuit({"readings": schema("v:bigint")},
                                [("scaled", "map", {"columns": [{"name": "w", "expr": "v * 4"}]}), ("out", "output", {})],
                                ["readings.out->scaled.in", "scaled.out->out.in"]))
    rt = SparkRuntime(plan, spark)
    with pytest.raises(TickFailed) as err:
        rt.step({"readings": changes_from_records([{"insert": {"v": 2 ** 62}}], plan.inputs["readings"])})
    assert (err.value.node, err.value.kind) == ("scaled", "map")
    assert str(err.value).startswith("node 'scaled' (map): ValueOutOfRange: ") and "outside the bigint range" in str(err.value)


def test_a_tick_failure_drops_a_jvm_stack_trace_from_its_text():
    """Spark's errors carry the JVM's stack: the run's error keeps what says why."""
    from dbsp import TickFailed

    java = ("An error occurred while calling o215.localCheckpoint.\n: org.apache.spark.SparkException: Job aborted\n\n"
            "Driver stacktrace:\n\tat org.apache.spark.scheduler.DAGScheduler.runJob(DAGScheduler.scala:1549)\n"
            "Caused by: java.lang.OutOfMemoryError: Java heap space\n\tat java.base/java.lang.Thread.run(Thread.java:840)")
    text = str(TickFailed("labelled", "join", RuntimeError(java)))
    assert text == ("node 'labelled' (join): RuntimeError: An error occurred while calling o215.localCheckpoint. "
                    ": org.apache.spark.SparkException: Job aborted Caused by: java.lang.OutOfMemoryError: Java heap space")
