"""The trace (spine): integrals that stay correct as rows move from the driver to
checkpointed Spark levels and levels merge; lookups find rows by key, NULL-safe."""
import pyarrow as pa
import pytest

from dbsp import ZSet, compile_plan
from dbsp.spark.trace import Trace
from dbsp.spark.zsets import consolidate_arrow
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
    assert any(p.index is not None for p in trace._parts) == indexed
    assert contents(ctx, trace.snapshot_table()) == ZSet([((1, "a"), 2), ((None, "n"), 1), ((None, "m"), 2), ((3, "c"), 1)])


def test_levels_merge_and_stay_consolidated(ctx):
    trace = Trace(ctx, SCHEMA, recent_max=0, ratio=4, background_merges=False)
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


def test_a_lookup_of_many_keys_broadcasts_nothing(ctx, monkeypatch):
    """A broadcast relation stays on the driver's heap while its plan is reachable: a
    bulk change's 10^6 keys broadcast on every load tick grew the heap after GC to 3 GB
    at 10^7 rows of distinct state in Spark. Many keys go as a shuffled hash semi-join."""
    from dbsp.spark import trace as trace_module

    plans = []
    real = trace_module._spark_filter

    def spy(*args, **kwargs):
        df = real(*args, **kwargs)
        plans.append(df._jdf.queryExecution().executedPlan().toString())
        return df

    monkeypatch.setattr(trace_module, "_spark_filter", spy)
    trace = Trace(ctx, SCHEMA, recent_max=0)
    trace.add(table(ctx, *[((i, "v"), 1) for i in range(600)]))
    keys = [(i,) for i in range(0, 600, 2)]
    assert len(keys) > trace_module.PREDICATE_MAX_KEYS
    assert contents(ctx, trace.lookup(["k"], keys)) == ZSet([((i, "v"), 1) for i in range(0, 600, 2)])
    assert plans and all("Broadcast" not in plan and "ShuffledHashJoin" in plan for plan in plans), plans


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


def test_many_small_adds_keep_few_driver_parts_and_lookups_exact(ctx, monkeypatch):
    """300 ticks of a few rows each (inserts and deletions): the driver part stays a
    spine of O(log n) parts (merged geometrically, each consolidated), and every lookup
    equals the integral kept here as a plain dict."""
    import random

    from dbsp.spark import probe

    monkeypatch.setattr(probe, "MIN_ROWS", 8)  # parts of 8+ rows are indexed: both probes run
    rnd = random.Random(7)
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=10**9)
    want: dict = {}
    indexed = False
    for tick in range(300):
        rows = {}
        for _ in range(3):
            row = (rnd.choice([None, *range(40)]), rnd.choice("xyz"))
            w = -1 if want.get(row, 0) > 0 and rnd.random() < 0.3 else 1
            rows[row] = rows.get(row, 0) + w
        for row, w in rows.items():
            want[row] = want.get(row, 0) + w
        trace.add(table(ctx, *[(r, w) for r, w in rows.items() if w]))
        assert len(trace._parts) <= 12, len(trace._parts)
        if tick % 25 == 0:
            keys = [(k,) for k in rnd.sample([None, *range(45)], 6)]
            got = contents(ctx, trace.lookup(["k"], keys))
            assert got == ZSet([(r, w) for r, w in want.items() if w and (r[0],) in keys])
            indexed = indexed or any(p.index is not None for p in trace._parts)
    assert indexed  # the binary-search path ran
    assert contents(ctx, trace.snapshot_table()) == ZSet([(r, w) for r, w in want.items() if w])


@pytest.mark.parametrize("types", [("bigint",), ("string",), ("date",), ("timestamp",), ("boolean",), ("bigint", "string")])
def test_spark_partitions_are_where_spark_puts_the_rows(types):
    """probe.spark_partitions computes, for each key, the partition Spark's
    repartition(n, *key) puts its rows in (Murmur3, seed 42, NULLs skipped)."""
    import datetime as dt

    from pyspark.sql import functions as F

    from dbsp.spark import get_session
    from dbsp.spark.backend import arrow_schema
    from dbsp.spark.probe import spark_partitions
    from dbsp.types import Schema

    values = {
        "bigint": [0, 1, -1, 7, 2**40, -2**62, 2**63 - 1, None],
        "string": ["", "a", "ab", "abc", "abcd", "abcde", "héllo wörld", "日本語のテキスト", None],
        "date": [dt.date(1970, 1, 1), dt.date(2026, 11, 24), dt.date(1900, 3, 1), None],
        "timestamp": [dt.datetime(1970, 1, 1), dt.datetime(2026, 11, 24, 8, 1, 2, 345678), dt.datetime(1901, 1, 1), None],
        "boolean": [True, False, None],
    }
    names = [f"c{i}" for i in range(len(types))]
    rows = [tuple(values[t][(j * (i + 3)) % len(values[t])] for i, t in enumerate(types)) for j in range(40)]
    sch = Schema.from_list([{"name": n, "type": t} for n, t in zip(names, types)])
    target = arrow_schema(sch)
    keys = pa.Table.from_arrays([pa.array([r[i] for r in rows], target.field(n).type) for i, n in enumerate(names)], names=names)
    spark = get_session()
    from dbsp.spark.backend import spark_schema

    df = spark.createDataFrame(keys, schema=spark_schema(sch, weight=False)).repartition(7, *names)
    placed = df.withColumn("p", F.spark_partition_id()).toArrow()
    for i in range(placed.num_rows):
        one = placed.slice(i, 1).select(names)
        assert spark_partitions(one, names, 7) == {placed["p"][i].as_py()}, one.to_pylist()


def test_a_lookup_by_key_runs_over_only_the_partitions_holding_its_keys(ctx, monkeypatch):
    """State in several hash-partitioned Spark levels: a 3-key lookup runs one job over
    at most 3 partitions per level, and finds what the integral holds."""
    from dbsp.spark import trace as trace_module

    monkeypatch.setattr(trace_module, "LEVEL_PARTITION_ROWS", 50)
    runs = []
    real = trace_module.run_on_partitions
    monkeypatch.setattr(trace_module, "run_on_partitions",
                        lambda spark, selected, *a: runs.append([len(p) for _, p in selected]) or real(spark, selected, *a))
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=0, ratio=8)
    want: dict = {}
    for start in (0, 1000, 1300, 1400):
        rows = [((i % 700 if i % 11 else None, f"s{i % 5}"), 1) for i in range(start, start + (1000 if start == 0 else 100))]
        for r, w in rows:
            want[r] = want.get(r, 0) + w
        trace.add(table(ctx, *ZSet(rows)))
    assert len(trace.levels) >= 2 and all(trace._partitions.get(id(df), (0,))[0] >= 2 for df, _ in trace.levels)
    for keys in ([(5,), (699,), (None,)], [(12345,)], [(3,), (4,)]):
        got = contents(ctx, trace.lookup(["k"], keys))
        assert got == ZSet([(r, w) for r, w in want.items() if (r[0],) in keys])
        assert runs and all(n <= len(keys) for n in runs[-1])


def test_string_keys_are_pruned_too(ctx):
    sch = compile_plan(circuit({"t": schema("k:string", "v:bigint")}, [("o", "output", {})], ["t.out->o.in"])).inputs["t"]
    trace = Trace(ctx, sch, key=["k"], recent_max=0)
    rows = ZSet([((f"key-{i % 97}" if i % 13 else None, i), 1) for i in range(600)])
    trace.add(ctx.to_table(rows, sch))
    keys = [("key-5",), ("key-96",), (None,), ("nope",)]
    got = ctx.to_zset_table(trace.lookup(["k"], keys), sch)
    assert got == ZSet([(r, w) for r, w in rows if (r[0],) in keys])


def test_the_byte_budget_moves_the_largest_driver_parts_to_spark():
    """Traces of one runtime share its byte budget: past it, the trace holding the most
    driver bytes spills to a Spark level (its rows unchanged), the small one stays."""
    from dbsp.spark import SparkRuntime, get_session

    plan = compile_plan(circuit({"t": schema("k:bigint", "s:string")}, [("o", "output", {})], ["t.out->o.in"]))
    rt = SparkRuntime(plan, get_session(), state_bytes=6_000)
    assert rt.recent_max is None
    big, small = Trace(rt, SCHEMA, key=["k"]), Trace(rt, SCHEMA, key=["k"])
    small.add(table(rt, ((1, "s"), 1)))
    rows = [((i, "x" * 20), 1) for i in range(300)]
    big.add(table(rt, *rows[:100]))
    assert not big.levels and rt.state_budget.used <= 6_000
    big.add(table(rt, *rows[100:]))
    # the add that went over started a spill of big's parts (in the background: they
    # stay on the driver until its level lands), and of none of small's
    assert big._spilling is not None and small._spilling is None
    big._spilling.wait()
    assert contents(rt, big.lookup(["k"], [(7,)])) == ZSet([((7, "x" * 20), 1)])  # (adopts the level)
    assert big.levels and not big._parts and small._parts and not small.levels
    assert rt.state_budget.used <= 6_000
    assert contents(rt, big.lookup(["k"], [(5,), (250,)])) == ZSet([((5, "x" * 20), 1), ((250, "x" * 20), 1)])
    assert contents(rt, big.snapshot_table()) == ZSet(rows)


def test_the_default_budget_is_a_share_of_the_driver_memory(monkeypatch):
    from dbsp.spark.trace import default_state_bytes

    monkeypatch.delenv("DBSPWEB_DRIVER_STATE_BYTES", raising=False)
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "12g")
    assert default_state_bytes() == 6 * 2**30
    monkeypatch.setenv("DBSPWEB_DRIVER_STATE_BYTES", "512m")
    assert default_state_bytes() == 512 * 2**20


def test_a_lookup_by_a_two_column_key_is_pruned_and_exact(ctx, monkeypatch):
    """Distinct's traces are keyed by every column: the partitions are found from both
    columns' hash, the rows picked by one column then both (NULLs match NULLs)."""
    from dbsp.spark import trace as trace_module

    monkeypatch.setattr(trace_module, "LEVEL_PARTITION_ROWS", 40)
    trace = Trace(ctx, SCHEMA, key=["k", "s"], recent_max=0)
    rows = ZSet([((i % 50 if i % 7 else None, f"s{i % 3}" if i % 5 else None), 1 + i % 2) for i in range(400)])
    trace.add(table(ctx, *rows))
    assert trace._partitions[id(trace.levels[0][0])][0] >= 2
    keys = [(3, "s0"), (3, "s1"), (None, "s2"), (None, None), (4, None), (999, "s0")]
    assert contents(ctx, trace.lookup(["k", "s"], keys)) == ZSet([(r, w) for r, w in rows if r in keys])


def test_a_dataframe_taken_before_an_add_still_reads_after_levels_merge(ctx):
    """Aggregates take `df()` before adding a big change, then read it against the
    change: the levels merged away by that add must stay readable until the next add
    (released then; found by the property tests as CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND)."""
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=0, ratio=4, background_merges=False)
    trace.add(table(ctx, ((1, "a"), 1), ((2, "b"), 1)))
    before = trace.df()
    trace.add(table(ctx, ((3, "c"), 1)))  # 1 row against 2: the two levels merge
    assert len(trace.levels) == 1
    assert contents(ctx, consolidate_arrow(before.toArrow().cast(ctx.arrow_schema(SCHEMA)))) == ZSet([((1, "a"), 1), ((2, "b"), 1)])
    trace.add(table(ctx, ((4, "d"), 1)))  # the next add releases the merged-away level
    assert contents(ctx, trace.snapshot_table()) == ZSet([((i, s), 1) for i, s in ((1, "a"), (2, "b"), (3, "c"), (4, "d"))])


def test_a_merged_away_levels_arrow_batches_are_released_at_the_next_add(ctx):
    """Each level keeps its partitions as Arrow batches for lookups; when levels merge,
    the merged-away ones' batches are unpersisted with their rows (at the next add)."""
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=0, ratio=4, background_merges=False)
    trace.add(table(ctx, ((1, "a"), 1), ((2, "b"), 1)))
    assert contents(ctx, trace.lookup(["k"], [(1,)])) == ZSet([((1, "a"), 1)])  # reads (and keeps) a partition
    first = trace._partitions[id(trace.levels[0][0])][1]
    assert first.getStorageLevel().useMemory()
    trace.add(table(ctx, ((3, "c"), 1)))  # merged into one level
    trace.add(table(ctx, ((4, "d"), 1)))  # releases the merged-away one
    assert not first.getStorageLevel().useMemory()
    assert contents(ctx, trace.lookup(["k"], [(1,), (4,)])) == ZSet([((1, "a"), 1), ((4, "d"), 1)])


def test_a_lookup_touching_most_of_a_big_level_filters_it_and_ships_the_small_ones(ctx, monkeypatch):
    """Per level: a lookup's keys in most partitions of a big level are filtered there
    by a Spark job, the small level's partitions are shipped; both found, exactly."""
    from dbsp.spark import trace as trace_module

    monkeypatch.setattr(trace_module, "LEVEL_PARTITION_ROWS", 20)
    monkeypatch.setattr(trace_module, "SHIP_WHOLE_LEVEL", 3)
    shipped, filtered = [], []
    real_run, real_filter = trace_module.run_on_partitions, trace_module._spark_filter
    monkeypatch.setattr(trace_module, "run_on_partitions",
                        lambda spark, selected, *a: shipped.append(len(selected)) or real_run(spark, selected, *a))
    monkeypatch.setattr(trace_module, "_spark_filter", lambda *a: filtered.append(1) or real_filter(*a))
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=0, ratio=2)
    big = {(i, f"s{i % 4}"): 1 + i % 3 for i in range(400)}
    small = {(i, "new"): 1 for i in range(0, 400, 7)}
    trace.add(_arrow(ctx, big))
    trace.add(_arrow(ctx, small))
    assert len(trace.levels) == 2
    keys = [(k,) for k in range(0, 400, 3)] + [(None,)]  # most of the big level's 20 partitions
    want = {r: w for r, w in [*big.items(), *small.items()] if (r[0],) in keys}
    assert contents(ctx, trace.lookup(["k"], keys)) == ZSet(list(want.items()))
    assert filtered == [1] and shipped == [1]


def test_shuffles_into_a_level_read_few_map_partitions(ctx, monkeypatch):
    """A spill's table goes to Spark in MAP_PARTITION_ROWS-row partitions (not 10k-row
    ones), and a merge coalesces each level before the shuffle: a shuffle reads a block
    per (map, reduce) partition pair, so map partitions as many as the level's made a
    6*10^7-row spill read 3.6*10^7 blocks. The rows stay exact."""
    from dbsp.spark import trace as trace_module

    monkeypatch.setattr(trace_module, "LEVEL_PARTITION_ROWS", 10)
    monkeypatch.setattr(trace_module, "MAP_PARTITION_ROWS", 100)
    shuffled = []
    real_level = trace_module.make_level
    monkeypatch.setattr(trace_module, "make_level",
                        lambda spark, df, *a: shuffled.append(df._jdf.queryExecution().executedPlan().toString())
                        or real_level(spark, df, *a))
    made = []
    real_local = ctx.local_df
    monkeypatch.setattr(ctx, "local_df", lambda t, sch, partitions=None: made.append(real_local(t, sch, partitions)) or made[-1])
    # createDataFrame as for big tables (no local relation), 10 rows a partition by default
    conf = {"spark.sql.execution.arrow.localRelationThreshold": "0", "spark.sql.execution.arrow.maxRecordsPerBatch": "10"}
    before = {k: ctx.spark.conf.get(k) for k in conf}
    for k, v in conf.items():
        ctx.spark.conf.set(k, v)
    try:
        trace = Trace(ctx, SCHEMA, key=["k"], recent_max=0, ratio=4, background_merges=False)
        big = {(i, f"s{i % 4}"): 1 for i in range(1000)}
        chunked = _arrow(ctx, big)  # in 7-row chunks, as a consolidated table can come
        trace.add(pa.Table.from_batches([b for i in range(0, 1000, 7) for b in chunked.slice(i, 7).to_batches()]))
        assert made[-1]._jdf.rdd().getNumPartitions() == 10  # 1000 rows in 100-row partitions (not 10-row ones)
        # a table in many small chunks (a big consolidated one comes in Acero's 32k-row batches)
        many = pa.Table.from_batches([b for i in range(0, 1000, 7) for b in chunked.slice(i, 7).to_batches()])
        assert real_local(many, SCHEMA, partitions=10)._jdf.rdd().getNumPartitions() == 10
    finally:
        for k, v in before.items():
            ctx.spark.conf.set(k, v)
    trace.add(_arrow(ctx, {(i, "new"): 1 for i in range(400)}))  # 400 * 4 >= 1000: the levels merge
    assert len(trace.levels) == 1 and "Coalesce 10" in shuffled[-1] and "Coalesce 4" in shuffled[-1], shuffled[-1]
    want = {**big, **{(i, "new"): 1 for i in range(400)}}
    assert contents(ctx, trace.snapshot_table()) == ZSet(list(want.items()))
    keys = [(3,), (999,), (1234,)]
    assert contents(ctx, trace.lookup(["k"], keys)) == ZSet([(r, w) for r, w in want.items() if (r[0],) in keys])


def _random_change(rnd, want, n, keys, strings):
    """n rows of inserts and deletions (of present rows), consolidated, as a dict."""
    rows: dict = {}
    present = [r for r, w in want.items() if w > 0]
    for _ in range(n):
        if present and rnd.random() < 0.3:
            row, w = rnd.choice(present), -1
        else:
            row, w = (rnd.choice(keys), rnd.choice(strings)), rnd.choice([1, 1, 2])
        rows[row] = rows.get(row, 0) + w
    return {r: w for r, w in rows.items() if w}


def _arrow(ctx, rows: dict) -> pa.Table:
    target = ctx.arrow_schema(SCHEMA)
    return pa.table({"k": pa.array([r[0] for r in rows], pa.int64()), "s": pa.array([r[1] for r in rows], pa.string()),
                     "__w": pa.array(list(rows.values()), pa.int64())}).cast(target)


class _DictIntegral:
    """A trace fed random changes beside a dict integral of them (the oracle)."""

    def __init__(self, ctx, trace):
        self.ctx, self.trace, self.want = ctx, trace, {}

    def add(self, change: dict) -> None:
        self.trace.add(_arrow(self.ctx, change))
        for r, w in change.items():
            self.want[r] = self.want.get(r, 0) + w

    def check(self, keys) -> None:
        """A lookup by k equals the dict's rows with those keys."""
        got = contents(self.ctx, self.trace.lookup(["k"], keys))
        assert got == ZSet([(r, w) for r, w in self.want.items() if w and (r[0],) in keys])

    def rows(self) -> ZSet:
        return ZSet([(r, w) for r, w in self.want.items() if w])


@pytest.mark.parametrize("keys, strings", [([None, *range(60)], [None, "a", "b", "", "ab"]),
                                          ([None, 0, 1], [None, *map(str, range(300))])])
def test_sorted_merges_and_index_matches_equal_a_dict(ctx, monkeypatch, keys, strings):
    """A trace keyed by all its columns (distinct's) merges its driver parts by the index
    column (the newer part's rows found in the older by binary search, the rest merged
    in as a sorted run) and `weights` matches rows against each part's index: after every
    add, each part is consolidated and sorted (NULLs last), and the weights of present,
    deleted and absent rows equal an integral kept as a plain dict. With an index column
    of three values (and 300 strings) the matches give up (too many candidate pairs) and
    group_by merges."""
    import random

    from dbsp.spark import probe
    from dbsp.spark import trace as trace_module

    monkeypatch.setattr(probe, "MIN_ROWS", 8)
    paths = {"sorted": 0, "gave up": 0}
    merge_matched, match = trace_module._merge_matched, trace_module._match

    def counted_sorted(*a):
        paths["sorted"] += 1
        return merge_matched(*a)

    def counted_match(*a):
        found = match(*a)
        paths["gave up"] += found is None
        return found

    monkeypatch.setattr(trace_module, "_merge_matched", counted_sorted)
    monkeypatch.setattr(trace_module, "_match", counted_match)
    rnd = random.Random(18)
    trace = Trace(ctx, SCHEMA, key=["k", "s"], recent_max=10**9)
    want: dict = {}
    for tick in range(120):
        change = _random_change(rnd, want, rnd.choice([1, 3, 20, 150]), keys, strings)
        if not change:
            continue
        part = trace.part_of(_arrow(ctx, change)) if tick % 2 else _arrow(ctx, change)
        trace.add(part)
        for r, w in change.items():
            want[r] = want.get(r, 0) + w
        for p in trace._parts:
            data = list(zip(p.table["k"].to_pylist(), p.table["s"].to_pylist()))
            assert len(set(data)) == len(data) and 0 not in p.table["__w"].to_pylist()  # consolidated
            if p.index is not None:
                ks = p.table["k"].to_pylist()
                valid = [k for k in ks if k is not None]
                assert ks[:len(valid)] == sorted(valid) and ks[:len(valid)] == p.index.keys.tolist()
        probes = list({*rnd.sample(sorted(want, key=repr), min(30, len(want))), (999, "zz"), (None, None), (0, None)})
        got = trace.weights(_arrow(ctx, {r: 1 for r in probes}))
        assert got.tolist() == [want.get(r, 0) for r in probes], tick
    assert contents(ctx, trace.snapshot_table()) == ZSet([(r, w) for r, w in want.items() if w])
    assert paths["sorted"] > 5
    assert (paths["gave up"] > 5) == (len(keys) == 3)


@pytest.mark.parametrize("mode", [{"vector_min_rows": 0}, {"vector_min_rows": 0, "recent_max": 300}])
def test_distinct_of_bulk_changes_equals_a_counter(monkeypatch, mode):
    """distinct over changes of hundreds of rows (its vectorised H: weights matched in
    indexed driver parts; with recent_max, also fetched from Spark levels): the output,
    integrated, is the set of rows whose summed weight is positive (a Counter)."""
    import collections
    import random

    from dbsp.spark import SparkRuntime, get_session, probe
    from dbsp.runtime import changes_from_records

    monkeypatch.setattr(probe, "MIN_ROWS", 16)
    plan = compile_plan(circuit({"t": schema("k:bigint", "s:string")}, [("d", "distinct", {}), ("o", "output", {})],
                                ["t.out->d.in", "d.out->o.in"]))
    rt = SparkRuntime(plan, get_session(), **mode)
    rnd = random.Random(5)
    counts: collections.Counter = collections.Counter()
    view: dict = {}
    for tick in range(25):
        records = []
        for _ in range(rnd.choice([5, 200, 700])):
            row = {"k": rnd.choice([None, *range(300)]), "s": rnd.choice([None, "x", "y"])}
            present = counts[(row["k"], row["s"])] > 0
            kind = "delete" if present and rnd.random() < 0.4 else "insert"
            counts[(row["k"], row["s"])] += -1 if kind == "delete" else 1
            records.append({kind: row})
        out = rt.step({"t": changes_from_records(records, plan.inputs["t"])}).outputs["o"]
        for row, w in out:
            view[row] = view.get(row, 0) + w
        assert {r for r, w in view.items() if w} == {r for r, c in counts.items() if c > 0}, tick
        assert all(w == 1 for w in view.values() if w)
    rt.close()


def test_a_keyed_traces_big_parts_stay_sorted_and_no_lookup_sorts(ctx, monkeypatch):
    """A trace keyed by one column of two (a join's): every driver part of probe.MIN_ROWS
    rows or more is sorted by the key (NULLs last) as soon as it is added or merged, so
    no lookup sorts anything (at 10^8 rows the first probe after a load sorted 3.9·10^7
    rows in one tick). After every add the parts are consolidated, and every lookup
    equals an integral kept as a plain dict."""
    import random

    from dbsp.spark import probe
    from dbsp.spark import trace as trace_module

    monkeypatch.setattr(probe, "MIN_ROWS", 8)
    sorts = {"add": 0, "lookup": 0}
    phase = ["add"]
    init = trace_module.SortedIndex.__init__

    def counted_init(self, table, column, keys=None):
        sorts[phase[0]] += keys is None
        init(self, table, column, keys)

    monkeypatch.setattr(trace_module.SortedIndex, "__init__", counted_init)
    rnd = random.Random(24)
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=10**9)
    want: dict = {}
    merged = 0
    for tick in range(80):
        change = _random_change(rnd, want, rnd.choice([1, 3, 20, 150]), [None, *range(40)], [None, "a", "b", "c", "d"])
        if not change:
            continue
        before = len(trace._parts)
        trace.add(_arrow(ctx, change))
        merged += len(trace._parts) <= before
        for r, w in change.items():
            want[r] = want.get(r, 0) + w
        for p in trace._parts:
            data = list(zip(p.table["k"].to_pylist(), p.table["s"].to_pylist()))
            assert len(set(data)) == len(data) and 0 not in p.table["__w"].to_pylist()  # consolidated
            if p.rows >= probe.MIN_ROWS:
                assert p.index is not None, tick
                ks = p.table["k"].to_pylist()
                valid = [k for k in ks if k is not None]
                assert ks[:len(valid)] == sorted(valid) and ks[:len(valid)] == p.index.keys.tolist(), tick
        phase[0] = "lookup"
        keys = [(k,) for k in rnd.sample([None, *range(45)], 6)]
        got = contents(ctx, trace.lookup(["k"], keys))
        phase[0] = "add"
        assert got == ZSet([(r, w) for r, w in want.items() if w and (r[0],) in keys]), tick
    assert merged > 10 and sorts["add"] > 10
    assert sorts["lookup"] == 0
    assert contents(ctx, trace.snapshot_table()) == ZSet([(r, w) for r, w in want.items() if w])


@pytest.mark.parametrize("columns", [["k", "s"], ["s"]])
def test_a_bulk_lookup_scans_the_levels_kept_batches_on_the_executors(ctx, monkeypatch, columns):
    """A lookup of more than PREDICATE_MAX_KEYS keys (a bulk change) in a keyed trace's
    Spark levels runs as Python tasks over the levels' kept Arrow batches (scan.py), not
    as a shuffled semi-join: it finds exactly the rows a plain dict integral holds for
    those keys, NULL matching NULL, in every level, by the trace's key or other columns."""
    import random

    from dbsp.spark import trace as trace_module

    scans, filters = [], []
    scan, spark_filter = trace_module.scan_levels, trace_module._spark_filter
    monkeypatch.setattr(trace_module, "scan_levels", lambda *a: scans.append(len(a[1])) or scan(*a))
    monkeypatch.setattr(trace_module, "_spark_filter", lambda *a: filters.append(1) or spark_filter(*a))
    rnd = random.Random(31)
    trace = Trace(ctx, SCHEMA, key=["k", "s"], recent_max=50, ratio=4, background_merges=False)
    want: dict = {}
    for _ in range(6):
        change = _random_change(rnd, want, 120, [None, *range(400)], [None, "a", "b", "", "ab"])
        trace.add(_arrow(ctx, change))
        for r, w in change.items():
            want[r] = want.get(r, 0) + w
    assert len(trace.levels) >= 2
    present = [r for r, w in want.items() if w]
    probes = {tuple(r[trace.schema.names.index(c)] for c in columns) for r in present}
    probes |= {(None, None), (None, "a"), (7777, "a"), (5, None)} if columns == ["k", "s"] else {("zz",)}
    if len(probes) <= trace_module.PREDICATE_MAX_KEYS:
        monkeypatch.setattr(trace_module, "PREDICATE_MAX_KEYS", len(probes) - 1)
    got = contents(ctx, trace.lookup(columns, sorted(probes, key=repr)))
    assert got == ZSet([(r, w) for r, w in want.items() if w and tuple(r[trace.schema.names.index(c)] for c in columns) in probes])
    assert scans == [len(trace.levels)] and not filters


def test_a_tick_does_not_wait_for_a_level_merge_and_lookups_stay_exact(ctx, monkeypatch):
    """Adjacent levels merge in a background thread (trace.LevelMerge): the add that
    spilled returns while the merge still runs; adds, lookups (pruned and bulk) and
    snapshots during the merge read both levels and equal a dict integral; the merged
    level takes their place at the next add or lookup after the merge ends, the next
    merge follows, and the merged-away levels' blocks are released at the add after."""
    import random
    import threading

    from dbsp.spark import trace as trace_module

    gate = threading.Event()
    real_merge = trace_module.merge_levels
    merged = []

    def gated(*a):
        assert gate.wait(30), "the test never opened the gate"
        out = real_merge(*a)
        merged.append(out)
        return out

    monkeypatch.setattr(trace_module, "merge_levels", gated)
    rnd = random.Random(7)
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=0, ratio=4)
    integral = _DictIntegral(ctx, trace)
    add, check, want = integral.add, integral.check, integral.want

    add(_random_change(rnd, want, 40, [None, *range(60)], [None, "a", "b"]))
    add(_random_change(rnd, want, 20, [None, *range(60)], [None, "a", "b"]))  # 20 * 4 >= 40: a merge starts
    merge = trace._merging
    assert merge is not None and not merge.done() and len(trace.levels) == 2  # the add did not wait for it
    first_levels = [df for df, _ in trace.levels]
    for _ in range(3):  # more ticks while it runs: more levels, every read exact
        add(_random_change(rnd, want, 8, [None, *range(60)], [None, "a", "b"]))
        check([(k,) for k in rnd.sample([None, *range(60)], 5)])
    assert trace._merging is merge and len(trace.levels) == 5
    monkeypatch.setattr(trace_module, "PREDICATE_MAX_KEYS", 3)  # a bulk lookup: the executors' scan
    check([(k,) for k in [None, *range(60)]])
    assert contents(ctx, trace.snapshot_table()) == integral.rows()
    gate.set()
    merge.result()
    check([(1,), (None,)])  # adopts it: the two levels become one, and the next merge starts
    assert merged and not any(df is level for level, _ in trace.levels for df in first_levels)
    for _ in range(20):
        if trace._merging is None:
            break
        trace._merging.result()
        check([(2,)])
    assert len(trace.levels) <= 2, [n for _, n in trace.levels]
    add(_random_change(rnd, want, 4, [None, *range(60)], [None, "a", "b"]))  # releases the merged-away levels
    assert not any(trace_module.level_is_held(df) for df in first_levels)
    check([(k,) for k in [None, *range(60)]])
    assert contents(ctx, trace.snapshot_table()) == integral.rows()


def test_a_trace_closed_during_a_level_merge_releases_every_level_once_the_merge_ends(ctx, monkeypatch):
    """release() while a merge runs: the levels the merge does not read are released at
    once; the two it reads, and the level it makes, when it ends (no block is left
    held, and the merge is not cut off mid-read)."""
    import threading

    from dbsp.spark import trace as trace_module

    gate, made = threading.Event(), []
    real_merge = trace_module.merge_levels
    monkeypatch.setattr(trace_module, "merge_levels",
                        lambda *a: gate.wait(30) and made.append(real_merge(*a)) or made[-1])
    trace = Trace(ctx, SCHEMA, key=["k"], recent_max=0, ratio=4)
    trace.add(_arrow(ctx, {(i, "a"): 1 for i in range(40)}))
    trace.add(_arrow(ctx, {(i, "b"): 1 for i in range(20)}))  # a merge starts, held at the gate
    trace.add(_arrow(ctx, {(i, "c"): 1 for i in range(2)}))  # a third level (2 * 4 < 20: no merge)
    merge = trace._merging
    read, other = [merge.older, merge.newer], trace.levels[2][0]
    trace.release()
    assert not trace_module.level_is_held(other) and all(trace_module.level_is_held(df) for df in read)
    gate.set()
    merge._done.wait(30)
    assert made and not any(trace_module.level_is_held(df) for df in [*read, made[0][0]])
    assert not made[0][1][1].getStorageLevel().useMemory()  # its Arrow batches too


def test_a_tick_does_not_wait_for_a_spill_and_reads_stay_exact(monkeypatch):
    """Under the byte budget, driver parts move into a Spark level in a background
    thread (trace.LevelSpill): the add that went over returns while the spill runs;
    adds, lookups, weights and snapshots meanwhile read the parts and equal a dict
    integral; the level takes the parts' place at the next add or lookup after the spill
    ends. Parts replaced while it ran (a window's release, a restore) keep their rows
    and the level is released; a trace closed meanwhile releases it when it ends."""
    import random
    import threading

    import numpy as np

    from dbsp.spark import SparkRuntime, get_session
    from dbsp.spark import trace as trace_module

    gate = threading.Event()
    real_make_level = trace_module.make_level
    made = []

    def gated(*a):
        assert gate.wait(30), "the test never opened the gate"
        out = real_make_level(*a)
        made.append(out[0])
        return out

    monkeypatch.setattr(trace_module, "make_level", gated)
    plan = compile_plan(circuit({"t": schema("k:bigint", "s:string")}, [("o", "output", {})], ["t.out->o.in"]))
    rt = SparkRuntime(plan, get_session(), state_bytes=20_000)
    rnd = random.Random(11)
    trace, other = Trace(rt, SCHEMA, key=["k"]), Trace(rt, SCHEMA, key=["k"])
    other.add(_arrow(rt, {(1, "o"): 1}))
    integral = _DictIntegral(rt, trace)
    add, check, want = integral.add, integral.check, integral.want

    while trace._spilling is None:  # a few hundred rows: past the 20 KB budget
        add(_random_change(rnd, want, 60, [None, *range(400)], [None, "a" * 30, "b"]))
    spill = trace._spilling
    assert not spill.done() and not trace.levels and trace.driver_bytes() > 20_000  # the add did not wait for it
    assert other._spilling is None  # (the budget counts the spilling parts as gone: no other trace spills)
    for n in (spill.parts[-1].rows, 3, 3):  # ticks while it runs, every read exact (the first as big as the
        # spill's smallest part: new parts never merge into the spill's, which would leave its level unused)
        add(_random_change(rnd, want, n, [None, *range(400)], [None, "a" * 30, "b"]))
        check([(k,) for k in rnd.sample([None, *range(400)], 6)])
    assert trace._spilling is spill and not trace.levels
    rows = pa.Table.from_pylist([{"k": k, "s": s} for (k, s) in list(want)[:50]], schema=pa.schema([("k", pa.int64()), ("s", pa.string())]))
    assert trace.weights(rows).tolist() == [want[(r["k"], r["s"])] for r in rows.to_pylist()]
    assert contents(rt, trace.snapshot_table()) == integral.rows()
    gate.set()
    spill.wait()
    spilled_rows = spill.rows
    check([(1,), (None,)])  # adopts it: the parts it moved are now the level
    assert len(trace.levels) == 1 and made[-1] is trace.levels[0][0]
    assert trace.driver_rows() < spilled_rows and trace._spilling is None
    assert rt.state_budget.used <= 20_000
    check([(k,) for k in [None, *range(400)]])
    assert contents(rt, trace.snapshot_table()) == integral.rows()
    assert np.array_equal(trace.weights(rows), [want[(r["k"], r["s"])] for r in rows.to_pylist()])

    # parts replaced while a spill runs (as a window's release does): the level is not used
    gate.clear()
    while trace._spilling is None:
        add(_random_change(rnd, want, 60, [None, *range(400)], [None, "a" * 30, "b"]))
    spill = trace._spilling
    before = contents(rt, trace.snapshot_table())
    driver = trace.recent  # (read while it runs: the parts stay as they are)
    assert spill.parts[0] in trace._parts
    even = driver.filter(pa.compute.equal(pa.compute.bit_wise_and(pa.compute.fill_null(driver["k"], 0), 1), 0))
    dropped = contents(rt, driver) - contents(rt, even)
    assert dropped != ZSet()
    trace.recent = even  # the driver part replaced (its odd keys dropped) while the spill runs
    levels_before = [df for df, _ in trace.levels]
    gate.set()
    spill.wait()
    trace.lookup(["k"], [(2,)])
    assert [df for df, _ in trace.levels] == levels_before  # the spilled level was not put in
    assert not trace_module.level_is_held(made[-1])  # and was released
    assert contents(rt, trace.snapshot_table()) == before - dropped
    want.clear()
    want.update(contents(rt, trace.snapshot_table()))
    # a trace closed while its spill runs: the level is released when the spill ends
    gate.clear()
    while trace._spilling is None:
        add(_random_change(rnd, want, 60, [None, *range(400)], [None, "a" * 30, "b"]))
    spill = trace._spilling
    trace.release()
    other.release()
    gate.set()
    spill.wait()
    assert made and not trace_module.level_is_held(made[-1])
