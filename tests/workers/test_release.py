"""Stopping a run frees the Spark state its worker held: every cached trace level of
the run's runtime is unpersisted and the runtime is dropped."""
import json

import pytest

from dbsp import compile_plan
from dbsp.runtime import changes_from_records
from tests.conftest import EXAMPLES
from workers import engines


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def test_release_unpersists_every_cached_trace_level(spark):
    from dbsp.spark import SparkRuntime
    from dbsp.spark.trace import Trace, level_is_held

    plan = compile_plan(json.loads((EXAMPLES / "transactions.json").read_text()))
    rt = SparkRuntime(plan, spark, recent_max=1)  # every trace spills to cached Spark levels
    for i in range(4):
        rt.step({"transactions": changes_from_records(
            [{"insert": {"id": i, "from_acct": i % 3, "to_acct": (i + 1) % 3, "amount": 5}}], plan.inputs["transactions"])})
    traces = [t for e in rt.executors.values() for t in vars(e).values() if isinstance(t, Trace)]
    levels = [df for t in traces for df, _ in t.levels]
    assert levels and all(level_is_held(df) for df in levels)
    # the levels' Arrow batches are kept too (for lookups), and released with them
    kept = [t._partitions[id(df)][1] for t in traces for df, _ in t.levels if id(df) in t._partitions]
    assert kept and all(b.getStorageLevel().useMemory() for b in kept)
    # a level merge still running (they run beside the ticks) frees its two levels, and
    # the level it made, as it ends; stopping the run does not wait for it
    merges = [t._merging for t in traces if t._merging is not None]
    engines._runtimes[424242] = rt
    assert engines.release(424242) is True
    for merge in merges:
        assert merge._done.wait(60)
    assert not any(level_is_held(df) for df in levels)  # (the merged levels: test_trace.py)
    assert not any(b.getStorageLevel().useMemory() for b in kept)
    assert all(t.levels == [] for t in traces) and 424242 not in engines.held_runs()
    assert engines.release(424242) is False
