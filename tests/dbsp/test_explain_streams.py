"""dbsp.explain on circuits with the DBSP primitives (z⁻¹, I, D), which run as drawn: a
node's value at a tick is its stream value, a view's contents the sum of what it
emitted. A row of I(x) at t is explained by the values of x at the ticks ≤ t that carry
it; a change of D(x) at t by x at t less x at t − 1; z⁻¹(x) at t by x at t − 1. The
derivations are written out by hand; trees as in test_explain_windows (kind, node,
tick, row, weight or before->after).

The pushes of x (one bigint column k) in the first circuit:
  tick 0: +1 +2      tick 1: +3      tick 2: +1 −2
so x[t] is that change, I(x): {1,2}, {1,2,3}, {1:2, 3:1}; D(x): {1,2}, {3,−1,−2},
{1,−2,−3}; z⁻¹(x): {}, {1,2}, {3}."""
import pytest

from dbsp import ZSet, compile_plan
from dbsp.explain import RowNotFound, explain
from tests.dbsp.helpers import circuit, schema
from tests.dbsp.test_explain_windows import render, tree


@pytest.fixture(scope="module")
def primitives():
    doc = circuit({"x": schema("k:bigint")},
                  [("ix", "integrate", {}), ("dx", "differentiate", {}), ("zx", "delay", {}),
                   ("total", "output", {}), ("diff", "output", {}), ("prev", "output", {})],
                  ["x.out->ix.in", "x.out->dx.in", "x.out->zx.in", "ix.out->total.in", "dx.out->diff.in",
                   "zx.out->prev.in"])
    changes = [{"x": ZSet([((1,), 1), ((2,), 1)])}, {"x": ZSet([((3,), 1)])}, {"x": ZSet([((1,), 1), ((2,), -1)])}]
    return compile_plan(doc), changes


def test_a_row_of_I_is_the_changes_of_x_through_the_tick_that_carry_it(primitives):
    plan, changes = primitives
    e = explain(plan, changes, 2, "total", (1,))
    assert (e.weight, e.before) == (4, 2)  # the view sums I(x): 1 + 1 + 2
    assert render(e.change) == tree("""
        output total t2 (1) 2->4
          [the view of its input]
            integrate ix t2 (1) w2
              [I: the sum of the values of 'x' through tick 2; those that carry it (ticks 0, 2)]
                input x t0 (1) w1
                input x t2 (1) w1
    """)
    assert [u.tick for u in e.change.groups[0].uses[0].step.groups[0].uses] == [0, 2]
    assert [(s.node, s.row, s.tick, before, after) for s, before, after in e.causes] == [("x", (1,), 2, 1, 2)]
    assert render(e.contents)[:2] == ["output total t2 (1) w4",
                                      "  [the sum of its values through tick 2; those that carry it (ticks 0, 1, 2)]"]
    assert [(u.step.tick, u.step.after) for u in e.contents.groups[0].uses] == [(0, 1), (1, 1), (2, 2)]


def test_a_change_of_D_is_x_now_less_x_the_tick_before(primitives):
    plan, changes = primitives
    e = explain(plan, changes, 2, "diff", (2,))
    assert (e.weight, e.before) == (-1, 0)
    assert render(e.change) == tree("""
        output diff t2 (2) 0->-1
          [the view of its input]
            differentiate dx t2 (2) w-1
              [D: its weight in 'x' at tick 2 (-1)]
                input x t2 (2) w-1
              [less its weight in 'x' at tick 1 (0)]
    """)
    gone = explain(plan, changes, 1, "diff", (1,))  # 1 pushed at tick 0, not at 1: D retracts it
    assert gone.contents is None
    assert render(gone.change) == tree("""
        output diff t1 (1) 1->0
          [the view of its input]
            differentiate dx t1 (1) w-1
              [D: its weight in 'x' at tick 1 (0)]
              [less its weight in 'x' at tick 0 (1)]
                input x t0 (1) w1
    """)
    assert gone.causes == []  # nothing pushed at tick 1 carries 1: it is x's past that goes


def test_a_row_of_z_is_the_value_of_x_the_tick_before(primitives):
    plan, changes = primitives
    e = explain(plan, changes, 2, "prev", (3,), mode="change")
    assert render(e.change) == tree("""
        output prev t2 (3) 0->1
          [the view of its input]
            delay zx t2 (3) w1
              [z⁻¹: the value of 'x' at tick 1]
                input x t1 (3) w1
    """)
    with pytest.raises(RowNotFound):
        explain(plan, changes, 0, "prev", (1,))  # z⁻¹ holds nothing at tick 0


def test_a_feedback_loop_through_z_is_followed_back_tick_by_tick_to_the_push():
    """u = filter(x) + z⁻¹(u): a running sum by feedback. x gets 2 (and 1, filtered out)
    at tick 0, 2 again at tick 2: u[2] holds 2 twice, once pushed then and once carried
    from tick 0 through the delay at ticks 1 and 2."""
    doc = circuit({"x": schema("k:bigint")},
                  [("big", "filter", {"predicate": "k > 1"}), ("u", "union", {}), ("back", "delay", {}),
                   ("o", "output", {})],
                  ["x.out->big.in", "big.out->u.a", "back.out->u.b", "u.out->back.in", "u.out->o.in"])
    plan = compile_plan(doc)
    changes = [{"x": ZSet([((2,), 1), ((1,), 1)])}, {}, {"x": ZSet([((2,), 1)])}]
    e = explain(plan, changes, 2, "o", (2,), mode="change")
    assert (e.weight, e.before) == (4, 2)  # the view sums u: 1 + 1 + 2
    assert render(e.change) == tree("""
        output o t2 (2) 2->4
          [the view of its input]
            union u t2 (2) w2
              [from a]
                filter big t2 (2) w1
                  [passes k > 1]
                    input x t2 (2) w1
              [from b]
                delay back t2 (2) w1
                  [z⁻¹: the value of 'u' at tick 1]
                    union u t1 (2) w1
                      [from b]
                        delay back t1 (2) w1
                          [z⁻¹: the value of 'u' at tick 0]
                            union u t0 (2) w1
                              [from a]
                                filter big t0 (2) w1
                                  [passes k > 1]
                                    input x t0 (2) w1
    """)
    with pytest.raises(RowNotFound):
        explain(plan, changes, 2, "o", (1,))  # filtered out at every tick


def test_a_window_run_as_drawn_is_its_rows_of_the_value_at_the_tick():
    """e → I → tumbling window of 10 → view: run as drawn, the window applies to I(e) at each
    tick (no lateness). At tick 1 I(e) holds 12 (pushed at tick 0), 3 and 15 (tick 1):
    [10, 20) counts 12 and 15."""
    doc = circuit({"e": schema("t:bigint")},
                  [("ie", "integrate", {}), ("w", "tumbling_window", {"time": "t", "size": 10, "group_by": [],
                                                                      "aggregates": [{"fn": "count", "as": "n"}]}),
                   ("o", "output", {})],
                  ["e.out->ie.in", "ie.out->w.in", "w.out->o.in"])
    plan = compile_plan(doc)
    changes = [{"e": ZSet([((12,), 1)])}, {"e": ZSet([((3,), 1), ((15,), 1)])}]
    e = explain(plan, changes, 1, "o", (10, 20, 2), mode="change")
    assert render(e.change) == tree("""
        output o t1 (10, 20, 2) 0->1
          [the view of its input]
            tumbling_window w t1 (10, 20, 2) w1
              [window [10, 20) of group all rows: 2 rows of its input at tick 1]
                integrate ie t1 (12) w1
                  [I: the sum of the values of 'e' through tick 1; those that carry it (tick 0)]
                    input e t0 (12) w1
                integrate ie t1 (15) w1
                  [I: the sum of the values of 'e' through tick 1; those that carry it (tick 1)]
                    input e t1 (15) w1
    """)
