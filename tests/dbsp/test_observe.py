"""Runtime.step(observe=...): every node's value as a tick computes it, inner nodes of a
fixed point at every iteration (the reference evaluator). The inspector and explain
build on it."""
import json
from pathlib import Path

from dbsp import ZSet, compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "circuits"


def _load(name):
    plan = compile_plan(json.loads((EXAMPLES / f"{name}.json").read_text()))
    pushes = [json.loads(line) for line in (EXAMPLES / f"{name}.pushes.jsonl").read_text().splitlines() if line.strip()]
    return plan, pushes


def test_every_node_is_observed_and_views_match_the_outputs():
    plan, pushes = _load("transactions")
    rt = ReferenceRuntime(plan)
    seen = {}
    result = rt.step({name: changes_from_records(recs, plan.schemas[name]) for name, recs in pushes[0].items()},
                     observe=lambda node, value, **kw: seen.setdefault(node, value))
    assert set(plan.order) <= set(seen)
    for view in plan.views:
        # the reference evaluator's output node differentiates: what it emits is the tick's change
        assert rt.collect(seen[view]) == result.outputs[view]


def test_fixed_point_inner_nodes_are_observed_per_iteration():
    plan, pushes = _load("transitive_closure")
    rt = ReferenceRuntime(plan)
    by_iteration = {}

    def observe(node, value, iteration=None):
        if iteration is not None:
            by_iteration.setdefault(node, {})[iteration] = value

    rt.step({"edges": changes_from_records(pushes[0]["edges"], plan.schemas["edges"])}, observe=observe)
    paths = by_iteration["paths"]
    # edges 0->1->2->3: iteration 0 holds the edges, and the longest path (0,3) first appears later
    assert ZSet([((0, 1), 1), ((1, 2), 1), ((2, 3), 1)]) == paths[0]
    first = min(k for k, v in paths.items() if v.weight((0, 3)))
    assert first == 2
    assert max(paths) >= first + 1  # it settles one iteration after nothing changes
