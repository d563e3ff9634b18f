"""Run a compiled document on the reference backend: after each tick, each view's rows."""
import json
from collections import Counter

from dbsp import compile_plan
from dbsp.reference import ReferenceRuntime
from dbsp.runtime import changes_from_records


def view_contents(document: dict, ticks: list[dict]) -> list[dict[str, set]]:
    """Per tick, {view: set of rows as sorted (column, value) tuples} integrated so far."""
    plan = compile_plan(document)
    runtime = ReferenceRuntime(plan)
    totals: dict[str, Counter] = {}
    out = []
    for tick in ticks:
        changes = {n: changes_from_records(r, plan.inputs[n], plan.primary_key(n)) for n, r in tick.items()}
        for view, changed in runtime.step(changes).outputs_json().items():
            counter = totals.setdefault(view, Counter())
            for change in changed:
                counter[json.dumps(change["data"], sort_keys=True)] += change["weight"]
        out.append({v: {tuple(sorted(json.loads(k).items())) for k, w in c.items() if w > 0} for v, c in totals.items()})
    return out
