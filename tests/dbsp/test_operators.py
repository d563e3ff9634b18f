"""Each operator on hand-computed cases, on the reference and on Spark (which must agree)."""
import pytest

from dbsp import ZSet
from tests.dbsp.helpers import circuit, dele, ins, run, schema


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


T = schema("k:bigint", "v:bigint", "s:string")


def one(kind, params, ports=("in",), inputs=None):
    inputs = inputs or {"t": T}
    names = list(inputs)
    edges = [f"{names[i if len(names) > 1 else 0]}.out->op.{p}" for i, p in enumerate(ports)] + ["op.out->view.in"]
    return circuit(inputs, [("op", kind, params), ("view", "output", {})], edges)


def test_map_computes_columns_and_consolidates(spark):
    doc = one("map", {"columns": [{"name": "parity", "expr": "v % 2"}, {"name": "half", "expr": "v / 2"}]})
    [t0, t1] = run(doc, [{"t": [ins(k=1, v=4, s="a"), ins(k=2, v=4, s="b"), ins(k=3, v=3, s=None)]},
                         {"t": [dele(k=1, v=4, s="a")]}], spark)
    assert t0["view"] == ZSet([((0, 2.0), 2), ((1, 1.5), 1)])  # two rows map to (0, 2.0)
    assert t1["view"] == ZSet([((0, 2.0), -1)])


def test_filter_with_null_semantics(spark):
    [t0] = run(one("filter", {"predicate": "v > 1 OR s = 'x'"}), [{"t": [ins(k=1, v=None, s="x"), ins(k=2, v=None, s=None), ins(k=3, v=2, s=None)]}], spark)
    assert t0["view"] == ZSet([((1, None, "x"), 1), ((3, 2, None), 1)])


def test_union_and_difference_add_and_subtract_weights(spark):
    for kind, expected in (("union", 2), ("difference", 0)):
        [t0] = run(one(kind, {}, ports=("a", "b")), [{"t": [ins(k=1, v=1, s="a")]}], spark)
        assert t0["view"] == (ZSet([((1, 1, "a"), expected)]) if expected else ZSet())


def test_distinct_emits_only_presence_changes(spark):
    doc = one("distinct", {})
    row = dict(k=1, v=1, s=None)
    ticks = run(doc, [
        {"t": [ins(**row), ins(**row)]},          # weight 0 -> 2: appears once
        {"t": [dele(**row)]},                     # 2 -> 1: no change
        {"t": [dele(**row)]},                     # 1 -> 0: disappears
        {"t": [dele(**row)]},                     # 0 -> -1: nothing (not present)
        {"t": [ins(**row), ins(**row)]},          # -1 -> 1: appears
    ], spark)
    r = (1, 1, None)
    assert [t["view"] for t in ticks] == [ZSet([(r, 1)]), ZSet(), ZSet([(r, -1)]), ZSet(), ZSet([(r, 1)])]


def test_join_matches_keys_multiplies_weights_skips_nulls(spark):
    doc = circuit({"a": schema("k:bigint", "v:bigint"), "b": schema("k:bigint", "w:string")},
                  [("j", "join", {"left_keys": ["k"], "right_keys": ["k"]}), ("view", "output", {})],
                  ["a.out->j.left", "b.out->j.right", "j.out->view.in"])
    [t0, t1, t2] = run(doc, [
        {"a": [ins(k=1, v=10), ins(k=None, v=0)], "b": [ins(k=1, w="x"), ins(k=None, w="n")]},
        {"b": [{"weight": 2, "data": {"k": 1, "w": "y"}}]},
        {"a": [dele(k=1, v=10)]},
    ], spark)
    assert t0["view"] == ZSet([((1, 10, "x"), 1)])  # NULL keys never match
    assert t1["view"] == ZSet([((1, 10, "y"), 2)])  # weights multiply
    assert t2["view"] == ZSet([((1, 10, "x"), -1), ((1, 10, "y"), -2)])


def test_join_without_keys_is_the_cartesian_product(spark):
    doc = circuit({"a": schema("p:bigint"), "b": schema("q:bigint")},
                  [("j", "join", {"left_keys": [], "right_keys": []}), ("view", "output", {})],
                  ["a.out->j.left", "b.out->j.right", "j.out->view.in"])
    [t0] = run(doc, [{"a": [ins(p=1), ins(p=2)], "b": [ins(q=7)]}], spark)
    assert t0["view"] == ZSet([((1, 7), 1), ((2, 7), 1)])


def test_aggregate_functions_and_retraction(spark):
    doc = one("aggregate", {"group_by": ["k"], "aggregates": [
        {"fn": "count", "as": "n"}, {"fn": "count", "expr": "v", "as": "nv"}, {"fn": "sum", "expr": "v", "as": "total"},
        {"fn": "avg", "expr": "v", "as": "mean"}, {"fn": "min", "expr": "v", "as": "lo"}, {"fn": "max", "expr": "v", "as": "hi"},
        {"fn": "count_distinct", "expr": "s", "as": "kinds"}]})
    [t0, t1, t2] = run(doc, [
        {"t": [ins(k=1, v=4, s="a"), ins(k=1, v=2, s="a"), ins(k=1, v=None, s="b"), ins(k=None, v=1, s=None)]},
        {"t": [dele(k=1, v=2, s="a")]},
        {"t": [dele(k=1, v=4, s="a"), dele(k=1, v=None, s="b")]},
    ], spark)
    g1 = (1, 3, 2, 6, 3.0, 2, 4, 2)
    assert t0["view"] == ZSet([(g1, 1), ((None, 1, 1, 1, 1.0, 1, 1, 0), 1)])  # NULL is a group
    assert t1["view"] == ZSet([(g1, -1), ((1, 2, 1, 4, 4.0, 4, 4, 2), 1)])
    assert t2["view"] == ZSet([((1, 2, 1, 4, 4.0, 4, 4, 2), -1)])  # the group is gone


def test_global_aggregate_always_has_a_row(spark):
    doc = one("aggregate", {"group_by": [], "aggregates": [{"fn": "sum", "expr": "v", "as": "total"}, {"fn": "count", "as": "n"}]})
    [t0, t1, t2] = run(doc, [{}, {"t": [ins(k=1, v=5, s=None)]}, {"t": [dele(k=1, v=5, s=None)]}], spark)
    assert t0["view"] == ZSet([((0, 0), 1)])
    assert t1["view"] == ZSet([((0, 0), -1), ((5, 1), 1)])
    assert t2["view"] == ZSet([((5, 1), -1), ((0, 0), 1)])


def test_flat_map_splits_strings(spark):
    [t0, t1] = run(one("flat_map", {"column": "s", "separator": " ", "as": "word"}),
                   [{"t": [ins(k=1, v=0, s="to be or not to be"), ins(k=2, v=0, s=None)]}, {"t": [dele(k=1, v=0, s="to be or not to be")]}], spark)
    assert t0["view"] == ZSet([((1, 0, "to"), 2), ((1, 0, "be"), 2), ((1, 0, "or"), 1), ((1, 0, "not"), 1)])
    assert t1["view"] == -t0["view"]


def test_word_count_example(spark):
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parents[2] / "examples/circuits/word_count.json").read_text())
    [t0, t1] = run(doc, [{"lines": [ins(id=1, text="the cat the hat")]}, {"lines": [dele(id=1, text="the cat the hat"), ins(id=2, text="a cat")]}], spark)
    assert t0["counts"] == ZSet([(("the", 2), 1), (("cat", 1), 1), (("hat", 1), 1)])
    assert t1["counts"] == ZSet([(("the", 2), -1), (("hat", 1), -1), (("a", 1), 1)])  # cat stays at 1: no change


# ---- literal circuits built from DBSP primitives ---------------------------------------

def test_integrate_and_differentiate_are_inverse(spark):
    doc = circuit({"t": schema("x:bigint")},
                  [("i", "integrate", {}), ("d", "differentiate", {}), ("total", "output", {}), ("back", "output", {})],
                  ["t.out->i.in", "i.out->d.in", "i.out->total.in", "d.out->back.in"])
    ticks = run(doc, [{"t": [ins(x=1)]}, {"t": [ins(x=2)]}, {"t": [dele(x=1)]}], spark)
    assert [t["total"] for t in ticks] == [ZSet([((1,), 1)]), ZSet([((1,), 1), ((2,), 1)]), ZSet([((2,), 1)])]
    assert [t["back"] for t in ticks] == [ZSet([((1,), 1)]), ZSet([((2,), 1)]), ZSet([((1,), -1)])]


def test_a_feedback_loop_through_a_delay(spark):
    """acc = t + z^-1(acc): the running sum built by hand from a cycle through z^-1."""
    doc = circuit({"t": schema("x:bigint")},
                  [("acc", "union", {}), ("z", "delay", {}), ("view", "output", {})],
                  ["t.out->acc.a", "z.out->acc.b", "acc.out->z.in", "acc.out->view.in"])
    ticks = run(doc, [{"t": [ins(x=1)]}, {}, {"t": [ins(x=5)]}], spark)
    assert [t["view"] for t in ticks] == [ZSet([((1,), 1)]), ZSet([((1,), 1)]), ZSet([((1,), 1), ((5,), 1)])]


def test_delay_shifts_by_one_tick(spark):
    doc = circuit({"t": schema("x:bigint")}, [("z", "delay", {}), ("view", "output", {})], ["t.out->z.in", "z.out->view.in"])
    ticks = run(doc, [{"t": [ins(x=1)]}, {"t": [ins(x=2)]}, {}], spark)
    assert [t["view"] for t in ticks] == [ZSet(), ZSet([((1,), 1)]), ZSet([((2,), 1)])]


@pytest.mark.parametrize("kind, expected", [
    ("semijoin", [{((1, "x"), 1)}, {((2, "y"), 1)}, {((1, "x"), -1)}]),
    ("antijoin", [{((2, "y"), 1), ((None, "n"), 1)}, {((2, "y"), -1)}, {((1, "x"), 1)}]),
    ("left_join", [{((1, "x", 1, "p"), 1), ((2, "y", None, None), 1), ((None, "n", None, None), 1)},
                   {((1, "x", 1, "r"), 1), ((2, "y", 2, "q"), 1), ((2, "y", None, None), -1)},
                   {((1, "x", None, None), 1), ((1, "x", 1, "p"), -1), ((1, "x", 1, "r"), -1)}]),
])
def test_semijoin_antijoin_left_join(spark, kind, expected):
    doc = circuit({"a": schema("k:bigint", "v:string"), "b": schema("k2:bigint", "w:string")},
                  [("j", kind, {"left_keys": ["k"], "right_keys": ["k2"]}), ("view", "output", {})],
                  ["a.out->j.left", "b.out->j.right", "j.out->view.in"])
    ticks = run(doc, [{"a": [ins(k=1, v="x"), ins(k=2, v="y"), ins(k=None, v="n")], "b": [ins(k2=1, w="p")]},
                      {"b": [ins(k2=2, w="q"), ins(k2=1, w="r")]},          # a second match for 1 changes nothing for semi
                      {"b": [dele(k2=1, w="p"), dele(k2=1, w="r")]}], spark)  # the last match for 1 goes
    assert [set(t["view"]) for t in ticks] == expected


def test_semijoin_in_a_literal_circuit_runs_pointwise(spark):
    doc = circuit({"a": schema("k:bigint"), "b": schema("k2:bigint")},
                  [("ia", "integrate", {}), ("s", "antijoin", {"left_keys": ["k"], "right_keys": ["k2"]}), ("view", "output", {})],
                  ["a.out->ia.in", "ia.out->s.left", "b.out->s.right", "s.out->view.in"])
    ticks = run(doc, [{"a": [ins(k=1), ins(k=2)], "b": [ins(k2=1)]}, {}], spark)
    assert ticks[0]["view"] == ZSet([((2,), 1)])
    assert ticks[1]["view"] == ZSet([((1,), 1), ((2,), 1)])  # literal: b's value at tick 1 is empty


def test_top_k_per_group_with_weights_ties_and_nulls(spark):
    doc = one("top_k", {"group_by": ["k"], "order_by": [{"column": "v", "desc": True}], "k": 2})
    ticks = run(doc, [
        {"t": [ins(k=1, v=5, s="a"), ins(k=1, v=9, s="b"), ins(k=1, v=None, s="n"), ins(k=2, v=1, s="c")]},
        {"t": [{"weight": 2, "data": {"k": 1, "v": 7, "s": "d"}}]},   # weight 2 takes both places after 9
        {"t": [dele(k=1, v=9, s="b")]},                                  # 7 (x2) is now the top
    ], spark)
    assert ticks[0]["view"] == ZSet([((1, 9, "b"), 1), ((1, 5, "a"), 1), ((2, 1, "c"), 1)])  # DESC: NULL last
    assert ticks[1]["view"] == ZSet([((1, 7, "d"), 1), ((1, 5, "a"), -1)])
    assert ticks[2]["view"] == ZSet([((1, 9, "b"), -1), ((1, 7, "d"), 1)])


def test_top_k_validation():
    from dbsp import validate

    doc = one("top_k", {"order_by": [{"column": "zz"}], "k": 0})
    messages = [p.message for p in validate(doc)]
    assert any("unknown column 'zz'" in m for m in messages) and any("'k' must be a positive integer" in m for m in messages)


@pytest.mark.parametrize("params, message", [
    ({"order_by": [{"column": "zz"}], "aggregates": [{"fn": "sum", "expr": "v", "as": "x"}]}, "order_by: unknown column 'zz'"),
    ({"order_by": [{"column": "v"}], "frame": {"unit": "groups"}, "aggregates": [{"fn": "count", "as": "n"}]}, "unit must be one of rows, range"),
    ({"order_by": [{"column": "v"}], "frame": {"unit": "range", "start": -2, "end": 0}, "aggregates": [{"fn": "count", "as": "n"}]},
     "offsets need a rows frame"),
    ({"order_by": [{"column": "v"}], "frame": {"unit": "rows", "start": 1, "end": -1}, "aggregates": [{"fn": "count", "as": "n"}]},
     "start (1) is after end (-1)"),
    ({"frame": {"unit": "rows", "start": -1, "end": 0}, "aggregates": [{"fn": "count", "as": "n"}]}, "needs order_by"),
    ({"order_by": [{"column": "v"}], "aggregates": [{"fn": "median", "expr": "v", "as": "m"}]}, "unknown function 'median'"),
    ({"order_by": [{"column": "v"}], "aggregates": [{"fn": "sum", "expr": "s", "as": "m"}]}, "sum(m) needs a number, got string"),
    ({"order_by": [{"column": "v"}], "aggregates": [{"fn": "count", "as": "v"}]}, "duplicate output column 'v'"),
    ({"order_by": [{"column": "v"}], "aggregates": []}, "'aggregates' must be a non-empty list"),
])
def test_window_aggregate_validation(params, message):
    from dbsp import validate

    messages = [p.message for p in validate(one("window_aggregate", {"group_by": ["k"], **params}))]
    assert any(message in m for m in messages), messages


def test_linear_aggregates_over_expressions_that_are_all_null_in_a_change(spark):
    doc = one("aggregate", {"group_by": ["k"], "aggregates": [{"fn": "avg", "expr": "v * 2", "as": "a"},
                                                              {"fn": "count", "expr": "v + 1", "as": "n"}]})
    [t0, t1] = run(doc, [{"t": [ins(k=1, v=None, s=None)]}, {"t": [ins(k=1, v=3, s=None)]}], spark)
    assert t0["view"] == ZSet([((1, None, 0), 1)])
    assert t1["view"] == ZSet([((1, None, 0), -1), ((1, 6.0, 1), 1)])
