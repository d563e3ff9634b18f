"""The engine against DuckDB (tests/dbsp/sql_oracle.py: the document's queries as SQL
text, recomputed from the integrated inputs after every tick, sharing no code with the
engine), on fixed cases: the examples, the extremes of issue 11, and joins of every
kind. The property tests (test_properties.py) use the same oracle on random circuits."""
import json
from pathlib import Path

import pytest

from dbsp import ZSet, compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records
from tests.dbsp.helpers import circuit, dele, ins, schema
from tests.dbsp.sql_oracle import Oracle, assert_matches
from tests.dbsp.test_properties import MODES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "circuits"


@pytest.fixture(scope="module")
def spark():
    from dbsp.spark import get_session

    return get_session()


def check(document, ticks, runtimes):
    """Run the ticks on every runtime; after each, every runtime's integrated outputs
    equal DuckDB's. Returns how many (tick, view) pairs were compared."""
    plan = compile_plan(document)
    oracle = Oracle(document)
    totals = [{v: ZSet() for v in plan.views} for _ in runtimes]
    compared = 0
    for t, tick in enumerate(ticks):
        changes = {n: changes_from_records(r, plan.inputs[n], plan.primary_key(n)) for n, r in tick.items()}
        oracle.push(tick)
        for i, rt in enumerate(runtimes):
            out = rt.step(changes).outputs
            totals[i] = {v: totals[i][v] + out[v] for v in plan.views}
        for rt, total in zip(runtimes, totals):
            compared += assert_matches(oracle, total, f"tick {t} on {type(rt).__name__}")
    return compared


def example(name):
    doc = json.loads((EXAMPLES / f"{name}.json").read_text())
    ticks = [json.loads(line) if line.strip() else {} for line in (EXAMPLES / f"{name}.pushes.jsonl").read_text().splitlines()]
    return doc, ticks


def extremes():
    """Per-group min/max/count_distinct/avg, a global sum/min and top_k with ties,
    group_by in an order other than the columns', under deletes and reinserts of the
    current extremes."""
    doc = circuit(
        {"r": schema("a:bigint", "b:string", "v:bigint")},
        [("by_ba", "aggregate", {"group_by": ["b", "a"], "aggregates": [
            {"fn": "min", "expr": "v", "as": "lo"}, {"fn": "max", "expr": "v", "as": "hi"},
            {"fn": "count_distinct", "expr": "v", "as": "n"}, {"fn": "avg", "expr": "v", "as": "mean"},
            {"fn": "count", "as": "rows"}]}),
         ("overall", "aggregate", {"group_by": [], "aggregates": [{"fn": "sum", "expr": "v", "as": "total"},
                                                                   {"fn": "min", "expr": "v", "as": "lo"}]}),
         ("top2", "top_k", {"group_by": ["b"], "order_by": [{"column": "v", "desc": True}], "k": 2}),
         ("once", "distinct", {}),
         ("o1", "output", {}), ("o2", "output", {}), ("o3", "output", {}), ("o4", "output", {})],
        ["r.out->by_ba.in", "by_ba.out->o1.in", "r.out->overall.in", "overall.out->o2.in", "r.out->top2.in",
         "top2.out->o3.in", "r.out->once.in", "once.out->o4.in"])
    rows = [ins(a=i % 2, b="x" if i % 3 else "y", v=v) for i, v in enumerate([5, 5, 9, 1, 9, 3, None, 7, 1])]
    ticks = [
        {"r": rows},
        {"r": [dele(a=0, b="y", v=5), dele(a=0, b="x", v=9)]},     # an extreme, and one copy of a tie
        {"r": [dele(a=0, b="x", v=9), dele(a=1, b="y", v=1)]},     # the other copy: the max moves
        {"r": [ins(a=0, b="x", v=9), ins(a=0, b="x", v=9)]},       # reinserted, twice
        {"r": []},
        {"r": [dele(**r["insert"]) for r in rows[5:]]},
        {"r": [dele(a=0, b="x", v=9), dele(a=0, b="x", v=9), dele(a=1, b="x", v=5)]},
    ]
    return doc, ticks


def distincts():
    """COUNT / SUM / AVG (DISTINCT e), FILTERed as SQL compiles them (CASE WHEN c THEN e
    END), beside count(*), count(e), avg(e), min and max in one aggregate, per group
    (group_by out of column order) and global (the extremes deleted, so looked up again): a (group, value) pair held by several rows stays while
    one of them is left, leaves with the last one, comes back; NULL values, a row of
    weight 2, a group emptied and refilled, string values."""
    cheap, dear = "CASE WHEN price < 10 THEN bidder END", "CASE WHEN price >= 10 THEN price END"
    doc = circuit(
        {"r": schema("g:bigint", "s:string", "bidder:bigint", "price:bigint")},
        [("by_sg", "aggregate", {"group_by": ["s", "g"], "aggregates": [
            {"fn": "count", "as": "rows"}, {"fn": "count", "expr": "CASE WHEN price < 10 THEN 1 END", "as": "cheap_rows"},
            {"fn": "count_distinct", "expr": "bidder", "as": "bidders"}, {"fn": "count_distinct", "expr": cheap, "as": "cheap_bidders"},
            {"fn": "sum_distinct", "expr": "bidder", "as": "bidder_sum"}, {"fn": "sum_distinct", "expr": "price", "as": "prices"},
            {"fn": "avg_distinct", "expr": dear, "as": "dear_mean"}, {"fn": "avg", "expr": "price", "as": "mean"},
            {"fn": "min", "expr": "price", "as": "lo"}, {"fn": "max", "expr": cheap, "as": "top_cheap"}]}),
         ("by_g", "aggregate", {"group_by": ["g"], "aggregates": [{"fn": "count_distinct", "expr": "s", "as": "names"},
                                                                  {"fn": "max", "expr": "s", "as": "last"}]}),
         ("overall", "aggregate", {"group_by": [], "aggregates": [
             {"fn": "count_distinct", "expr": "bidder", "as": "bidders"}, {"fn": "sum_distinct", "expr": "price", "as": "prices"},
             {"fn": "max", "expr": "price", "as": "hi"}, {"fn": "min", "expr": "bidder", "as": "lo"},
             {"fn": "avg_distinct", "expr": cheap, "as": "cheap_mean"}, {"fn": "count", "as": "rows"}]}),
         ("by_bidder", "aggregate", {"group_by": ["bidder"], "aggregates": [  # no extreme: whole columns when driver_max_rows is 0
             {"fn": "count_distinct", "expr": "g", "as": "gs"}, {"fn": "sum_distinct", "expr": dear, "as": "dear_sum"},
             {"fn": "count", "as": "rows"}]}),
         ("o1", "output", {}), ("o2", "output", {}), ("o3", "output", {}), ("o4", "output", {})],
        ["r.out->by_sg.in", "by_sg.out->o1.in", "r.out->by_g.in", "by_g.out->o2.in", "r.out->overall.in", "overall.out->o3.in",
         "r.out->by_bidder.in", "by_bidder.out->o4.in"])
    rows = [ins(g=i % 2, s="x" if i % 3 else "y", bidder=b, price=p)
            for i, (b, p) in enumerate([(1, 5), (1, 5), (2, 50), (1, 7), (3, None), (None, 8), (2, 5), (4, 60), (1, 50)])]
    ticks = [
        {"r": []},                                                   # the global row over nothing
        {"r": rows + [rows[0]]},                                     # row 0 twice
        {"r": [dele(**rows[0]["insert"])]},                          # one copy: every pair stays
        {"r": [dele(**rows[0]["insert"]), dele(**rows[3]["insert"])]},  # the last copy: its pairs leave
        {"r": [{"weight": 2, "data": {"g": 0, "s": "x", "bidder": 1, "price": 5}}, ins(g=0, s="x", bidder=9, price=None)]},
        {"r": []},
        {"r": [dele(**r["insert"]) for r in rows[4:]]},              # groups emptied, values left by others
        {"r": [ins(g=1, s="y", bidder=2, price=50), ins(g=5, s=None, bidder=None, price=None)]},
        {"r": [dele(g=0, s="x", bidder=1, price=5), dele(g=0, s="x", bidder=1, price=5), dele(g=0, s="x", bidder=9, price=None)]},
    ]
    return doc, ticks


def joins():
    """Inner, cartesian, semi-, anti- and left joins, union and difference, a filter and
    a map, under inserts and deletes on both sides (NULL keys included)."""
    doc = circuit(
        {"l": schema("k:bigint", "x:bigint"), "r": schema("rk:bigint", "y:bigint")},
        [("inner", "join", {"left_keys": ["k"], "right_keys": ["rk"]}),
         ("cross", "join", {"left_keys": [], "right_keys": []}),
         ("semi", "semijoin", {"left_keys": ["k"], "right_keys": ["rk"]}),
         ("anti", "antijoin", {"left_keys": ["k"], "right_keys": ["rk"]}),
         ("outer", "left_join", {"left_keys": ["k"], "right_keys": ["rk"]}),
         ("halves", "map", {"columns": [{"name": "k", "expr": "k"}, {"name": "x", "expr": "x / 2"}]}),
         ("big", "filter", {"predicate": "x > 1 OR x IS NULL"}),
         ("both", "union", {}), ("rest", "difference", {}),
         *[(f"o_{n}", "output", {}) for n in ("inner", "cross", "semi", "anti", "outer", "halves", "both", "rest")]],
        ["l.out->inner.left", "r.out->inner.right", "l.out->cross.left", "r.out->cross.right", "l.out->semi.left",
         "r.out->semi.right", "l.out->anti.left", "r.out->anti.right", "l.out->outer.left", "r.out->outer.right",
         "l.out->halves.in", "l.out->big.in", "l.out->both.a", "big.out->both.b", "l.out->rest.a", "big.out->rest.b",
         *[f"{n}.out->o_{n}.in" for n in ("inner", "cross", "semi", "anti", "outer", "halves", "both", "rest")]])
    ticks = [
        {"l": [ins(k=1, x=1), ins(k=1, x=4), ins(k=2, x=3), ins(k=None, x=5)], "r": [ins(rk=1, y=10), ins(rk=None, y=0)]},
        {"r": [ins(rk=2, y=20), ins(rk=1, y=11)]},
        {"l": [dele(k=1, x=4), ins(k=3, x=0)], "r": [dele(rk=1, y=10)]},
        {"r": [dele(rk=1, y=11), dele(rk=2, y=20)]},
        {"l": [{"weight": 2, "data": {"k": 2, "x": 3}}], "r": [ins(rk=2, y=21)]},
    ]
    return doc, ticks


def over_rows():
    """Window aggregates (AGG OVER): a ROWS frame of 2 preceding rows, one from 1 preceding
    to 1 following, a running total (RANGE to the current row, ties as peers), one from the
    current row's peers to the end, the whole partition without ORDER BY, and a global one:
    NULL values and NULL order keys, a row of weight 2, deletes in the middle and at the
    ends of a partition, a partition emptied."""
    aggs = lambda *fns: [{"fn": fn, "expr": None if fn == "count" else e, "as": f"{fn}_{i}"} for i, (fn, e) in enumerate(fns)]
    doc = circuit(
        {"r": schema("g:string", "t:bigint", "v:bigint", "x:double")},
        [("last3", "window_aggregate", {"group_by": ["g"], "order_by": [{"column": "t"}], "frame": {"unit": "rows", "start": -2, "end": 0},
                                        "aggregates": aggs(("avg", "v"), ("sum", "v"), ("min", "v"), ("max", "x"), ("count", None))}),
         ("around", "window_aggregate", {"group_by": ["g"], "order_by": [{"column": "t", "desc": True}], "frame": {"unit": "rows", "start": -1, "end": 1},
                                         "aggregates": aggs(("sum", "x"), ("avg", "x"), ("count", "v"))}),
         ("running", "window_aggregate", {"group_by": ["g"], "order_by": [{"column": "t"}],
                                          "aggregates": aggs(("sum", "v"), ("max", "v"), ("sum", "x"))}),
         ("rest", "window_aggregate", {"group_by": ["g"], "order_by": [{"column": "t"}], "frame": {"unit": "range", "start": 0, "end": None},
                                       "aggregates": aggs(("min", "x"), ("count", None), ("avg", "v"))}),
         ("whole", "window_aggregate", {"group_by": ["g"], "aggregates": aggs(("sum", "v * 2"), ("count", None))}),
         ("everyone", "window_aggregate", {"order_by": [{"column": "v"}, {"column": "t"}], "frame": {"unit": "rows", "start": None, "end": 0},
                                           "aggregates": aggs(("max", "g"), ("avg", "x"))}),
         *[(f"o_{n}", "output", {}) for n in ("last3", "around", "running", "rest", "whole", "everyone")]],
        [*[f"r.out->{n}.in" for n in ("last3", "around", "running", "rest", "whole", "everyone")],
         *[f"{n}.out->o_{n}.in" for n in ("last3", "around", "running", "rest", "whole", "everyone")]])
    rows = [ins(g="a", t=t, v=v, x=x) for t, v, x in [(1, 5, 0.5), (2, None, 1.25), (2, 7, None), (4, 3, 2.5), (None, 1, 0.1), (6, 9, 3.0)]]
    rows += [ins(g="b", t=t, v=v, x=x) for t, v, x in [(1, 2, 1.0), (3, 2, 1.0), (5, -4, 7.5)]]
    ticks = [
        {"r": rows},
        {"r": [dele(g="a", t=2, v=7, x=None), ins(g="a", t=3, v=8, x=0.75), {"weight": 2, "data": {"g": "b", "t": 2, "v": 6, "x": 0.5}}]},
        {"r": [dele(g="a", t=None, v=1, x=0.1), dele(g="a", t=6, v=9, x=3.0), ins(g="c", t=1, v=1, x=1.0)]},
        {"r": [dele(g="b", t=2, v=6, x=0.5), ins(g="a", t=0, v=-3, x=None)]},
        {"r": [dele(g="c", t=1, v=1, x=1.0)]},
        {"r": [dele(**r["insert"]) for r in rows[6:]] + [dele(g="b", t=2, v=6, x=0.5)]},
    ]
    return doc, ticks


def asof():
    """As-of joins in each direction (>=, >, <=, <), LEFT and inner: ties in time on the
    right (the greatest row wins), NULL keys and times on both sides, a left row of
    weight 2, right rows inserted between, before and after the left times, deleted (the
    matched one: its left rows re-match) and the same row twice."""
    directions = {"ge": (">=", True), "gt": (">", True), "le": ("<=", True), "lt": ("<", False), "ge_inner": (">=", False)}
    doc = circuit(
        {"l": schema("k:bigint", "t:bigint", "x:string"), "r": schema("rk:bigint", "rt:bigint", "v:string")},
        [*[(n, "asof_join", {"left_keys": ["k"], "right_keys": ["rk"], "left_time": "t", "right_time": "rt",
                             "match": m, "outer": outer}) for n, (m, outer) in directions.items()],
         *[(f"o_{n}", "output", {}) for n in directions]],
        [*[f"l.out->{n}.left" for n in directions], *[f"r.out->{n}.right" for n in directions],
         *[f"{n}.out->o_{n}.in" for n in directions]])
    ticks = [
        {"l": [ins(k=1, t=10, x="a"), ins(k=1, t=20, x="b"), ins(k=2, t=5, x="c"), ins(k=None, t=5, x="d"),
               ins(k=1, t=None, x="e")],
         "r": [ins(rk=1, rt=10, v="p"), ins(rk=1, rt=10, v="q"), ins(rk=1, rt=15, v=None), ins(rk=None, rt=1, v="n")]},
        {"r": [ins(rk=1, rt=18, v="s"), ins(rk=2, rt=5, v="t"), ins(rk=1, rt=None, v="u")]},
        {"l": [{"weight": 2, "data": {"k": 1, "t": 16, "x": "f"}}], "r": [dele(rk=1, rt=10, v="q")]},
        {"r": [dele(rk=1, rt=18, v="s"), ins(rk=1, rt=25, v="w"), ins(rk=1, rt=25, v="w")]},
        {"l": [dele(k=1, t=10, x="a"), ins(k=2, t=7, x="g")], "r": [dele(rk=2, rt=5, v="t"), ins(rk=2, rt=6, v="y")]},
        {"r": [dele(rk=1, rt=25, v="w"), dele(rk=1, rt=15, v=None)]},
    ]
    return doc, ticks


CASES = {"transactions": lambda: example("transactions"), "word_count": lambda: example("word_count"),
         "big_orders": lambda: example("big_orders"), "order_tags": lambda: example("order_tags"),
         "extremes": extremes, "distincts": distincts, "joins": joins, "over_rows": over_rows, "asof": asof}


@pytest.mark.parametrize("case", list(CASES))
def test_reference_equals_duckdb(case):
    doc, ticks = CASES[case]()
    plan = compile_plan(doc)
    assert check(doc, ticks, [ReferenceRuntime(plan)]) == len(ticks) * len(plan.views)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("case", ["extremes", "distincts", "joins", "over_rows", "asof"])
def test_spark_equals_duckdb(spark, case, mode):
    from dbsp.spark import SparkRuntime

    doc, ticks = CASES[case]()
    plan = compile_plan(doc)
    assert check(doc, ticks, [SparkRuntime(plan, spark, **MODES[mode])]) == len(ticks) * len(plan.views)


def test_the_oracle_sees_a_wrong_answer():
    """The oracle is not vacuous: an engine output off by one row fails it."""
    doc, ticks = extremes()
    oracle = Oracle(doc)
    oracle.push(ticks[0])
    plan = compile_plan(doc)
    rt = ReferenceRuntime(plan)
    out = rt.step({n: changes_from_records(r, plan.inputs[n]) for n, r in ticks[0].items()}).outputs
    assert_matches(oracle, out, "tick 0")
    out["o2"] = out["o2"] + ZSet([((0, 1), 1)])
    with pytest.raises(AssertionError, match="view o2"):
        assert_matches(oracle, out, "tick 0")
