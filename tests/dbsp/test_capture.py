"""dbsp.capture: every node's delta and contents at a tick, from the reference evaluator.
Checked against the views the run's ticks emit (their deltas, and their sums) and, for
inner nodes of a fixed point, against paths worked out by hand."""
import json
from pathlib import Path

import pytest

from dbsp import ZSet, compile_plan
from dbsp.capture import capture
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "circuits"


def _example(name):
    plan = compile_plan(json.loads((EXAMPLES / f"{name}.json").read_text()))
    lines = (EXAMPLES / f"{name}.pushes.jsonl").read_text().splitlines()
    changes = [{inp: changes_from_records(recs, plan.schemas[inp]) for inp, recs in json.loads(line).items()}
               for line in lines if line.strip()]
    return plan, changes


@pytest.mark.parametrize("name", ["transactions", "transitive_closure", "sensor_windows", "word_count"])
def test_views_at_every_tick_equal_what_the_ticks_emitted(name):
    plan, changes = _example(name)
    runtime, emitted = ReferenceRuntime(plan), []
    for change in changes:
        emitted.append(runtime.step(change).outputs)
    for t in range(len(changes)):
        at = capture(plan, changes, t)
        for view in plan.views:
            assert at[view].delta == emitted[t][view], (view, t)
            total = ZSet()
            for s in range(t + 1):
                total = total + emitted[s][view]
            assert at[view].integral == total, (view, t)


def test_an_input_node_holds_its_table_and_its_change():
    plan, changes = _example("transitive_closure")
    at = capture(plan, changes, 2)  # tick 2 deletes 1->2
    assert at["edges"].delta == ZSet([((1, 2), -1)])
    assert at["edges"].integral == ZSet([((0, 1), 1), ((2, 3), 1), ((3, 4), 1)])


def test_inner_nodes_of_the_fixed_point_per_iteration():
    plan, changes = _example("transitive_closure")
    at = capture(plan, changes, 0)  # edges 0->1, 1->2, 2->3
    paths = at["paths"].iterations
    assert paths[0] == ZSet([((0, 1), 1), ((1, 2), 1), ((2, 3), 1)])
    assert paths[1] == paths[0] + ZSet([((0, 2), 1), ((1, 3), 1)])
    assert at["paths"].integral == paths[1] + ZSet([((0, 3), 1)])


def test_every_node_of_a_windowed_circuit_holds_its_table_and_its_change():
    """Event-time windows replay tick by tick (lateness depends on order); the input
    node still holds its table and its change, not the table counted once per tick."""
    plan, changes = _example("sensor_windows")
    for t in range(len(changes)):
        at = capture(plan, changes, t)
        table = ZSet()
        for s in range(t + 1):
            table = table + changes[s]["readings"]
        assert at["readings"].integral == table, t
        assert at["readings"].delta == changes[t]["readings"], t


@pytest.mark.parametrize("name", ["transactions", "transitive_closure", "sensor_windows"])
def test_kept_nodes_carry_their_delta_at_every_tick_as_captured_tick_by_tick(name):
    """`keep` replays once and keeps each kept node's delta per tick: the same deltas as
    capturing each tick on its own (for whole-table circuits, by the two-step shortcut),
    and the contents at the last tick are their sum."""
    plan, changes = _example(name)
    last = len(changes) - 1
    kept = [n for n in plan.order if plan.operators[n].kind != "fixedpoint"]
    at = capture(plan, changes, last, keep=kept)
    for node in kept:
        assert len(at[node].history) == last + 1, node
        for t in range(last + 1):
            assert at[node].history[t] == capture(plan, changes, t)[node].delta, (node, t)
        total = ZSet()
        for delta in at[node].history:
            total = total + delta
        assert total == at[node].integral, node
    assert not capture(plan, changes, last)[kept[0]].history  # not kept: none


def test_kept_stream_values_of_a_circuit_run_as_drawn():
    """With z⁻¹, I and D the circuit runs as drawn: the history is each node's stream
    value per tick (x: the pushes; I(x): their running sum; D(x): x less x the tick before;
    z⁻¹(x): x the tick before), worked out by hand."""
    from tests.dbsp.helpers import circuit, schema

    doc = circuit({"x": schema("k:bigint")},
                  [("ix", "integrate", {}), ("dx", "differentiate", {}), ("zx", "delay", {}),
                   ("o_i", "output", {}), ("o_d", "output", {}), ("o_z", "output", {})],
                  ["x.out->ix.in", "x.out->dx.in", "x.out->zx.in", "ix.out->o_i.in", "dx.out->o_d.in", "zx.out->o_z.in"])
    plan = compile_plan(doc)
    a, b = ZSet([((1,), 1)]), ZSet([((2,), 1)])
    at = capture(plan, [{"x": a}, {"x": b}, {}], 2, keep=["x", "ix", "dx", "zx"])
    assert at["x"].history == [a, b, ZSet()]
    assert at["ix"].history == [a, a + b, a + b]
    assert at["dx"].history == [a, b - a, -b]
    assert at["zx"].history == [ZSet(), a, b]
