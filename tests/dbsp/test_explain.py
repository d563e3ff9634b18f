"""dbsp.explain: the derivation of a row, written out by hand for the transactions and
transitive-closure demos (examples/circuits), and for groups, distinct, difference,
filter and map on small circuits. Each tree is rendered one step a line: operator, node
(@iteration inside the fixed point), row, weight (contents) or before->after (change),
and the group labels; a row explained earlier in the same tree reads `= node row`."""
import json
from pathlib import Path

import pytest

from dbsp import ZSet, compile_plan
from dbsp.capture import capture
from dbsp.explain import NotExplainable, RowNotFound, explain
from dbsp.runtime import changes_from_records

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "circuits"


def _example(name):
    plan = compile_plan(json.loads((EXAMPLES / f"{name}.json").read_text()))
    lines = (EXAMPLES / f"{name}.pushes.jsonl").read_text().splitlines()
    return plan, [{inp: changes_from_records(recs, plan.schemas[inp]) for inp, recs in json.loads(line).items()}
                  for line in lines if line.strip()]


def render(step, depth=0) -> list[str]:
    at = f"@{step.iteration[0]}" if step.iteration else ""
    weight = f"{step.before}->{step.after}" if step.mode == "change" else f"w{step.after}"
    lines = ["  " * depth + f"{step.kind} {step.node}{at} {step.row} {weight}"]
    for group in step.groups:
        more = f" ({group.total})" if group.total != len(group.uses) else ""
        lines.append("  " * depth + f"  [{group.label}]{more}")
        for use in group.uses:
            if use.step is not None:
                lines += render(use.step, depth + 2)
            elif use.ref is not None:
                lines.append("  " * (depth + 2) + f"= {use.node} {use.row}")
            else:
                lines.append("  " * (depth + 2) + f"... {use.node} {use.row}")
    return lines


def tree(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    return [line[indent:] for line in lines]


def causes(step):
    """The input changes a change's derivation reaches: (input, row, before, after)."""
    return sorted({(s.node, s.row, s.before, s.after) for s in step.walk() if s.is_input and s.mode == "change"})


# ---- transitive closure ----------------------------------------------------------------
PATH_0_3 = """
output closure (0, 3) w1
  [the view of its input]
    fixedpoint closure_out (0, 3) w1
      [its value at iteration 3]
        export closure_out@2 (0, 3) w1
          [leaves the fixed point]
            distinct paths@2 (0, 3) w1
              [the input holds it with weight 1]
                union all_paths@2 (0, 3) w1
                  [from b]
                    map longer@2 (0, 3) w1
                      [maps to it]
                        join extend@2 (0, 2, 3) w1
                          [pair on mid = 2]
                            map path_ends@2 (0, 2) w1
                              [maps to it]
                                delay paths_before@2 (0, 2) w1
                                  [from iteration 1]
                                    distinct paths@1 (0, 2) w1
                                      [the input holds it with weight 1]
                                        union all_paths@1 (0, 2) w1
                                          [from b]
                                            map longer@1 (0, 2) w1
                                              [maps to it]
                                                join extend@1 (0, 1, 2) w1
                                                  [pair on mid = 1]
                                                    map path_ends@1 (0, 1) w1
                                                      [maps to it]
                                                        delay paths_before@1 (0, 1) w1
                                                          [from iteration 0]
                                                            distinct paths@0 (0, 1) w1
                                                              [the input holds it with weight 1]
                                                                union all_paths@0 (0, 1) w1
                                                                  [from a]
                                                                    import edges_in@0 (0, 1) w1
                                                                      [from outside the fixed point]
                                                                        input edges (0, 1) w1
                                                    map hops@0 (1, 2) w1
                                                      [maps to it]
                                                        import edges_in@0 (1, 2) w1
                                                          [from outside the fixed point]
                                                            input edges (1, 2) w1
                            map hops@0 (2, 3) w1
                              [maps to it]
                                import edges_in@0 (2, 3) w1
                                  [from outside the fixed point]
                                    input edges (2, 3) w1
"""


def test_a_path_is_an_edge_joined_to_a_path_found_one_iteration_earlier():
    plan, changes = _example("transitive_closure")
    e = explain(plan, changes, 0, "closure", (0, 3))
    assert (e.weight, e.before, e.change is not None) == (1, 0, True)  # inserted at tick 0
    assert render(e.contents) == tree(PATH_0_3)
    assert [(s.node, s.row) for s in e.inputs("contents")] == [("edges", (0, 1)), ("edges", (1, 2)), ("edges", (2, 3))]
    assert causes(e.change) == [("edges", (0, 1), 0, 1), ("edges", (1, 2), 0, 1), ("edges", (2, 3), 0, 1)]


DELETED_0_3 = """
output closure (0, 3) 1->0
  [the view of its input]
    fixedpoint closure_out (0, 3) 1->0
      [its value at iteration 4]
        export closure_out@2 (0, 3) 1->0
          [leaves the fixed point]
            distinct paths@2 (0, 3) 1->0
              [its input weight went from 1 to 0]
                union all_paths@2 (0, 3) 1->0
                  [from b]
                    map longer@2 (0, 3) 1->0
                      [maps to it]
                        join extend@2 (0, 2, 3) 1->0
                          [pair on mid = 2]
                            map path_ends@2 (0, 2) 1->0
                              [maps to it]
                                delay paths_before@2 (0, 2) 1->0
                                  [from iteration 1]
                                    distinct paths@1 (0, 2) 1->0
                                      [its input weight went from 1 to 0]
                                        union all_paths@1 (0, 2) 1->0
                                          [from b]
                                            map longer@1 (0, 2) 1->0
                                              [maps to it]
                                                join extend@1 (0, 1, 2) 1->0
                                                  [pair on mid = 1]
                                                    map path_ends@1 (0, 1) w1
                                                      [maps to it]
                                                        delay paths_before@1 (0, 1) w1
                                                          [from iteration 0]
                                                            distinct paths@0 (0, 1) w1
                                                              [the input holds it with weight 1]
                                                                union all_paths@0 (0, 1) w1
                                                                  [from a]
                                                                    import edges_in@0 (0, 1) w1
                                                                      [from outside the fixed point]
                                                                        input edges (0, 1) w1
                                                    map hops@0 (1, 2) 1->0
                                                      [maps to it]
                                                        import edges_in@0 (1, 2) 1->0
                                                          [from outside the fixed point]
                                                            input edges (1, 2) 1->0
                            map hops@0 (2, 3) w1
                              [maps to it]
                                import edges_in@0 (2, 3) w1
                                  [from outside the fixed point]
                                    input edges (2, 3) w1
"""


def test_a_deleted_path_is_explained_by_the_edge_deleted_at_that_tick():
    plan, changes = _example("transitive_closure")
    e = explain(plan, changes, 2, "closure", (0, 3))  # tick 2 deletes 1->2
    assert (e.weight, e.before, e.contents) == (0, 1, None)
    assert render(e.change) == tree(DELETED_0_3)
    assert causes(e.change) == [("edges", (1, 2), 1, 0)]


def test_the_changes_of_tick_3_come_from_its_own_input_changes():
    plan, changes = _example("transitive_closure")  # tick 3: +1->2, -0->1
    assert causes(explain(plan, changes, 3, "closure", (1, 3)).change) == [("edges", (1, 2), 0, 1)]
    assert causes(explain(plan, changes, 3, "closure", (0, 1)).change) == [("edges", (0, 1), 1, 0)]
    unchanged = explain(plan, changes, 3, "closure", (2, 4))
    assert unchanged.change is None and unchanged.weight == 1


# ---- transactions ----------------------------------------------------------------------
TOTAL_AT_2 = """
output total (0,) w1
  [the view of its input]
    aggregate sum_of_balances (0,) w1
      [group all rows: 3 rows]
        map balances (1, -30) w1
          [maps to it]
            join by_account (1, 20, 1, 50) w1
              [pair on to_acct = 1]
                aggregate credits_by_account (1, 20) w1
                  [group to_acct = 1: 1 row]
                    input transactions (2, 3, 1, 20) w1
                aggregate debits_by_account (1, 50) w1
                  [group from_acct = 1: 1 row]
                    input transactions (0, 1, 2, 50) w1
        map balances (2, 20) w1
          [maps to it]
            join by_account (2, 50, 2, 30) w1
              [pair on to_acct = 2]
                aggregate credits_by_account (2, 50) w1
                  [group to_acct = 2: 1 row]
                    = transactions (0, 1, 2, 50)
                aggregate debits_by_account (2, 30) w1
                  [group from_acct = 2: 1 row]
                    input transactions (1, 2, 3, 30) w1
        map balances (3, 10) w1
          [maps to it]
            join by_account (3, 30, 3, 20) w1
              [pair on to_acct = 3]
                aggregate credits_by_account (3, 30) w1
                  [group to_acct = 3: 1 row]
                    = transactions (1, 2, 3, 30)
                aggregate debits_by_account (3, 20) w1
                  [group from_acct = 3: 1 row]
                    = transactions (2, 3, 1, 20)
"""

TOTAL_CHANGE_AT_2 = """
output total (0,) 0->1
  [the view of its input]
    aggregate sum_of_balances (0,) 0->1
      [group all rows: 1 row before, 3 after; the rows that changed]
        map balances (1, -30) 0->1
          [maps to it]
            join by_account (1, 20, 1, 50) 0->1
              [pair on to_acct = 1]
                aggregate credits_by_account (1, 20) 0->1
                  [group to_acct = 1: 0 rows before, 1 after; the rows that changed]
                    input transactions (2, 3, 1, 20) 0->1
                aggregate debits_by_account (1, 50) w1
                  [group from_acct = 1: 1 row]
                    input transactions (0, 1, 2, 50) w1
        map balances (3, 10) 0->1
          [maps to it]
            join by_account (3, 30, 3, 20) 0->1
              [pair on to_acct = 3]
                aggregate credits_by_account (3, 30) w1
                  [group to_acct = 3: 1 row]
                    input transactions (1, 2, 3, 30) w1
                aggregate debits_by_account (3, 20) 0->1
                  [group from_acct = 3: 0 rows before, 1 after; the rows that changed]
                    = transactions (2, 3, 1, 20)
      [the group's rows that did not change]
        map balances (2, 20) w1
          [maps to it]
            join by_account (2, 50, 2, 30) w1
              [pair on to_acct = 2]
                aggregate credits_by_account (2, 50) w1
                  [group to_acct = 2: 1 row]
                    = transactions (0, 1, 2, 50)
                aggregate debits_by_account (2, 30) w1
                  [group from_acct = 2: 1 row]
                    = transactions (1, 2, 3, 30)
"""


def test_the_total_is_the_sum_of_every_balance_each_a_pair_of_credits_and_debits():
    plan, changes = _example("transactions")
    e = explain(plan, changes, 2, "total", (0,))
    assert render(e.contents) == tree(TOTAL_AT_2)
    assert render(e.change) == tree(TOTAL_CHANGE_AT_2)
    assert causes(e.change) == [("transactions", (2, 3, 1, 20), 0, 1)]  # the tick's one push


def test_the_old_total_is_retracted_by_the_same_input_change():
    plan, changes = _example("transactions")
    e = explain(plan, changes, 2, "total", (20,))  # -(20) at tick 2
    assert (e.contents, e.before, e.weight) == (None, 1, 0)
    assert causes(e.change) == [("transactions", (2, 3, 1, 20), 0, 1)]
    assert [g.label for g in e.change.groups[0].uses[0].step.groups] == [
        "group all rows: 1 row before, 3 after; the rows that changed", "the group's rows that did not change"]


# ---- groups, distinct, difference, filter, map ----------------------------------------------
def _circuit(nodes, edges):
    return compile_plan({"format": "dbspweb.circuit", "version": 1, "nodes": nodes, "edges": [
        {"from": {"node": a, "port": pa}, "to": {"node": b, "port": pb}} for a, pa, b, pb in edges]})


ITEMS = {"id": "items", "kind": "input", "params": {"schema": [{"name": "k", "type": "bigint"}, {"name": "v", "type": "bigint"}]}}


def test_a_large_group_shows_a_page_of_its_rows_and_their_count():
    plan = _circuit([ITEMS, {"id": "sums", "kind": "aggregate", "params": {"group_by": ["k"], "aggregates": [
        {"fn": "sum", "expr": "v", "as": "s"}, {"fn": "count", "as": "n"}]}}, {"id": "out", "kind": "output", "params": {}}],
        [("items", "out", "sums", "in"), ("sums", "out", "out", "in")])
    rows = [((1, v), 1) for v in range(1000)] + [((2, 5), 1)]
    changes = [{"items": ZSet(rows)}]
    e = explain(plan, changes, 0, "out", (1, sum(range(1000)), 1000), page_size=20)
    group = e.contents.groups[0].uses[0].step.groups[0]
    assert (group.label, group.total, len(group.uses)) == ("group k = 1: 1000 rows", 1000, 20)
    assert [u.row for u in group.uses] == [(1, v) for v in range(20)]
    page = explain(plan, changes, 0, "sums", (1, sum(range(1000)), 1000), page=2, page_size=20)
    group = page.contents.groups[0]
    assert (group.offset, [u.row for u in group.uses]) == (40, [(1, v) for v in range(40, 60)])


def test_distinct_shows_the_equal_input_row_and_its_weight():
    plan = _circuit([{**ITEMS, "params": {**ITEMS["params"], "allow_negative": True}},
                     {"id": "d", "kind": "distinct", "params": {}}, {"id": "out", "kind": "output", "params": {}}],
                    [("items", "out", "d", "in"), ("d", "out", "out", "in")])
    changes = [{"items": ZSet([((1, 1), 3)])}, {"items": ZSet([((1, 1), -1)])}, {"items": ZSet([((1, 1), -2)])}]
    assert render(explain(plan, changes, 1, "d", (1, 1)).contents) == tree("""
        distinct d (1, 1) w1
          [the input holds it with weight 2]
            input items (1, 1) w2
    """)
    gone = explain(plan, changes, 2, "d", (1, 1))
    assert render(gone.change) == tree("""
        distinct d (1, 1) 1->0
          [its input weight went from 2 to 0]
            input items (1, 1) 2->0
    """)
    with pytest.raises(RowNotFound, match="did not change"):
        explain(plan, changes, 1, "d", (1, 1), mode="change")  # 3 -> 2: distinct still 1


def test_difference_shows_what_a_holds_and_what_b_takes_away():
    a = {"id": "a", "kind": "input", "params": {"schema": [{"name": "x", "type": "bigint"}]}}
    b = {"id": "b", "kind": "input", "params": {"schema": [{"name": "x", "type": "bigint"}]}}
    plan = _circuit([a, b, {"id": "minus", "kind": "difference", "params": {}}, {"id": "out", "kind": "output", "params": {}}],
                    [("a", "out", "minus", "a"), ("b", "out", "minus", "b"), ("minus", "out", "out", "in")])
    changes = [{"a": ZSet([((7,), 2)]), "b": ZSet([((7,), 1)])}, {"b": ZSet([((7,), -1)])}]
    assert render(explain(plan, changes, 0, "minus", (7,)).contents) == tree("""
        difference minus (7,) w1
          [from a]
            input a (7,) w2
          [subtracted (from b)]
            input b (7,) w1
    """)
    grew = explain(plan, changes, 1, "minus", (7,))
    assert render(grew.change) == tree("""
        difference minus (7,) 1->2
          [subtracted (from b)]
            input b (7,) 1->0
    """)


def test_filter_and_map_show_every_row_that_maps_to_it():
    plan = _circuit([ITEMS, {"id": "big", "kind": "filter", "params": {"predicate": "v > 10"}},
                     {"id": "keys", "kind": "map", "params": {"columns": [{"name": "k", "expr": "k"}]}},
                     {"id": "out", "kind": "output", "params": {}}],
                    [("items", "out", "big", "in"), ("big", "out", "keys", "in"), ("keys", "out", "out", "in")])
    changes = [{"items": ZSet([((1, 5), 1), ((1, 20), 1), ((1, 30), 1), ((2, 40), 1)])}]
    assert render(explain(plan, changes, 0, "out", (1,)).contents) == tree("""
        output out (1,) w2
          [the view of its input]
            map keys (1,) w2
              [maps to it]
                filter big (1, 20) w1
                  [passes v > 10]
                    input items (1, 20) w1
                filter big (1, 30) w1
                  [passes v > 10]
                    input items (1, 30) w1
    """)


# ---- bounds, refusals, and the oracle --------------------------------------------------------
def test_the_walk_stops_at_its_budget_and_says_so():
    plan, changes = _example("transitive_closure")
    e = explain(plan, changes, 0, "closure", (0, 3), max_steps=5, mode="contents")
    assert e.truncated and len(list(e.contents.walk())) == 5
    assert any(not u.followed for s in e.contents.walk() for g in s.groups for u in g.uses)


def test_a_row_not_in_the_view_and_unchanged_is_refused():
    plan, changes = _example("transitive_closure")
    with pytest.raises(RowNotFound, match="not in 'closure' at tick 1"):
        explain(plan, changes, 1, "closure", (4, 0))
    with pytest.raises(NotExplainable, match="no node 'nope'"):
        explain(plan, changes, 1, "nope", (4, 0))
    with pytest.raises(NotExplainable, match="give 1 iteration"):
        explain(plan, changes, 1, "paths", (0, 1))


@pytest.mark.parametrize("name", ["transactions", "transitive_closure", "word_count"])
def test_every_row_of_every_view_at_every_tick_reaches_rows_of_the_inputs(name):
    """Against the capture (the oracle's values): each step's weight is the node's, each
    contents leaf is a row of its input table then, each change leaf one of the tick's changes."""
    plan, changes = _example(name)
    for t in range(len(changes)):
        now, before = capture(plan, changes, t), (capture(plan, changes, t - 1) if t else {})
        for view in plan.views:
            rows = {r for r, _ in now[view].integral} | {r for r, _ in now[view].delta}
            for row in rows:
                e = explain(plan, changes, t, view, row)
                assert e.weight == now[view].integral.weight(row)
                for s in e.inputs("contents"):
                    assert s.after == now[s.node].integral.weight(s.row) != 0
                if now[view].delta.weight(row):
                    assert e.change is not None and e.change.after - e.change.before == now[view].delta.weight(row)
                    for s in e.inputs("change"):
                        if s.mode == "change":
                            assert s.after - s.before == changes[t][s.node].weight(s.row) != 0
                else:
                    assert e.change is None


# ---- semijoin, antijoin, left_join, top_k ---------------------------------------------------
def _keyed_pairs():
    orders = {"id": "orders", "kind": "input", "params": {"schema": [{"name": "id", "type": "bigint"}, {"name": "cust", "type": "bigint"}]}}
    blocked = {"id": "blocked", "kind": "input", "params": {"schema": [{"name": "cust", "type": "bigint"}]}}
    notes = {"id": "notes", "kind": "input", "params": {"schema": [{"name": "order_id", "type": "bigint"}, {"name": "note", "type": "string"}]}}
    keys = {"left_keys": ["cust"], "right_keys": ["cust"]}
    nodes = [orders, blocked, notes,
             {"id": "held", "kind": "semijoin", "params": keys}, {"id": "free", "kind": "antijoin", "params": keys},
             {"id": "marked", "kind": "left_join", "params": {"left_keys": ["id"], "right_keys": ["order_id"]}},
             {"id": "first", "kind": "top_k", "params": {"group_by": ["cust"], "order_by": [{"column": "id"}], "k": 1}},
             {"id": "near", "kind": "window_aggregate", "params": {"group_by": ["cust"], "order_by": [{"column": "id"}],
                                                                  "frame": {"unit": "rows", "start": -1, "end": 0},
                                                                  "aggregates": [{"fn": "count", "as": "n"}]}}]
    edges = [("orders", "out", "held", "left"), ("blocked", "out", "held", "right"),
             ("orders", "out", "free", "left"), ("blocked", "out", "free", "right"),
             ("orders", "out", "marked", "left"), ("notes", "out", "marked", "right"), ("orders", "out", "first", "in"),
             ("orders", "out", "near", "in")]
    for view in ("held", "free", "marked", "first", "near"):
        nodes.append({"id": f"{view}_out", "kind": "output", "params": {}})
        edges.append((view, "out", f"{view}_out", "in"))
    return _circuit(nodes, edges)


KEYED_CHANGES = [
    {"orders": ZSet([((1, 10), 1), ((2, 10), 1), ((3, 20), 1)]), "blocked": ZSet([((10,), 1)])},
    {"blocked": ZSet([((10,), -1), ((20,), 1)]), "notes": ZSet([((1, "rush"), 1)])},
]


def test_an_antijoin_row_appears_when_the_right_row_of_its_key_goes():
    plan = _keyed_pairs()
    e = explain(plan, KEYED_CHANGES, 1, "free", (1, 10))
    assert render(e.change) == tree("""
        antijoin free (1, 10) 0->1
          [the left row]
            input orders (1, 10) w1
          [right rows with cust = 10 that changed]
            input blocked (10,) 1->0
    """)
    assert render(explain(plan, KEYED_CHANGES, 0, "held", (2, 10)).contents) == tree("""
        semijoin held (2, 10) w1
          [the left row]
            input orders (2, 10) w1
          [right rows with cust = 10]
            input blocked (10,) w1
    """)


def test_a_left_join_row_is_a_pair_or_the_left_row_padded():
    plan = _keyed_pairs()
    assert render(explain(plan, KEYED_CHANGES, 1, "marked", (1, 10, 1, "rush")).contents) == tree("""
        left_join marked (1, 10, 1, 'rush') w1
          [pair on id = 1]
            input orders (1, 10) w1
            input notes (1, 'rush') w1
    """)
    assert render(explain(plan, KEYED_CHANGES, 1, "marked", (2, 10, None, None)).contents) == tree("""
        left_join marked (2, 10, None, None) w1
          [the left row, no right row has order_id = 2: padded with NULLs]
            input orders (2, 10) w1
    """)
    gone = explain(plan, KEYED_CHANGES, 1, "marked", (1, 10, None, None))
    assert causes(gone.change) == [("notes", (1, "rush"), 0, 1)]


def test_top_k_shows_the_group_the_row_was_ranked_in():
    plan = _keyed_pairs()
    assert render(explain(plan, KEYED_CHANGES, 0, "first", (1, 10)).contents) == tree("""
        top_k first (1, 10) w1
          [group cust = 10: 2 rows, the first 1 by id]
            input orders (1, 10) w1
            input orders (2, 10) w1
    """)


def test_a_window_aggregate_shows_the_partition_in_its_order():
    plan = _keyed_pairs()
    assert render(explain(plan, KEYED_CHANGES, 0, "near", (2, 10, 2)).contents) == tree("""
        window_aggregate near (2, 10, 2) w1
          [group cust = 10: 2 rows, in order of id]
            input orders (1, 10) w1
            input orders (2, 10) w1
    """)


def test_every_row_of_the_join_family_reaches_rows_of_the_inputs():
    plan, changes = _keyed_pairs(), KEYED_CHANGES
    for t in range(len(changes)):
        now = capture(plan, changes, t)
        for view in plan.views:
            for row in {r for r, _ in now[view].integral} | {r for r, _ in now[view].delta}:
                e = explain(plan, changes, t, view, row)
                assert e.weight == now[view].integral.weight(row)
                assert all(s.after == now[s.node].integral.weight(s.row) != 0 for s in e.inputs("contents"))
                assert all(s.after - s.before == changes[t][s.node].weight(s.row)
                           for s in e.inputs("change") if s.mode == "change")


def test_a_row_a_fixed_point_drops_at_a_later_iteration_is_explained_where_it_was():
    """s = distinct(a − z⁻¹(t)), t = distinct(z⁻¹(t) ∪ b): a row of a and b is in s at
    iteration 0 only (t is empty before it), so z⁻¹(s) holds it at iteration 1 only, from s at 0."""
    x = [{"name": "x", "type": "bigint"}]
    sub = {"nodes": [
        {"id": "a_in", "kind": "import", "params": {}}, {"id": "b_in", "kind": "import", "params": {}},
        {"id": "t_prev", "kind": "delay", "params": {}}, {"id": "t_all", "kind": "union", "params": {}},
        {"id": "t", "kind": "distinct", "params": {}}, {"id": "s_diff", "kind": "difference", "params": {}},
        {"id": "s", "kind": "distinct", "params": {}}, {"id": "s_prev", "kind": "delay", "params": {}},
        {"id": "s_out", "kind": "export", "params": {}}],
        "edges": [{"from": {"node": a, "port": pa}, "to": {"node": b, "port": pb}} for a, pa, b, pb in [
            ("t", "out", "t_prev", "in"), ("t_prev", "out", "t_all", "a"), ("b_in", "out", "t_all", "b"),
            ("t_all", "out", "t", "in"), ("a_in", "out", "s_diff", "a"), ("t_prev", "out", "s_diff", "b"),
            ("s_diff", "out", "s", "in"), ("s", "out", "s_prev", "in"), ("s_prev", "out", "s_out", "in")]]}
    plan = compile_plan({"format": "dbspweb.circuit", "version": 1, "nodes": [
        {"id": "a", "kind": "input", "params": {"schema": x}}, {"id": "b", "kind": "input", "params": {"schema": x}},
        {"id": "fp", "kind": "fixedpoint", "params": {}, "subcircuit": sub}, {"id": "view", "kind": "output", "params": {}}],
        "edges": [{"from": {"node": "a", "port": "out"}, "to": {"node": "fp", "port": "a_in"}},
                  {"from": {"node": "b", "port": "out"}, "to": {"node": "fp", "port": "b_in"}},
                  {"from": {"node": "fp", "port": "s_out"}, "to": {"node": "view", "port": "in"}}]})
    changes = [{"a": ZSet([((1,), 1), ((2,), 1)]), "b": ZSet([((2,), 1)])}]
    assert capture(plan, changes, 0)["view"].integral == ZSet([((1,), 1)])
    e = explain(plan, changes, 0, "s_prev", (2,), iteration=1)
    assert render(e.contents) == tree("""
        delay s_prev@1 (2,) w1
          [from iteration 0]
            distinct s@0 (2,) w1
              [the input holds it with weight 1]
                difference s_diff@0 (2,) w1
                  [from a]
                    import a_in@0 (2,) w1
                      [from outside the fixed point]
                        input a (2,) w1
    """)
    with pytest.raises(RowNotFound, match="not in 's_prev' at iteration"):
        explain(plan, changes, 0, "s_prev", (2,), iteration=2)
