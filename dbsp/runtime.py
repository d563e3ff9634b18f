"""The tick loop both backends share, and what a tick produces.

A run starts from a plan; `step({input: change})` advances one tick t and returns the
output deltas per view (consolidated Z-sets), the frontier per node (the last complete
outer tick; later, inner iterations of fixed points) and stats per node.
Linear operators whose inputs are all empty are skipped: no work, no Spark job.
"""
from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from .plan import Plan
from .types import Schema, coerce_row, raise_if, row_to_dict
from .zset import ZSet


@dataclass
class TickResult:
    tick: int
    outputs: dict[str, ZSet]  # view -> consolidated change at this tick
    schemas: dict[str, Schema]
    frontier: dict[str, dict] = field(default_factory=dict)
    stats: dict[str, dict] = field(default_factory=dict)
    ms: float = 0.0

    def outputs_json(self) -> dict[str, list[dict]]:
        """view -> [{"data": {...}, "weight": w}], in a stable order."""
        out = {}
        for view, z in self.outputs.items():
            rows = [{"data": row_to_dict(r, self.schemas[view]), "weight": w} for r, w in z]
            rows.sort(key=lambda x: json.dumps(x, sort_keys=True, default=str))
            out[view] = rows
        return out


def changes_from_records(records: list, schema: Schema) -> ZSet:
    """Change records (Feldera's JSON formats) -> a Z-set; DataInvalid names each bad row.

    Accepted per record: {"insert": {...}}, {"delete": {...}}, {"weight": w, "data": {...}}.
    """
    problems, items = [], []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            problems.append(_row_problem(i, "expected an object like {\"insert\": {...}}"))
            continue
        keys = set(rec)
        if keys == {"insert"}:
            data, weight = rec["insert"], 1
        elif keys == {"delete"}:
            data, weight = rec["delete"], -1
        elif keys == {"weight", "data"}:
            data, weight = rec["data"], rec["weight"]
            if isinstance(weight, bool) or not isinstance(weight, int) or weight == 0:
                problems.append(_row_problem(i, f"weight must be a nonzero integer, got {weight!r}", field="weight"))
                continue
        else:
            problems.append(_row_problem(i, f"expected one of {{\"insert\": row}}, {{\"delete\": row}}, {{\"weight\": w, \"data\": row}}; got keys {sorted(keys)}"))
            continue
        row, found = coerce_row(data, schema, i)
        problems.extend(found)
        if row is not None:
            items.append((row, weight))
    raise_if(problems)
    return ZSet(items)


def _row_problem(i, message, field=None):
    from .errors import Problem

    return Problem(f"row {i}: {message}", row=i, field=field)


class Runtime(ABC):
    """Evaluates a plan tick by tick; subclasses say how a node's change is computed."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.tick = -1

    @abstractmethod
    def from_zset(self, node_id: str, z: ZSet):
        """An input change in this backend's representation."""

    @abstractmethod
    def evaluate(self, node_id: str, delta: dict):
        """One node's output change given its inputs' changes (None = empty)."""

    @abstractmethod
    def collect(self, value) -> ZSet:
        """A backend value -> a consolidated ZSet (observing an output)."""

    def step(self, changes: dict[str, ZSet]) -> TickResult:
        unknown = set(changes) - set(self.plan.inputs)
        if unknown:
            raise KeyError(f"no input named {', '.join(sorted(unknown))}")
        started = time.perf_counter()
        self.tick += 1
        values: dict[str, object] = {}
        stats: dict[str, dict] = {}
        for node_id in self.plan.order:
            op = self.plan.operators[node_id]
            t0 = time.perf_counter()
            if op.kind == "input":
                z = changes.get(node_id)
                delta = {"in": self.from_zset(node_id, z) if z else None}
                stats[node_id] = {"rows_in": len(z) if z else 0}
            else:
                delta = {port: values.get(src) for port, src in self.plan.sources(node_id).items()}
                stats[node_id] = {}
            if op.linear and all(v is None for v in delta.values()):
                values[node_id] = None
            else:
                values[node_id] = self.evaluate(node_id, delta)
            stats[node_id]["ms"] = round((time.perf_counter() - t0) * 1000, 3)
        outputs = {}
        for view in self.plan.views:
            t0 = time.perf_counter()
            outputs[view] = self.collect(values[view]) if values[view] is not None else ZSet()
            stats[view]["rows_out"] = len(outputs[view])
            stats[view]["ms"] += round((time.perf_counter() - t0) * 1000, 3)
        frontier = {node_id: {"tick": self.tick} for node_id in self.plan.order}
        return TickResult(
            tick=self.tick,
            outputs=outputs,
            schemas=dict(self.plan.views),
            frontier=frontier,
            stats=stats,
            ms=round((time.perf_counter() - started) * 1000, 3),
        )

    def close(self) -> None:
        """Release backend state."""
