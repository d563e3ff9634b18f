"""A tick's rows are bounded (issue 31): no node may build more than the runtime's
`max_rows` rows in one tick (dbsp.limits.TICK_MAX_ROWS; the web app's
DBSPWEB_TICK_MAX_ROWS). A join or cartesian product is counted from its keys on both
sides before it is built; any node's output (a flat map's, a fixed point's) is counted
after. Beyond the limit the tick fails at once with TickTooLarge naming the node and
the count, on the reference evaluator and on every path of the Spark backend (row by
row, Arrow, all-Spark). So are its bytes (`max_bytes`, TICK_MAX_BYTES,
DBSPWEB_TICK_MAX_BYTES): rows × the schema's row width before a node is built, an
Arrow table's own size after. The limits here are small; the data is too."""
from __future__ import annotations

import tracemalloc
from collections import Counter

import pytest

from dbsp import compile_plan, limits
from dbsp.datalog import compile_program
from dbsp.errors import TickTooLarge
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, schema

#: SparkRuntime options that send a join's tick down each path (dbsp/spark/incremental.py)
PATHS = {
    "row": {},
    "arrow": {"vector_min_rows": 1},
    "spark": {"driver_max_rows": 0, "arrow_max_rows": 0},
}


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def runtime(kind, plan, spark, max_rows, max_bytes=limits.TICK_MAX_BYTES):
    if kind == "reference":
        rt = ReferenceRuntime(plan)
    else:
        from dbsp.spark import SparkRuntime

        rt = SparkRuntime(plan, spark, **PATHS[kind])
    rt.max_rows, rt.max_bytes = max_rows, max_bytes
    return rt


def changes(plan, **records):
    return {name: changes_from_records(rows, plan.inputs[name]) for name, rows in records.items()}


PRODUCT = ".decl e(a: number)\nbig(a, b, c, d) :- e(a), e(b), e(c), e(d).\n"


def test_the_default_limit_stops_the_issue_31_product_before_it_is_built():
    """The issue's rule with its 60 facts: 60^4 rows (13M; 4.4 GB in the worker it
    killed). Refused from the counts, with nothing of it built."""
    plan = compile_plan(compile_program(PRODUCT))
    rt = ReferenceRuntime(plan)
    assert rt.max_rows == limits.TICK_MAX_ROWS
    tracemalloc.start()
    try:
        with pytest.raises(TickTooLarge) as failed:
            rt.step(changes(plan, e=[{"insert": {"a": i}} for i in range(60)]))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert failed.value.rows == 60 ** 4 and failed.value.limit == limits.TICK_MAX_ROWS
    # the 3-way product before it (216,000 rows) was built, the 4-way never
    assert peak < 200 * 2 ** 20, f"{peak / 2 ** 20:.0f} MiB"


@pytest.mark.parametrize("kind", ["reference", "row", "arrow", "spark"])
def test_a_product_over_the_limit_fails_the_tick_naming_the_node_and_the_count(kind, spark):
    plan = compile_plan(compile_program(PRODUCT))
    facts = [{"insert": {"a": i}} for i in range(12)]
    rt = runtime(kind, plan, spark, max_rows=5_000)
    with pytest.raises(TickTooLarge) as failed:
        rt.step(changes(plan, e=facts))
    error = failed.value
    assert (error.node, error.kind, error.rows, error.limit) == ("r1_big_join_3", "join", 12 ** 4, 5_000)
    assert str(error) == ("node 'r1_big_join_3' (join): its output would have 20,736 rows, over the limit of 5,000 "
                          "rows one node may build in a tick (DBSPWEB_TICK_MAX_ROWS)")
    # The count is the output's own: at that limit the same tick passes and builds it.
    rt = runtime(kind, plan, spark, max_rows=12 ** 4)
    result = rt.step(changes(plan, e=facts))
    assert sum(w for _, w in result.outputs["big"]) == 12 ** 4


def test_without_a_limit_nothing_is_refused():
    plan = compile_plan(compile_program(PRODUCT))
    rt = ReferenceRuntime(plan)
    rt.max_rows = None
    assert len(rt.step(changes(plan, e=[{"insert": {"a": i}} for i in range(8)])).outputs["big"]) == 8 ** 4


def keyed_join():
    return circuit({"a": schema("k:bigint", "x:bigint"), "b": schema("k2:bigint", "y:bigint")},
                   [("j", "join", {"left_keys": ["k"], "right_keys": ["k2"]}), ("o", "output", {})],
                   ["a.out->j.left", "b.out->j.right", "j.out->o.in"])


@pytest.mark.parametrize("kind", ["reference", "row", "arrow", "spark"])
def test_a_join_fan_out_is_counted_from_both_sides_keys_against_the_state(kind, spark):
    """Tick 0 fills the right side's state (a hot key, other keys, a NULL key); tick 1's
    left change meets it, and also the right's own change in the same tick."""
    plan = compile_plan(keyed_join())
    right0 = [{"insert": {"k2": k, "y": i}} for i, k in enumerate([1] * 150 + [2] * 30 + [None] * 20 + [3] * 5)]
    left1 = [{"insert": {"k": k, "x": i}} for i, k in enumerate([1] * 40 + [2] * 10 + [None] * 7 + [9] * 3)]
    right1 = [{"insert": {"k2": k, "y": 1000 + i}} for i, k in enumerate([1] * 20 + [None] * 3)]
    # what the join builds, counted here by plain Python: pairs of equal non-NULL keys
    left_keys = Counter(r["insert"]["k"] for r in left1)
    right_keys = Counter(r["insert"]["k2"] for r in right0 + right1)
    pairs = sum(n * right_keys[k] for k, n in left_keys.items() if k is not None)
    assert pairs == 40 * 170 + 10 * 30
    rt = runtime(kind, plan, spark, max_rows=pairs - 1)
    rt.step(changes(plan, b=right0))
    with pytest.raises(TickTooLarge) as failed:
        rt.step(changes(plan, a=left1, b=right1))
    assert (failed.value.node, failed.value.rows) == ("j", pairs)
    rt = runtime(kind, plan, spark, max_rows=pairs)
    rt.step(changes(plan, b=right0))
    assert len(rt.step(changes(plan, a=left1, b=right1)).outputs["o"]) == pairs


def test_the_product_is_never_built_when_it_is_refused():
    """1000 facts: a million pairs the reference evaluator would build as Python
    tuples (well over 100 MiB); refused from the counts, the tick allocates little."""
    plan = compile_plan(compile_program(".decl e(a: number)\npair(a, b) :- e(a), e(b).\n"))
    rt = runtime("reference", plan, None, max_rows=10_000)
    change = changes(plan, e=[{"insert": {"a": i}} for i in range(1000)])
    tracemalloc.start()
    try:
        with pytest.raises(TickTooLarge) as failed:
            rt.step(change)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert failed.value.rows == 1000 ** 2
    assert peak < 20 * 2 ** 20, f"{peak / 2 ** 20:.0f} MiB"


def word_split():
    return circuit({"docs": schema("id:bigint", "text:string")},
                   [("words", "flat_map", {"column": "text", "as": "word"}), ("o", "output", {})],
                   ["docs.out->words.in", "words.out->o.in"])


@pytest.mark.parametrize("kind", ["reference", "row", "arrow", "spark"])
def test_a_flat_map_over_the_limit_fails_naming_the_node(kind, spark):
    plan = compile_plan(word_split())
    text = " ".join(f"w{i}" for i in range(600))
    rt = runtime(kind, plan, spark, max_rows=1000)
    with pytest.raises(TickTooLarge) as failed:
        rt.step(changes(plan, docs=[{"insert": {"id": i, "text": text}} for i in range(2)]))
    assert (failed.value.node, failed.value.rows) == ("words", 2 * 600)
    assert str(failed.value).startswith("node 'words' (flat_map): its output ")


CLOSURE = ".decl edge(src: number, dst: number)\nreach(x, y) :- edge(x, y).\nreach(x, z) :- reach(x, y), edge(y, z).\n"


@pytest.mark.parametrize("kind", ["reference", "row", "arrow", "spark"])
def test_a_fixed_point_growing_past_the_limit_fails_naming_a_node(kind, spark):
    """A chain of 80 edges reaches 80·81/2 = 3240 pairs; the limit 1000 stops the
    fixed point long before: the reference's recursive join (it recomputes the whole
    relation each iteration), the Spark backend's semi-naive iterations where the
    paths they found add up past it."""
    plan = compile_plan(compile_program(CLOSURE))
    rt = runtime(kind, plan, spark, max_rows=1000)
    with pytest.raises(TickTooLarge) as failed:
        rt.step(changes(plan, edge=[{"insert": {"src": i, "dst": i + 1}} for i in range(80)]))
    # the recursive rule's join inside the fixed point (reach(x, y) ⋈ edge(y, z)), or the fixed point
    assert failed.value.node == ("r2_reach_join" if kind == "reference" else "reach_fixpoint")
    assert 1000 < failed.value.rows < 80 * 81 // 2


# ---- bytes -----------------------------------------------------------------------------

#: big(a, b, c, d)'s row as the byte limit counts it: four bigints and the weight, 8 bytes each
PRODUCT_ROW_BYTES = 5 * 8


@pytest.mark.parametrize("kind", ["reference", "row", "arrow", "spark"])
def test_a_product_over_the_byte_limit_fails_before_it_is_built_naming_the_node_and_the_size(kind, spark):
    """No row limit: the byte limit alone stops the 4-way product of 12 facts, from the
    keys' counts (12^4 rows of 40 bytes), before any of it is built; at exactly its
    size the tick passes (and the built Arrow table is no larger)."""
    plan = compile_plan(compile_program(PRODUCT))
    facts = [{"insert": {"a": i}} for i in range(12)]
    size = 12 ** 4 * PRODUCT_ROW_BYTES
    rt = runtime(kind, plan, spark, max_rows=None, max_bytes=size - 1)
    with pytest.raises(TickTooLarge) as failed:
        rt.step(changes(plan, e=facts))
    error = failed.value
    assert (error.node, error.kind, error.rows, error.nbytes, error.max_bytes) == (
        "r1_big_join_3", "join", 12 ** 4, size, size - 1)
    assert str(error) == ("node 'r1_big_join_3' (join): its output would have about 829,440 bytes (810.0 KiB): "
                          "20,736 rows of 40 bytes, over the limit of 829,439 bytes (810.0 KiB) one node may build "
                          "in a tick (DBSPWEB_TICK_MAX_BYTES)")
    rt = runtime(kind, plan, spark, max_rows=None, max_bytes=size)
    assert sum(w for _, w in rt.step(changes(plan, e=facts)).outputs["big"]) == 12 ** 4


@pytest.mark.parametrize("kind", ["reference", "row", "arrow", "spark"])
def test_a_flat_map_over_the_byte_limit_fails_naming_the_node(kind, spark):
    """1,200 words of 40 characters, under any row limit: (id, word) rows are counted at
    8 + 36 + 8 bytes before they are built, and measure about 60 as Arrow after."""
    plan = compile_plan(word_split())
    text = " ".join(f"{i:040d}" for i in range(600))
    rt = runtime(kind, plan, spark, max_rows=None, max_bytes=50_000)
    with pytest.raises(TickTooLarge) as failed:
        rt.step(changes(plan, docs=[{"insert": {"id": i, "text": text}} for i in range(2)]))
    error = failed.value
    assert (error.node, error.max_bytes) == ("words", 50_000)
    assert 50_000 < error.nbytes <= error.rows * 64 and error.rows <= 1200
    assert str(error).startswith("node 'words' (flat_map): its output ")
    assert str(error).endswith("over the limit of 50,000 bytes (48.8 KiB) one node may build in a tick (DBSPWEB_TICK_MAX_BYTES)")


def padded():
    return circuit({"docs": schema("id:bigint", "s:string")},
                   [("pad", "map", {"columns": [{"name": "id", "expr": "id"}, {"name": "s", "expr": "concat(" + ", ".join(["s"] * 20) + ")"}]}), ("o", "output", {})],
                   ["docs.out->pad.in", "pad.out->o.in"])


@pytest.mark.parametrize("kind", ["row", "arrow"])
def test_an_output_whose_arrow_size_passes_the_byte_limit_fails_after_the_node_with_its_measured_size(kind, spark):
    """Strings far longer than the width a schema is counted at: on the driver paths
    the output's Arrow table is measured after the node. 100 strings of 2,000
    characters (20 copies of an input of 100) are over 200,000 bytes, past the limit of
    100,000 (counted from the schema: 100 rows of 8 + 36 + 8 bytes, far under it; the
    input's table, about 12,000 bytes, passes)."""
    plan = compile_plan(padded())
    rt = runtime(kind, plan, spark, max_rows=None, max_bytes=100_000)
    with pytest.raises(TickTooLarge) as failed:
        rt.step(changes(plan, docs=[{"insert": {"id": i, "s": f"{i:0100d}"}} for i in range(100)]))
    error = failed.value
    assert (error.node, error.rows) == ("pad", 100)
    assert 100 * 2000 < error.nbytes < 100 * 2100
    assert str(error).startswith(f"node 'pad' (map): its output has {error.nbytes:,} bytes (")
    assert " in 100 rows, over the limit of 100,000 bytes" in str(error)
