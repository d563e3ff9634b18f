"""Explain a row: why it is in a node (a view, or any node, inside fixed points too) at a
tick, and why it changed then, walked back through the circuit to the input rows.

`explain(plan, changes, tick, node, row)` recomputes the values it needs with the
reference evaluator (dbsp/capture.py: the oracle, sharing no code with the engine) and
returns an `Explanation`: `contents`, the derivation of the row's weight at the tick
(None when the row is not there), and `change`, the derivation of its change at the
tick (None when it did not change), whose input steps are the tick's input changes that
caused it. The rules per operator family: linear.py (filter, map, flat_map, union,
difference), joins.py (join, semijoin, antijoin, left_join, asof_join), grouped.py (aggregate,
top_k), distinct.py, windows.py (event-time windows and their late rows), streams.py
(z⁻¹, I, D); walk.py goes through outputs, delays, imports and fixed points.

In a circuit with z⁻¹, I or D (run as drawn) a node's contents at a tick are the sum of
its stream values so far and its change at the tick is its value then: `contents` is
explained as that sum over ticks, `change` (and every step below) by the value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from ..plan import Plan
from ..zset import ZSet
from .scopes import scopes
from .steps import Group, Step, Use, step_json
from .values import Values
from .walk import Walk

MODES = ("contents", "change")


class NotExplainable(ValueError):
    """The circuit, node or iteration cannot be explained (a clear message; a 400)."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field


class RowNotFound(LookupError):
    """The row is not in the node at the tick and did not change at it."""


@dataclass
class Explanation:
    node: str
    tick: int
    row: tuple
    iteration: tuple
    weight: int  # at the tick
    before: int  # at the tick before
    contents: Step | None
    change: Step | None
    truncated: bool
    causes: list = field(default_factory=list)  # (input step, before, after): the tick's input changes the change uses

    def inputs(self, mode: str) -> list[Step]:
        """The input rows the derivation of `mode` reaches (change: the tick's input changes it uses)."""
        root = self.contents if mode == "contents" else self.change
        return [s for s in root.walk() if s.is_input] if root is not None else []


def explain(plan: Plan, changes: Sequence[dict[str, ZSet]], tick: int, node: str, row: tuple, *,
            iteration=None, mode: str | None = None, page: int = 0, page_size: int = 20, max_steps: int = 200,
            values: Values | None = None) -> Explanation:
    """Explain `row` of value `node` (a view, a node id, or an export id) at `tick`.
    `iteration` (an int, or a tuple for nested fixed points) for a node inside a fixed
    point; `mode` "contents" or "change" for one of the two (default: each that applies);
    `page` pages the groups of the row's own step."""
    where = scopes(plan)
    if node not in where:
        raise NotExplainable(f"no node {node!r} in this circuit", "node")
    path = () if iteration is None else (iteration if isinstance(iteration, tuple) else (iteration,))
    depth = where[node].depth
    if where[node].op.kind == "fixedpoint":
        raise NotExplainable(f"node {node!r} is a fixed point: explain a row of one of its exports "
                             f"({', '.join(where[node].op.outputs)})", "node")
    if len(path) != depth and not (where[node].op.kind == "export" and len(path) == depth - 1):
        raise NotExplainable(f"node {node!r} is {'inside ' + str(depth) + ' fixed point(s)' if depth else 'outside fixed points'}: "
                             f"give {depth} iteration number(s), got {len(path)}", "iteration")
    if mode is not None and mode not in MODES:
        raise NotExplainable(f"mode must be one of {', '.join(MODES)}, got {mode!r}", "mode")
    values = values or Values(plan, changes)
    probe = Walk(plan, values, tick)
    if len(path) == depth:
        weight, before = probe.weights(node, path, row, "change")
    else:
        weight, before = probe._settled_weights(node, path, row, "change", tick)
    wanted = [m for m in MODES if mode in (None, m)]
    applies = {"contents": weight != 0, "change": weight != before}
    if not any(applies[m] for m in wanted):
        where_ = f"{node!r}" + (f" at iteration {path}" if path else "")
        if mode == "change":
            raise RowNotFound(f"the row did not change in {where_} at tick {tick} (its weight is {weight})")
        raise RowNotFound(f"the row is not in {where_} at tick {tick}"
                          + ("" if mode == "contents" else " and did not change at it"))
    trees, truncated, next_id = {}, False, 1
    for m in wanted:
        if not applies[m]:
            trees[m] = None
            continue
        walk = Walk(plan, values, tick, page=page, page_size=page_size, max_steps=max_steps, first_id=next_id)
        trees[m] = walk.step(node, path, row, m, root=True)
        truncated, next_id = truncated or walk.truncated, walk.next_id
    return Explanation(node, tick, row, path, weight, before, trees.get("contents"), trees.get("change"), truncated,
                       _causes(trees.get("change"), values, tick))


def _causes(root: Step | None, values: Values, tick: int) -> list[tuple[Step, int, int]]:
    """The tick's input changes a change's derivation reaches, with the input table's
    weights before and after: input steps in mode change, or (a circuit run as drawn) the
    input's value at the tick, which is the change pushed then."""
    out, seen = [], set()
    for s in (root.walk() if root is not None else ()):
        if not s.is_input or (s.node, s.row) in seen:
            continue
        if s.mode == "change" and s.tick == tick:
            out.append((s, s.before, s.after))
        elif s.mode == "value" and s.tick == tick:
            out.append((s, values.value(s.node, tick - 1).weight(s.row), values.value(s.node, tick).weight(s.row)))
        else:
            continue
        seen.add((s.node, s.row))
    return out


__all__ = ["Explanation", "Group", "NotExplainable", "RowNotFound", "Step", "Use", "explain", "step_json", "Values"]
