"""The correctness contract: for random relational circuits and random insert/delete
sequences (duplicates, deletes of absent rows, empty ticks, NULLs), the incremental
Spark run's output deltas equal the reference's D(Q(I(inputs))) at every tick — so the
integrated outputs equal the query recomputed from scratch after every tick."""
import os

import pytest
from hypothesis import HealthCheck, given, settings

from dbsp import ZSet, compile_plan
from dbsp.reference import ReferenceRuntime, recompute
from dbsp.runtime import changes_from_records
from tests.dbsp.circuits import TICKS, circuits

EXAMPLES = int(os.environ.get("DBSP_PROPERTY_EXAMPLES", "25"))


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


# The Spark runtime's paths: the hybrid default (small changes on the driver, state
# on the driver until it spills), Arrow joins against fetched state, everything on
# Spark, and state spilling to Spark levels (merged and probed there) after every tick.
MODES = {
    "hybrid": {},
    "arrow": {"driver_max_rows": 0, "recent_max": 2},
    "all-spark": {"driver_max_rows": 0, "arrow_max_rows": 0, "recent_max": 0},
    "spilling": {"recent_max": 1},
}


def run_both(spark, document, ticks, mode="hybrid"):
    from dbsp.spark import SparkRuntime

    plan = compile_plan(document)
    assert not plan.literal
    fast, oracle = SparkRuntime(plan, spark, **MODES[mode]), ReferenceRuntime(plan)
    tables = {name: ZSet() for name in plan.inputs}
    integrated = {view: ZSet() for view in plan.views}
    for t, tick in enumerate(ticks):
        changes = {name: changes_from_records(records, plan.inputs[name]) for name, records in tick.items()}
        got, want = fast.step(changes), oracle.step(changes)
        for view in plan.views:
            assert got.outputs[view] == want.outputs[view], f"tick {t}, view {view}"
            integrated[view] = integrated[view] + got.outputs[view]
        for name, z in changes.items():
            tables[name] = tables[name] + z
        assert integrated == recompute(plan, tables), f"tick {t}: integrated output != recomputation"


@pytest.mark.parametrize("mode", list(MODES))
def test_incremental_spark_equals_recomputation(spark, mode):
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(document=circuits(), ticks=TICKS)
    def check(document, ticks):
        run_both(spark, document, ticks, mode)

    check()
