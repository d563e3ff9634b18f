"""Verification: a run's incremental outputs against a from-scratch recomputation.

Both sides are view contents as JSON records ({"data": row, "weight": w}): the
integral of the incremental output deltas, and the views recomputed from the integrated
inputs. `differences` names, per view, the rows the incremental side lacks (`missing`:
the recomputation has them, with the weight it lacks) and the rows it has too many of
(`extra`). Doubles compare to 12 significant digits (Spark and Python may sum them in
another order); everything else exactly.

`Verifier` does it at every tick (`python -m dbsp run --verify`): the reference
evaluator (dbsp/reference.py: each tick's queries on whole integrated values, nothing
incremental) runs beside the engine on the same changes.
"""
from __future__ import annotations

import json

from .plan import Plan
from .types import Schema, row_to_dict
from .zset import ZSet


def _canonical(value):
    if isinstance(value, float):
        return float(f"{value:.12g}") + 0.0  # + 0.0: -0.0 and 0.0 are one value
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def row_key(data: dict) -> str:
    return json.dumps({k: _canonical(v) for k, v in data.items()}, sort_keys=True)


def integrate(contents: dict[str, tuple[dict, int]], records, key=row_key) -> None:
    """Add JSON records to view contents (key(row) -> (row, weight)); zero weights vanish."""
    for r in records:
        k = key(r["data"])
        data, weight = contents.get(k, (r["data"], 0))
        weight += r["weight"]
        if weight:
            contents[k] = (data, weight)
        else:
            contents.pop(k, None)


def zset_json(z: ZSet, schema: Schema) -> list[dict]:
    return [{"data": row_to_dict(row, schema), "weight": w} for row, w in z]


def view_differences(expected: list[dict], actual: list[dict]) -> dict | None:
    """{"missing": [...], "extra": [...]} of one view, or None when they are equal."""
    want, have = {}, {}
    integrate(want, expected)
    integrate(have, actual)
    missing, extra = [], []
    for key in sorted(set(want) | set(have)):
        w = want.get(key, (None, 0))[1] - have.get(key, (None, 0))[1]
        data = (want.get(key) or have.get(key))[0]
        if w > 0:
            missing.append({"data": data, "weight": w})
        elif w < 0:
            extra.append({"data": data, "weight": -w})
    return {"missing": missing, "extra": extra} if missing or extra else None


def differences(expected: dict[str, list[dict]], actual: dict[str, list[dict]]) -> dict[str, dict]:
    """view -> its differing rows, for every view that differs ({} when all agree)."""
    out = {}
    for view in sorted(set(expected) | set(actual)):
        found = view_differences(expected.get(view, []), actual.get(view, []))
        if found:
            out[view] = found
    return out


class Verifier:
    """The reference evaluator beside an incremental runtime, tick by tick: `step` takes
    the tick's input changes and the incremental runtime's output deltas (JSON) and
    returns the views whose integrated contents differ."""

    def __init__(self, plan: Plan):
        from .reference import ReferenceRuntime

        self.plan = plan
        self.reference = ReferenceRuntime(plan)
        self.expected: dict[str, dict] = {view: {} for view in plan.views}
        self.actual: dict[str, dict] = {view: {} for view in plan.views}

    def step(self, changes: dict[str, ZSet], outputs: dict[str, list[dict]]) -> dict[str, dict]:
        result = self.reference.step(changes)
        for view, schema in self.plan.views.items():
            integrate(self.expected[view], zset_json(result.outputs[view], schema))
            integrate(self.actual[view], outputs.get(view, []))
        return differences({v: _records(c) for v, c in self.expected.items()},
                           {v: _records(c) for v, c in self.actual.items()})


def _records(contents: dict[str, tuple[dict, int]]) -> list[dict]:
    return [{"data": d, "weight": w} for d, w in contents.values()]
