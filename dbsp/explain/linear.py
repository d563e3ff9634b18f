"""Why a row comes out of a linear operator: the input rows that map to it.

filter (the row itself, when it passes), map (the rows whose image it is), flat_map
(the rows one of whose pieces it is), union (from a, from b), difference (a, and b
subtracted). Contents: the input rows present that produce it; change: those of them
whose weight changed at the tick (Δout = op(Δin))."""
from __future__ import annotations

from ..zset import ZSet
from .rows import rows_of, uses
from .steps import Group


def _images(op, x: tuple) -> ZSet:
    return op.query({"in": ZSet([(x, 1)])})


def why_filter(op, row, after, before):
    found = uses("in", [row], after["in"], before and before["in"])
    passes = op._python(row) is True
    label = f"passes {op.params.get('predicate')}" if passes else f"fails {op.params.get('predicate')}"
    return [Group(label, found if passes else [])]


def why_map(op, row, after, before):
    fns = op._python
    candidates = [x for x in rows_of(after["in"], before and before["in"]) if tuple(f(x) for f in fns) == row]
    return [Group("maps to it", uses("in", candidates, after["in"], before and before["in"]))]


def why_flat_map(op, row, after, before):
    candidates = [x for x in rows_of(after["in"], before and before["in"]) if _images(op, x).weight(row)]
    return [Group(f"one of the pieces of {op.column!r}", uses("in", candidates, after["in"], before and before["in"]))]


def why_union(op, row, after, before):
    return [Group(f"from {port}", uses(port, [row], after[port], before and before[port])) for port in ("a", "b")
            if uses(port, [row], after[port], before and before[port])]


def why_difference(op, row, after, before):
    groups = []
    for port, label in (("a", "from a"), ("b", "subtracted (from b)")):
        found = uses(port, [row], after[port], before and before[port])
        if found:
            groups.append(Group(label, found))
    return groups


RULES = {"filter": why_filter, "map": why_map, "flat_map": why_flat_map, "union": why_union,
         "difference": why_difference}
