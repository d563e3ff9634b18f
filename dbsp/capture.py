"""Every node's data at one tick, recomputed from the input log by the reference
evaluator: what the node inspector shows and what explain walks back through.

For each node of the plan (and each node inside a fixed point) at tick t:
- `delta`: the node's change at t, Δ_t;
- `integral`: its contents through t, I(Δ)_t = Σ_{s≤t} Δ_s;
- `iterations` (inner nodes of a fixed point): its value at each inner iteration of
  tick t (an int, or a tuple (outer, inner, …) for nested fixed points).

How: the reference evaluator (dbsp/reference.py) shares no code with the incremental
engine, so what the inspector shows is the oracle's answer, not the engine's own
bookkeeping. A relational circuit runs there as D(Q(I(in))): every node's value is the
query over the whole input tables, that is the node's integral. When tick boundaries do
not matter (`Plan.whole_tables`), two one-step evaluations over the integrated inputs
through t−1 and through t give every integral, and the deltas are their differences. A
circuit with DBSP primitives or event-time windows runs as drawn, tick by tick from tick
0: run as drawn, a node's value is its stream value at the tick (the delta),
integrated here; with event-time windows (order matters, so no one-step shortcut), the
reference still runs D(Q(I(in))) and a node's value is its contents.
Inner nodes of a fixed point: `integral` is the value it settles at (the last
iteration), `delta` its difference from the previous tick's.

`keep` (node ids outside fixed points): those nodes also get `history`, their delta at
every tick 0..t (what explain needs to look back: the changes an integral sums, a
delay's previous tick, the order rows reached a window in). Keeping history always
replays tick by tick (one step per tick, instead of two for `whole_tables`), so it is
asked for only where the past matters.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from .plan import Plan
from .reference import ReferenceRuntime
from .zset import ZSet


@dataclass
class NodeAt:
    delta: ZSet
    integral: ZSet
    iterations: dict = field(default_factory=dict)  # iteration -> value (inner nodes of fixed points)
    history: list = field(default_factory=list)  # kept nodes: the delta at each tick 0..t


def _sum(changes: Sequence[dict[str, ZSet]], upto: int) -> dict[str, ZSet]:
    total: dict[str, ZSet] = {}
    for tick_changes in changes[: upto + 1]:
        for name, z in tick_changes.items():
            total[name] = total.get(name, ZSet()) + z
    return {name: z for name, z in total.items() if z}


class _Recorder:
    """observe(...) for Runtime.step: the last value of each node, and inner iterations."""

    def __init__(self, runtime: ReferenceRuntime):
        self.runtime = runtime
        self.values: dict[str, ZSet] = {}
        self.iterations: dict[str, dict] = {}

    def __call__(self, node_id, value, iteration=None):
        z = self.runtime.collect(value)
        if iteration is not None:
            self.iterations.setdefault(node_id, {})[iteration] = z
        self.values[node_id] = z  # inner nodes: the last iteration's value wins


def capture(plan: Plan, changes: Sequence[dict[str, ZSet]], tick: int,
            progress: Callable[[float], None] | None = None, keep: Iterable[str] = ()) -> dict[str, NodeAt]:
    """node id -> NodeAt at `tick`, given each tick's input changes (`changes[s]`: input
    name -> ZSet applied at tick s; missing ticks are empty). Node ids are those of the
    plan, the export ids of fixed points and the ids of nodes inside fixed points.
    `keep`: node ids whose delta at every tick 0..t is kept in `history`."""
    if tick < 0:
        raise ValueError("tick must be >= 0")
    changes = list(changes) + [{}] * max(0, tick + 1 - len(changes))
    report = progress or (lambda fraction: None)
    keep = set(keep)
    if plan.whole_tables and not keep:
        before = _Recorder(ReferenceRuntime(plan))
        if tick > 0:
            before.runtime.step(_sum(changes, tick - 1), observe=before)
        report(0.5)
        now = _Recorder(ReferenceRuntime(plan))
        now.runtime.step(_sum(changes, tick), observe=now)
        report(1.0)
        result = {}
        for node_id, integral in now.values.items():
            # (an output node differentiates, D: from a fresh evaluator its one change is the whole view)
            previous = before.values.get(node_id, ZSet())
            result[node_id] = NodeAt(delta=integral - previous, integral=integral,
                                     iterations=now.iterations.get(node_id, {}))
        return result
    # Tick by tick. Run as drawn (DBSP primitives), a node's value is its stream value
    # at the tick: the delta, integrated here. Otherwise (event-time windows) the
    # reference runs D(Q(I(in))): a node's value is its contents, except an output
    # node's, which is the change (D).
    whole_values = not plan.literal
    runtime = ReferenceRuntime(plan)
    integrals: dict[str, ZSet] = {}
    previous: dict[str, ZSet] = {}
    recorder = _Recorder(runtime)
    history: dict[str, list[ZSet]] = {node_id: [] for node_id in keep}
    for t in range(tick + 1):
        if t == tick:
            previous = dict(recorder.values)
        recorder = _Recorder(runtime)
        runtime.step({name: z for name, z in changes[t].items() if z}, observe=recorder)
        for node_id, value in recorder.values.items():
            if node_id in recorder.iterations:  # inner node: contents are where it settles
                continue
            before = integrals.get(node_id, ZSet())
            if whole_values and not _is_output(plan, node_id):
                integrals[node_id] = value
            else:
                integrals[node_id] = before + value
            if node_id in history:
                history[node_id].append(integrals[node_id] - before if whole_values else value)
        for node_id, kept in history.items():
            if len(kept) < t + 1:  # not observed at this tick (no such node outside fixed points)
                kept.append(ZSet())
        report((t + 1) / (tick + 1))
    result = {}
    for node_id, value in recorder.values.items():
        if node_id in recorder.iterations:
            delta = value - previous.get(node_id, ZSet()) if whole_values else value
            result[node_id] = NodeAt(delta=delta, integral=value, iterations=recorder.iterations[node_id])
        elif whole_values and not _is_output(plan, node_id):
            result[node_id] = NodeAt(delta=value - previous.get(node_id, ZSet()), integral=value)
        else:
            result[node_id] = NodeAt(delta=value, integral=integrals.get(node_id, ZSet()))
        if node_id in history and node_id not in recorder.iterations:
            result[node_id].history = history[node_id]
    return result


def _is_output(plan: Plan, node_id: str) -> bool:
    op = plan.operators.get(node_id)
    return op is not None and op.kind == "output"
