"""What an explanation is made of: steps (a row at a node), the groups of input rows that
produced it, and each input row's own step.

A `Step` is one row of one node at one tick (and, inside a fixed point, one iteration):
in mode "contents" why the row is in the node's contents (weight `after`), in mode
"change" why its weight changed at the tick (from `before` to `after`), in mode "value"
(a circuit with z⁻¹, I or D, run as drawn) why it is in the node's stream value at the
tick (weight `after`). Its `groups`
are what the operator made it from: for a join each matching pair, for an aggregate the
group's rows, for a union the side(s) it came from... Each `Use` is one input row (its
weights) and the step that explains it in turn (`step`), a reference to a step shown
already (`ref`), or nothing when the explanation's budget ran out (`followed` False).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..types import row_to_dict


@dataclass
class Use:
    port: str
    row: tuple
    after: int  # the input row's weight at the tick (contents), or after the change
    before: int | None = None  # change mode: its weight before the tick
    node: str = ""  # the value it is a row of (set by the walk)
    iteration: tuple = ()
    tick: int | None = None  # the tick it is a row of, when not the step's (z⁻¹, I, D, a late row)
    step: "Step | None" = None
    ref: int | None = None
    followed: bool = True

    @property
    def changed(self) -> bool:
        return self.before is not None and self.before != self.after


@dataclass
class Group:
    label: str
    uses: list[Use]
    total: int = 0  # uses in the whole group (the page shows `uses`)
    offset: int = 0
    dropped: bool = False  # rows the operator dropped (a window's late rows): not part of the row


@dataclass
class Step:
    id: int
    node: str
    kind: str
    row: tuple
    mode: str  # "contents" | "change" | "value" (a circuit run as drawn: its stream value at `tick`)
    after: int
    before: int | None = None
    tick: int = 0
    iteration: tuple = ()  # () outside fixed points; (k,) inside one; (k1, k2) nested
    first_iteration: bool = False  # inside a fixed point: the row has had this weight since `iteration`
    fixedpoint: str | None = None  # the fixed point node it is inside (or, kind "fixedpoint", whose result it is)
    note: str = ""
    groups: list[Group] = field(default_factory=list)

    @property
    def is_input(self) -> bool:
        return self.kind == "input"

    def walk(self):
        """This step and every step below it, once each."""
        yield self
        for group in self.groups:
            for use in group.uses:
                if use.step is not None:
                    yield from use.step.walk()


def _iteration_json(path: tuple):
    if not path:
        return None
    return path[0] if len(path) == 1 else list(path)


def step_json(step: Step, schema_of, extra=None) -> dict:
    """A step as JSON: rows as column -> value objects (`schema_of(node)`); `extra(step)`
    adds fields to a step (the pushes of an input row)."""
    body = {
        "id": step.id, "node": step.node, "kind": step.kind, "mode": step.mode, "tick": step.tick,
        "iteration": _iteration_json(step.iteration), "first_iteration": step.first_iteration,
        "fixedpoint": step.fixedpoint,
        "row": row_to_dict(step.row, schema_of(step.node)), "weight": step.after, "note": step.note,
    }
    if step.mode == "change":
        body["before"], body["after"] = step.before, step.after
    body["groups"] = [{
        "label": g.label, "total": g.total, "offset": g.offset,
        "uses": [_use_json(u, schema_of, extra) for u in g.uses],
    } | ({"dropped": True} if g.dropped else {}) for g in step.groups]
    if extra is not None:
        body |= extra(step)
    return body


def _use_json(use: Use, schema_of, extra) -> dict:
    body = {"port": use.port, "node": use.node, "iteration": _iteration_json(use.iteration),
            "row": row_to_dict(use.row, schema_of(use.node)), "weight": use.after, "followed": use.followed}
    if use.tick is not None:
        body["tick"] = use.tick
    if use.before is not None:
        body["before"], body["after"] = use.before, use.after
    if use.step is not None:
        body["step"] = step_json(use.step, schema_of, extra)
    elif use.ref is not None:
        body["ref"] = use.ref
    return body
