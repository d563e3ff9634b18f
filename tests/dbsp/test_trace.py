"""The trace (spine): integrals that stay correct as rows move from the driver to
checkpointed Spark levels and levels merge; lookups find rows by key, NULL-safe."""
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


@pytest.mark.parametrize("recent_max, indexed", [(0, False), (2, False), (1000, False), (1000, True)])
def test_lookup_finds_rows_by_key_in_every_part(ctx, monkeypatch, recent_max, indexed):
    from dbsp.spark import probe

    if indexed:  # the driver part is probed by binary search, not scanned
        monkeypatch.setattr(probe, "MIN_ROWS", 1)
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
    assert (trace._index is not None) == indexed
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


@pytest.mark.parametrize("kind", ["bigint", "date", "timestamp"])
def test_a_sorted_index_finds_what_a_scan_finds(kind):
    """Binary search in a key-sorted table (NULLs last) returns the rows a scan returns,
    for repeated keys, absent keys and a NULL key."""
    import datetime as dt
    import random

    import pyarrow as pa
    import pyarrow.compute as pc

    from dbsp.spark.probe import SortedIndex

    rnd = random.Random(4)
    make = {"bigint": (lambda v: v, pa.int64()), "date": (lambda v: dt.date(2000, 1, 1) + dt.timedelta(days=v), pa.date32()),
            "timestamp": (lambda v: dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=v), pa.timestamp("us"))}[kind]
    f, typ = make
    values = [None if rnd.random() < 0.05 else f(rnd.randint(-50, 50)) for _ in range(2000)]
    table = pa.table({"k": pa.array(values, typ), "i": pa.array(range(2000), pa.int64())})
    index = SortedIndex(table, "k")
    for probe in ([f(3)], [f(-50), f(50), f(7), f(7)], [f(1000)], [None, f(0)], []):
        keys = pa.array(probe, typ)
        got = sorted(index.take(keys)["i"].to_pylist())
        want = sorted(table.filter(pc.is_in(table["k"], value_set=keys, skip_nulls=False))["i"].to_pylist())
        assert got == want, probe
