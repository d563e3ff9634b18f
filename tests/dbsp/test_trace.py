"""The trace (spine): integrals that stay correct as rows move from the driver to
checkpointed Spark levels and levels merge; lookups find rows by key, NULL-safe."""
import pyarrow as pa
import pytest

from dbsp import ZSet, compile_plan
from dbsp.spark.trace import Trace
from tests.dbsp.helpers import circuit, schema


@pytest.fixture(scope="module")
def ctx():
    from dbsp.spark import SparkRuntime, get_session

    plan = compile_plan(circuit({"t": schema("k:bigint", "s:string")}, [("o", "output", {})], ["t.out->o.in"]))
    return SparkRuntime(plan, get_session())


SCHEMA = compile_plan(circuit({"t": schema("k:bigint", "s:string")}, [("o", "output", {})], ["t.out->o.in"])).inputs["t"]


def table(ctx, *rows):
    return ctx.to_table(ZSet(rows), SCHEMA)


def contents(ctx, t):
    return ctx.to_zset_table(t, SCHEMA) if t is not None else ZSet()


@pytest.mark.parametrize("recent_max", [0, 2, 1000])
def test_lookup_finds_rows_by_key_in_every_part(ctx, recent_max):
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=recent_max, ratio=2)
    trace.add(table(ctx, ((1, "a"), 1), ((2, "b"), 1), ((None, "n"), 1)))
    trace.add(table(ctx, ((1, "a"), 1), ((3, "c"), 1)))
    trace.add(table(ctx, ((2, "b"), -1), ((None, "m"), 2)))
    if recent_max == 0:
        assert trace.recent is None and len(trace.levels) >= 1  # all in Spark
    assert contents(ctx, trace.lookup(["k"], [(1,)])) == ZSet([((1, "a"), 2)])
    assert contents(ctx, trace.lookup(["k"], [(2,)])) == ZSet()  # inserted then deleted
    assert contents(ctx, trace.lookup(["k"], [(None,)])) == ZSet([((None, "n"), 1), ((None, "m"), 2)])
    assert contents(ctx, trace.lookup(["k"], [(None,), (3,)])) == ZSet([((None, "n"), 1), ((None, "m"), 2), ((3, "c"), 1)])
    assert contents(ctx, trace.lookup(["k", "s"], [(None, "m"), (1, "a"), (1, "zz")])) == ZSet([((None, "m"), 2), ((1, "a"), 2)])
    assert contents(ctx, trace.snapshot_table()) == ZSet([((1, "a"), 2), ((None, "n"), 1), ((None, "m"), 2), ((3, "c"), 1)])


def test_levels_merge_and_stay_consolidated(ctx):
    trace = Trace(ctx, SCHEMA, recent_max=0, ratio=4)
    for i in range(20):
        trace.add(table(ctx, ((i % 3, "x"), 1)))
    assert len(trace.levels) < 20  # merged geometrically
    assert contents(ctx, trace.snapshot_table()) == ZSet([((0, "x"), 7), ((1, "x"), 7), ((2, "x"), 6)])


def test_many_keys_use_a_semi_join(ctx):
    from dbsp.spark import trace as trace_module

    trace = Trace(ctx, SCHEMA, recent_max=0)
    trace.add(table(ctx, *[((i, "v"), 1) for i in range(600)], ((None, "v"), 1)))
    keys = [(i,) for i in range(0, 600, 2)] + [(None,)]
    assert len(keys) > trace_module.PREDICATE_MAX_KEYS
    found = contents(ctx, trace.lookup(["k"], keys))
    assert found == ZSet([((i, "v"), 1) for i in range(0, 600, 2)] + [((None, "v"), 1)])
